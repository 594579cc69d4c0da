"""Bots' configuration: their outgoing-webhook services (where the server posts the messages that
trigger them, and the token it sends with each: apps.webhooks delivers them) and their defaults."""

from typing import Any

from django.db import transaction

from apps.core.errors import JsonableError
from apps.events.publish import forget_credentials_on_commit
from apps.users.actions.create_user import check_service_url, generate_api_key
from apps.users.bots import bot_to_dict, send_bot_update, services_of
from apps.users.models import BotService, User


@transaction.atomic(savepoint=False)
def do_update_bot_service(
    service: BotService, *, base_url: str | None = None, interface: int | None = None, acting_user: User | None
) -> None:
    """Change where the bot's service is reached, or its interface (Zulip's
    do_update_outgoing_webhook_service); nothing changed, nothing sent. The token stays: see
    do_regenerate_service_token.

    Emits: realm_bot/update {services} to those who administer the bot."""
    if base_url is not None:
        base_url = check_service_url(base_url)
    if interface is not None and interface not in BotService.Interface.values:
        raise JsonableError("Invalid interface type")
    changed = {
        name: value
        for name, value in (("base_url", base_url), ("interface", interface))
        if value is not None and value != getattr(service, name)
    }
    if not changed:
        return
    for name, value in changed.items():
        setattr(service, name, value)
    service.save(update_fields=list(changed))
    _send_services_update(service.bot)


@transaction.atomic(savepoint=False)
def do_regenerate_service_token(service: BotService, *, acting_user: User | None) -> str:
    """A new token for the service (32 characters from [A-Za-z0-9], about 190 bits): deliveries
    from now on carry it, so the service must be given it too (zulip-botserver's `token`).

    Emits: realm_bot/update {services} to those who administer the bot."""
    service.token = generate_api_key()
    BotService.objects.filter(id=service.id).update(token=service.token)
    _send_services_update(service.bot)
    return service.token


def _send_services_update(bot: User) -> None:
    send_bot_update(bot, {"services": services_of([bot])[bot.id]})


@transaction.atomic(savepoint=False)
def do_change_bot_defaults(bot: User, changes: dict[str, Any], *, acting_user: User | None) -> None:
    """Set some of the bot's defaults (BOT_DEFAULTS: its default channels, checked by the caller,
    or None; default_all_public_streams), which its queues take when its registration does not say
    (apps.events.actions.queue_options). What does not change is not sent.

    Emits: realm_bot/update {<default>: the channel's name or the value} for each changed one, to
    those who administer the bot (with its new defaults)."""
    changed = {name: value for name, value in changes.items() if getattr(bot, name) != value}
    if not changed:
        return
    for name, value in changed.items():
        setattr(bot, name, value)
    bot.save(update_fields=list(changed))
    forget_credentials_on_commit(user_ids=[bot.id])  # its next registrations read them
    shape = bot_to_dict(bot, services=[])
    for name in changed:
        send_bot_update(bot, {name: shape[name]})
