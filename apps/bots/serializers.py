"""Request parameter classes of /bots, and the bot shapes its answers give (Zulip's)."""

from typing import Any

from apps.core.params import Id, Json, JsonOrText, Params
from apps.users.bots import BOT_DEFAULTS, bot_to_dict
from apps.users.models import BotType, User
from apps.users.selectors import api_email, avatar_url
from apps.users.serializers import RoleValue


class CreateBotParams(Params):
    full_name: str
    short_name: str
    bot_type: Json[int] = BotType.GENERIC
    # The service of an outgoing webhook bot: where it is reached (JSON-encoded, as Zulip's web app
    # sends it, or as it is), what it is called, and the format of its payload.
    payload_url: JsonOrText = ""
    service_name: str | None = None
    interface_type: Json[int] = 1
    default_sending_stream: str | None = None
    default_events_register_stream: str | None = None
    default_all_public_streams: Json[bool] | None = None


class UpdateBotParams(Params):
    full_name: str | None = None
    short_name: str | None = None
    role: Json[RoleValue] | None = None
    bot_owner_id: Json[Id] | None = None
    service_payload_url: JsonOrText | None = None
    service_interface: Json[int] | None = None
    # A channel's name; "" for none.
    default_sending_stream: str | None = None
    default_events_register_stream: str | None = None
    default_all_public_streams: Json[bool] | None = None


def bot_defaults_to_dict(bot: User) -> dict[str, Any]:
    shape = bot_to_dict(bot, services=[])
    return {name: shape[name] for name in BOT_DEFAULTS}


def owned_bot_to_dict(bot: User) -> dict[str, Any]:
    """An item of GET /bots: the bot as its owner sees it, API key included."""
    return {
        "user_id": bot.id,
        "username": api_email(bot),
        "full_name": bot.full_name,
        "api_key": bot.api_key,
        "avatar_url": avatar_url(bot),
        **bot_defaults_to_dict(bot),
    }
