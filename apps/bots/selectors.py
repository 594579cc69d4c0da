"""Reads of bots for the people who make and administer them."""

from apps.core.errors import JsonableError, OrganizationOwnerRequiredError
from apps.groups.selectors import has_realm_permission
from apps.users.models import BotType, User

# The kinds of bots people may make (embedded bots run inside Zulip's server: Parley has none).
CREATABLE_BOT_TYPES = (BotType.GENERIC, BotType.INCOMING_WEBHOOK, BotType.OUTGOING_WEBHOOK)


def access_bot_by_id(user: User, bot_id: int) -> User:
    """The bot `bot_id`, deactivated or not, if `user` administers it (its owner, or an administrator
    of its organization; an owner for a bot that may create users), as Zulip's access_bot_by_id:
    "No such bot" for anyone else's id, a person's, the server's own bots' or another
    organization's; "Insufficient permission" for a bot of someone else."""
    bot = (
        User.objects.filter(realm_id=user.realm_id, id=bot_id, bot_type__isnull=False, bot_owner__isnull=False)
        .select_related("realm", "bot_owner", "default_sending_stream", "default_events_register_stream")
        .first()
    )
    if bot is None:
        raise JsonableError("No such bot")
    if bot.bot_owner_id != user.id and not user.is_admin:
        raise JsonableError("Insufficient permission")
    if bot.can_create_users and not user.is_owner:
        raise OrganizationOwnerRequiredError()
    return bot


def owned_active_bots(user: User) -> list[User]:
    """GET /bots: the user's own active bots, oldest first (administrators' too: only their own)."""
    bots = User.objects.filter(bot_owner=user, is_active=True, bot_type__isnull=False)
    return list(bots.select_related("default_sending_stream", "default_events_register_stream").order_by("id"))


def allowed_bot_types(user: User) -> list[int]:
    """The kinds of bots `user` may make: every kind in can_create_bots_group; incoming webhook bots
    (which only post) in can_create_write_only_bots_group; none otherwise."""
    if has_realm_permission(user, "can_create_bots_group"):
        return list(CREATABLE_BOT_TYPES)
    if has_realm_permission(user, "can_create_write_only_bots_group"):
        return [BotType.INCOMING_WEBHOOK]
    return []
