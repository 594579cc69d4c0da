"""The error classes of messages."""

from apps.core.errors import ErrorCode, JsonableError


class BadNarrowError(JsonableError):
    code = ErrorCode.BAD_NARROW

    def __init__(self, desc: str) -> None:
        super().__init__(f"Invalid narrow operator: {desc}")


class InvalidMessageError(JsonableError):
    """A message that does not exist for the user (another's, or deleted): one error for both."""

    def __init__(self) -> None:
        super().__init__("Invalid message(s)")
