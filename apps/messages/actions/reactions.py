"""Emoji reactions to messages (POST and DELETE /messages/{id}/reactions), with Zulip's rules: a
reaction names an emoji by `emoji_code` and `reaction_type` (found from `emoji_name` when the code
is left out), one per user, message and emoji; everyone who can see the message is told."""

from django.db import IntegrityError, transaction

from apps.core.errors import ErrorCode, JsonableError
from apps.events.publish import send_event_on_commit
from apps.messages.access import users_told_of
from apps.messages.emoji import ZULIP_EXTRA_EMOJI, is_unicode_emoji_code, unicode_emoji_code
from apps.messages.errors import InvalidMessageError
from apps.messages.hooks import custom_emoji
from apps.messages.models import Message, Reaction
from apps.messages.serializers import reaction_event_user
from apps.users.access import split_by_access, unknown_user_brief
from apps.users.models import User


def custom_emoji_of(realm_id: int | None) -> dict[str, dict]:
    return {} if realm_id is None else custom_emoji.call_merged(realm_id)


def emoji_by_name(name: str, realm_id: int | None = None) -> tuple[str, str]:
    """(emoji_code, reaction_type) of the emoji with this name, as Zulip's get_emoji_data: the
    organization's active custom emoji first (none without `realm_id`), then Zulip's extra emoji,
    then Unicode's."""
    for code, emoji in custom_emoji_of(realm_id).items():
        if emoji["name"] == name and not emoji["deactivated"]:
            return code, Reaction.Type.REALM_EMOJI
    if name == ZULIP_EXTRA_EMOJI:
        return ZULIP_EXTRA_EMOJI, Reaction.Type.ZULIP_EXTRA_EMOJI
    code = unicode_emoji_code(name)
    if code is None:
        raise JsonableError(f"Emoji '{name}' does not exist")
    return code, Reaction.Type.UNICODE_EMOJI


def check_emoji(name: str, code: str, reaction_type: str, realm_id: int | None = None) -> None:
    """Zulip's check_emoji_request: the code names an emoji of the type (an active custom emoji of the
    organization of `realm_id`, for realm_emoji), and the name is its."""
    if reaction_type == Reaction.Type.REALM_EMOJI:
        emoji = custom_emoji_of(realm_id).get(code)
        if emoji is None:
            raise JsonableError("Invalid custom emoji.")
        if emoji["name"] != name:
            raise JsonableError("Invalid custom emoji name.")
        if emoji["deactivated"]:
            raise JsonableError("This custom emoji has been deactivated.")
        return
    if reaction_type == Reaction.Type.ZULIP_EXTRA_EMOJI:
        if code != ZULIP_EXTRA_EMOJI:
            raise JsonableError("Invalid emoji code.")
        if name != code:
            raise JsonableError("Invalid emoji name.")
        return
    if reaction_type != Reaction.Type.UNICODE_EMOJI:
        raise JsonableError("Invalid emoji type.")
    if not is_unicode_emoji_code(code):
        raise JsonableError("Invalid emoji code.")
    if unicode_emoji_code(name) != code:
        raise JsonableError("Invalid emoji name.")


def check_add_reaction(
    message: Message, *, emoji_name: str, emoji_code: str | None, reaction_type: str | None, acting_user: User
) -> None:
    """POST /messages/{id}/reactions, on a message `acting_user` can see. An emoji someone already
    reacted with (its code and type) is a vote for that reaction, as in Zulip: it takes that
    reaction's name, and is not checked again (a custom emoji deactivated since still takes votes)."""
    if emoji_code is None:
        emoji_code, found_type = emoji_by_name(emoji_name, message.realm_id)
        reaction_type = reaction_type or found_type
    reaction_type = reaction_type or Reaction.Type.UNICODE_EMOJI
    same = Reaction.objects.filter(message=message, emoji_code=emoji_code, reaction_type=reaction_type)
    voted_for = same.order_by("id").values_list("emoji_name", flat=True).first()
    if voted_for is None:
        check_emoji(emoji_name, emoji_code, reaction_type, message.realm_id)
    reaction = Reaction(
        user=acting_user,
        message=message,
        emoji_name=voted_for or emoji_name,
        emoji_code=emoji_code,
        reaction_type=reaction_type,
    )
    do_add_reaction(reaction, acting_user=acting_user)


@transaction.atomic
def do_add_reaction(reaction: Reaction, *, acting_user: User) -> None:
    """Store a checked reaction; "Reaction already exists." when the user has this emoji on the
    message (another request's too: the unique constraint, in a savepoint); "Invalid message(s)"
    when another request deleted the message since it was read (its row is locked first, so that a
    deletion waits for the reaction, or the reaction sees it gone).

    Emits: reaction/add to everyone who can see the message (users_told_of).
    """
    if not Message.objects.select_for_update().filter(id=reaction.message_id).exists():
        raise InvalidMessageError()
    try:
        with transaction.atomic():
            reaction.save(force_insert=True)
    except IntegrityError:
        raise JsonableError("Reaction already exists.", code=ErrorCode.REACTION_ALREADY_EXISTS) from None
    _notify(reaction, "add")


def check_remove_reaction(
    message: Message,
    *,
    emoji_name: str | None,
    emoji_code: str | None,
    reaction_type: str | None,
    acting_user: User,
) -> None:
    """DELETE /messages/{id}/reactions: the user's reaction with this emoji (named by its code and
    type, or else by its name)."""
    if emoji_code is None:
        if emoji_name is None:
            raise JsonableError("At least one of the following arguments must be present: emoji_name, emoji_code")
        emoji_code, found_type = emoji_by_name(emoji_name, message.realm_id)
        reaction_type = reaction_type or found_type
    do_remove_reaction(
        message,
        emoji_code=emoji_code,
        reaction_type=reaction_type or Reaction.Type.UNICODE_EMOJI,
        acting_user=acting_user,
    )


@transaction.atomic
def do_remove_reaction(message: Message, *, emoji_code: str, reaction_type: str, acting_user: User) -> None:
    """Delete the user's reaction; "Reaction doesn't exist." when there is none (checked before
    anything is written).

    Emits: reaction/remove to everyone who can see the message.
    """
    reaction = (
        Reaction.objects.select_for_update()
        .filter(user=acting_user, message=message, emoji_code=emoji_code, reaction_type=reaction_type)
        .first()
    )
    if reaction is None:
        raise JsonableError("Reaction doesn't exist.", code=ErrorCode.REACTION_DOES_NOT_EXIST)
    reaction.delete()
    reaction.user, reaction.message = acting_user, message
    _notify(reaction, "remove")


def _notify(reaction: Reaction, op: str) -> None:
    message, user = reaction.message, reaction.user
    event = {
        "type": "reaction",
        "op": op,
        "message_id": message.id,
        "emoji_name": reaction.emoji_name,
        "emoji_code": reaction.emoji_code,
        "reaction_type": reaction.reaction_type,
        "user_id": user.id,
        "user": reaction_event_user(user),  # deprecated in Zulip, still sent
    }
    # Guests who may not see the reactor (apps/users/access.py) are told of an unknown user's.
    seeing, not_seeing = split_by_access(user, users_told_of(message.stream, [message.id]) | {user.id})
    send_event_on_commit(message.realm_id, event, seeing)
    if not_seeing:
        unknown = {**event, "user": unknown_user_brief(message.realm, user.id)}
        send_event_on_commit(message.realm_id, unknown, not_seeing)
