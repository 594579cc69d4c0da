"""Muted users: the people whose messages arrive read for a user (Zulip's muted users)."""

from django.db import transaction

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.messages.actions.acting import check_acting_for
from apps.messages.actions.flags import do_mark_messages_read
from apps.messages.models import MutedUser
from apps.messages.selectors import muted_users_of
from apps.users.models import User


def _send_muted_users(user: User) -> None:
    """Emits: muted_users {muted_users: [{id, timestamp}]} (the whole list) to the user."""
    send_event_on_commit(user.realm_id, {"type": "muted_users", "muted_users": muted_users_of(user)}, [user.id])


def check_mute_user(user: User, muted_user: User, *, acting_user: User | None) -> None:
    """POST /users/me/muted_users/{id}, for a user the view found ("No such user" otherwise):
    "Cannot mute self", then do_mute_user."""
    check_acting_for(user, acting_user)
    if muted_user.id == user.id:
        raise JsonableError("Cannot mute self")
    do_mute_user(user, muted_user, acting_user=acting_user)


@transaction.atomic
def do_mute_user(user: User, muted_user: User, *, acting_user: User | None) -> None:
    """Mute (Zulip's state table): "User already muted" if they are, also when a concurrent
    request muted them first. The muted user's messages the user has not read become read.

    Emits: update_message_flags (those messages, if any), then muted_users.
    """
    check_acting_for(user, acting_user)
    _, created = MutedUser.objects.get_or_create(user=user, muted_user=muted_user)
    if not created:
        raise JsonableError("User already muted")
    do_mark_messages_read(user, sender=muted_user, acting_user=acting_user)
    _send_muted_users(user)


@transaction.atomic
def do_unmute_user(user: User, muted_user: User, *, acting_user: User | None) -> None:
    """DELETE /users/me/muted_users/{id}: "User is not muted" if they are not.

    Emits: muted_users.
    """
    check_acting_for(user, acting_user)
    deleted, _ = MutedUser.objects.filter(user=user, muted_user=muted_user).delete()
    if not deleted:
        raise JsonableError("User is not muted")
    _send_muted_users(user)
