"""Bots as the people who administer them see them (Zulip's realm_bots, feature level 474 on): the
bot objects of POST /register, who administers a bot, and the realm_bot events.

A bot is administered by its owner and by the organization's administrators; the server's own bots
(the Welcome Bot, the Notification Bot: no owner) by nobody. What clients need of a bot beyond its
defaults and services (its name, avatar, owner, whether it is active, its API key) they read from
its user object and GET /bots/{id}/api_key, so the events carry only these.
"""

from collections import defaultdict
from typing import Any

from apps.events.publish import send_event_on_commit
from apps.users.models import BotService, BotType, Role, User

ADMIN_ROLES = (Role.OWNER, Role.ADMINISTRATOR)
# A bot's defaults (Zulip's), as its fields, bot objects and realm_bot events name them.
BOT_DEFAULTS = ("default_sending_stream", "default_events_register_stream", "default_all_public_streams")


def administered_bots(user: User) -> list[User]:
    """The bots `user` administers, deactivated ones too (an administrator: every bot with an owner
    in the organization; anyone else: their own), oldest first, with their default channels."""
    bots = User.objects.filter(realm_id=user.realm_id, bot_type__isnull=False, bot_owner__isnull=False)
    if not user.is_admin:
        bots = bots.filter(bot_owner=user)
    return list(bots.select_related("default_sending_stream", "default_events_register_stream").order_by("id"))


def bot_dicts(bots: list[User]) -> list[dict[str, Any]]:
    """Zulip's bot objects (realm_bots): two queries at most, whatever the number of bots."""
    services = services_of([bot for bot in bots if bot.bot_type == BotType.OUTGOING_WEBHOOK])
    return [bot_to_dict(bot, services[bot.id]) for bot in bots]


def services_of(bots: list[User]) -> defaultdict[int, list[dict[str, Any]]]:
    """{bot id: its services as Zulip's bot objects list them}: an outgoing webhook's URL,
    interface and token."""
    found: defaultdict[int, list[dict[str, Any]]] = defaultdict(list)
    if bots:
        rows = BotService.objects.filter(bot__in=bots).order_by("id")
        for bot_id, base_url, interface, token in rows.values_list("bot_id", "base_url", "interface", "token"):
            found[bot_id].append({"base_url": base_url, "interface": interface, "token": token})
    return found


def bot_to_dict(bot: User, services: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if services is None:
        services = services_of([bot])[bot.id]
    return {
        "user_id": bot.id,
        "default_sending_stream": _stream_name(bot.default_sending_stream),
        "default_events_register_stream": _stream_name(bot.default_events_register_stream),
        "default_all_public_streams": bot.default_all_public_streams,
        "services": services,
    }


def _stream_name(stream) -> str | None:
    return None if stream is None else stream.name


def bot_administrator_ids(bot: User) -> set[int]:
    """Who is told of the bot's configuration (Zulip's bot_owner_user_ids): its owner and the
    organization's active human administrators; its owner alone when a default channel of its is
    private (they may not know the channel)."""
    owner = {bot.bot_owner_id} if bot.bot_owner_id is not None else set()
    private = [s for s in (bot.default_sending_stream, bot.default_events_register_stream) if s and s.invite_only]
    if private:
        return owner
    admins = User.objects.filter(realm_id=bot.realm_id, is_active=True, bot_type__isnull=True, role__in=ADMIN_ROLES)
    return owner | set(admins.values_list("id", flat=True))


def send_bot_added(bot: User, user_ids: set[int] | None = None) -> None:
    """Emits: realm_bot/add {bot} to those who administer it (or to `user_ids`)."""
    recipients = bot_administrator_ids(bot) if user_ids is None else user_ids
    if recipients:
        send_event_on_commit(bot.realm_id, {"type": "realm_bot", "op": "add", "bot": bot_to_dict(bot)}, recipients)


def send_bot_update(bot: User, changed: dict[str, Any]) -> None:
    """Emits: realm_bot/update {bot: {user_id, <property>}} to those who administer it."""
    event = {"type": "realm_bot", "op": "update", "bot": {"user_id": bot.id, **changed}}
    send_event_on_commit(bot.realm_id, event, bot_administrator_ids(bot))


def send_bot_removed(bot: User, user_ids: set[int]) -> None:
    """Emits: realm_bot/delete {bot: {user_id}} to `user_ids` (who no longer administer it)."""
    if user_ids:
        send_event_on_commit(bot.realm_id, {"type": "realm_bot", "op": "delete", "bot": {"user_id": bot.id}}, user_ids)
