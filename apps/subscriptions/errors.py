"""The error classes of channels and subscriptions."""

from apps.core.errors import ErrorCode, JsonableError


class StreamDoesNotExistError(JsonableError):
    code = ErrorCode.STREAM_DOES_NOT_EXIST

    def __init__(self, name: str) -> None:
        super().__init__(f"Channel '{name}' does not exist", stream=name)


class StreamWithIdDoesNotExistError(JsonableError):
    code = ErrorCode.STREAM_DOES_NOT_EXIST

    def __init__(self, stream_id: int) -> None:
        super().__init__(f"Channel with ID '{stream_id}' does not exist", stream_id=stream_id)
