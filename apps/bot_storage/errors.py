"""The error classes of bot storage, with Zulip's messages."""

from apps.core.errors import ErrorCode, JsonableError


class NotABotError(JsonableError):
    """Bot storage is for bots (Zulip from feature level 494)."""

    code = ErrorCode.PERMISSION_DENIED
    http_status_code = 403

    def __init__(self) -> None:
        super().__init__("This endpoint is only available to bots.")


class KeyDoesNotExistError(JsonableError):
    """A key the request names is not in the bot's storage: nothing is read or deleted."""

    def __init__(self) -> None:
        super().__init__("Key does not exist.")


class StorageLimitExceededError(JsonableError):
    def __init__(self, excess: int, limit: int) -> None:
        super().__init__(f"Request exceeds storage limit by {excess} characters. The limit is {limit} characters.")
