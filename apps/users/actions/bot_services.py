"""The services of outgoing-webhook bots: where the server posts the messages that trigger them,
and the token it sends with each (apps.webhooks delivers them)."""

from django.db import transaction

from apps.core.errors import JsonableError
from apps.users.actions.create_user import check_service_url, generate_api_key
from apps.users.models import BotService, User


@transaction.atomic(savepoint=False)
def do_update_bot_service(
    service: BotService, *, base_url: str | None = None, interface: int | None = None, acting_user: User | None
) -> None:
    """Change where the bot's service is reached, or its interface (Zulip's
    do_update_outgoing_webhook_service). The token stays: see do_regenerate_service_token."""
    if base_url is not None:
        service.base_url = check_service_url(base_url)
    if interface is not None:
        if interface not in BotService.Interface.values:
            raise JsonableError("Invalid interface")
        service.interface = interface
    service.save(update_fields=["base_url", "interface"])


@transaction.atomic(savepoint=False)
def do_regenerate_service_token(service: BotService, *, acting_user: User | None) -> str:
    """A new token for the service (32 characters from [A-Za-z0-9], about 190 bits): deliveries
    from now on carry it, so the service must be given it too (zulip-botserver's `token`)."""
    service.token = generate_api_key()
    BotService.objects.filter(id=service.id).update(token=service.token)
    return service.token
