"""Deactivating and reactivating users (a user's bots go with them), and the rule that an
organization always keeps an active owner."""

from django.db import transaction

from apps.core.errors import JsonableError, OrganizationOwnerRequiredError
from apps.events.publish import Everyone, delete_queues_on_commit, forget_credentials_on_commit, send_event_on_commit
from apps.realms.audit import audit
from apps.realms.models import AuditLogEventType
from apps.realms.selectors import lock_realm
from apps.users.access import guests_without_access
from apps.users.actions.bot_owner import do_change_bot_owner
from apps.users.actions.notify import send_person_update
from apps.users.errors import CannotDeactivateLastUserError, LastOwnerDeactivationError
from apps.users.hooks import bot_reactivating, user_reactivated, users_deactivated
from apps.users.models import User
from apps.users.selectors import active_bots_owned_by, active_name_in_use, is_last_owner


def check_keeps_an_owner(user: User, error: type[JsonableError]) -> None:
    """Refuse with `error` a change that would leave the organization without an active owner.

    Locks the organization's row (call inside the change's transaction, in a savepoint of its
    own: it raises) so that two owners demoting or deactivating each other at the same moment
    cannot both pass.
    """
    lock_realm(user.realm_id)
    if is_last_owner(user):
        raise error()


def check_deactivate_user(target: User, *, acting_user: User) -> list[User]:
    """Deactivate `target` for an administrator: owners only by owners; never the last owner."""
    if target.is_owner and not acting_user.is_owner:
        raise OrganizationOwnerRequiredError()
    return do_deactivate_user(target, acting_user=acting_user)


@transaction.atomic
def check_deactivate_own_user(user: User) -> list[User]:
    """DELETE /users/me: the user leaves the organization (their bots with them), as in Zulip: never
    its only user nor its only owner (CANNOT_DEACTIVATE_LAST_USER, the organization's row locked)."""
    lock_realm(user.realm_id)
    others = User.objects.filter(realm_id=user.realm_id, is_active=True, bot_type__isnull=True).exclude(id=user.id)
    if not others.exists():
        raise CannotDeactivateLastUserError(is_last_owner=False)
    check_keeps_an_owner(user, CannotDeactivateLastUserError)
    return do_deactivate_user(user, acting_user=user)


@transaction.atomic
def do_deactivate_user(user: User, *, acting_user: User | None) -> list[User]:
    """Deactivate the user and, first, every active bot they own. Returns all users deactivated.

    Raises for the organization's only owner, and "User is deactivated" when another request
    deactivated them meanwhile (the organization's row, locked first, makes deactivations take
    turns). Audit: USER_DEACTIVATED for each. Emits:
    realm_user/update {is_active: false} for each (no realm_bot/update: Zulip sends none since
    feature level 474, bot objects having no is_active), then what the users_deactivated hooks send
    (user_group/update for group settings whose anonymous groups listed them,
    subscription/peer_remove for their channels), to the others. Group memberships are kept (reads
    ignore deactivated users); clients drop the user from groups by themselves. The deactivated
    users' event queues are deleted after the commit.
    """
    check_keeps_an_owner(user, LastOwnerDeactivationError)
    if not User.objects.filter(id=user.id, is_active=True).exists():
        raise JsonableError("User is deactivated")
    deactivated = [*active_bots_owned_by(user), user]
    # Read while they are active: the guests who may see the user (apps/users/access.py) are told.
    lacking = {each.id: guests_without_access(each) for each in deactivated}
    User.objects.filter(id__in=[u.id for u in deactivated]).update(is_active=False)
    forget_credentials_on_commit(user_ids=[u.id for u in deactivated])
    for each in deactivated:
        each.is_active = False
        audit(user.realm_id, AuditLogEventType.USER_DEACTIVATED, modified_user=each, acting_user=acting_user)
        send_event_on_commit(
            user.realm_id,
            {"type": "realm_user", "op": "update", "person": {"user_id": each.id, "is_active": False}},
            Everyone((*(u.id for u in deactivated), *lacking[each.id])),
        )
    users_deactivated.call(deactivated)
    delete_queues_on_commit(u.id for u in deactivated)  # after their events: registered first
    return deactivated


def check_reactivate_user(user: User, *, acting_user: User) -> None:
    """POST /users/{id}/reactivate: by an administrator, or a bot by its owner (Zulip's
    can_admin_user), who must still be allowed to make bots of its kind (bot_reactivating); a bot
    only while no active user has its name (Zulip's words)."""
    if not (acting_user.is_admin or (user.is_bot and user.bot_owner_id == acting_user.id)):
        raise JsonableError("Insufficient permission")
    if user.is_bot:
        bot_reactivating.call(user, acting_user)
    if user.is_bot and not user.is_active and active_name_in_use(user.realm_id, user.full_name, exclude=user):
        raise JsonableError(
            f'There is already an active bot named "{user.full_name}" in this organization. To reactivate this '
            "bot, you must rename or deactivate the other one first."
        )
    do_reactivate_user(user, acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_reactivate_user(user: User, *, acting_user: User | None) -> None:
    """Reactivate the user (alone: their bots stay as they are); reactivating an active user
    changes nothing (as in Zulip).

    Audit: USER_REACTIVATED. Emits: realm_user/update {is_active: true} (for a bot too, as Zulip
    since feature level 474: no realm_bot/update), then what the
    user_reactivated hooks send (user_group/add_members for the user's groups, user_group/update
    for settings that list the user again, subscription/peer_add for their channels). A bot whose
    owner is deactivated becomes the acting person's (as Zulip's): see do_change_bot_owner.
    Reactivations take turns: the update waits for another's row lock, then finds the user active
    and changes nothing (the hostile-input QA pass: 20 at once wrote 6 audit rows, each with events).
    """
    if user.is_active or not User.objects.filter(id=user.id, is_active=False).update(is_active=True):
        return
    user.is_active = True
    audit(user.realm_id, AuditLogEventType.USER_REACTIVATED, modified_user=user, acting_user=acting_user)
    send_person_update(user, {"is_active": True})
    user_reactivated.call(user)
    owner = user.bot_owner if user.bot_owner_id is not None else None
    if owner is not None and not owner.is_active and acting_user is not None and not acting_user.is_bot:
        do_change_bot_owner(user, acting_user, acting_user=acting_user)
