"""The errors of channels and subscriptions (Zulip's wording and codes)."""

from apps.core.errors import ErrorCode, JsonableError


class StreamDoesNotExistError(JsonableError):
    code = ErrorCode.STREAM_DOES_NOT_EXIST

    def __init__(self, name: str) -> None:
        super().__init__(f"Channel '{name}' does not exist", stream=name)


class StreamWithIdDoesNotExistError(JsonableError):
    code = ErrorCode.STREAM_DOES_NOT_EXIST

    def __init__(self, stream_id: int) -> None:
        super().__init__(f"Channel with ID '{stream_id}' does not exist", stream_id=stream_id)


class ChannelExistsError(JsonableError):
    """POST /channels/create for a name taken (Zulip 11's 409)."""

    code = ErrorCode.CHANNEL_ALREADY_EXISTS
    http_status_code = 409

    def __init__(self, name: str) -> None:
        super().__init__(f"Channel '{name}' already exists")


class CannotAdministerChannelError(JsonableError):
    """The user sees the channel but may not change its settings."""

    code = ErrorCode.CANNOT_ADMINISTER_CHANNEL

    def __init__(self) -> None:
        super().__init__("You do not have permission to administer this channel.")
