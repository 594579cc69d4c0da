"""How push notifications leave the server: one interface, the backend chosen by the PUSH_BACKEND
setting. The log backend (the default, and for development) records what would be sent in the
`apps.push` log instead of sending it."""

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from apps.push.models import PushDeviceToken

logger = logging.getLogger("apps.push")


@dataclass
class SendResult:
    """What a send did: how many tokens it reached, and the tokens the push service refused (to be
    removed: the app was uninstalled, or the token is stale)."""

    sent: int = 0
    refused: list[PushDeviceToken] = field(default_factory=list)


class PushBackend(Protocol):
    def send(self, tokens: list[PushDeviceToken], payload: dict[str, Any]) -> SendResult: ...


class LogBackend:
    """Sends nothing: logs one line per token with the payload that would go to it."""

    def send(self, tokens: list[PushDeviceToken], payload: dict[str, Any]) -> SendResult:
        for token in tokens:
            logger.info(
                "push (log backend) to user %s, %s token %s…: %s",
                token.user_id,
                token.get_kind_display(),
                token.token[:8],
                payload,
            )
        return SendResult(sent=len(tokens))


def push_backend() -> PushBackend:
    return import_string(settings.PUSH_BACKEND)()
