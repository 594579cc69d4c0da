"""The error classes of push notifications (Zulip's codes and words)."""

from apps.core.errors import ErrorCode, JsonableError


class InvalidPushDeviceTokenError(JsonableError):
    """A token the user has not registered (or someone else's: one answer for both)."""

    code = ErrorCode.INVALID_PUSH_DEVICE_TOKEN

    def __init__(self) -> None:
        super().__init__("Device not recognized")


class InvalidRemotePushDeviceTokenError(JsonableError):
    code = ErrorCode.INVALID_REMOTE_PUSH_DEVICE_TOKEN

    def __init__(self) -> None:
        super().__init__("Device not recognized by the push bouncer")


class NoActivePushDeviceError(JsonableError):
    code = ErrorCode.NO_ACTIVE_PUSH_DEVICE

    def __init__(self) -> None:
        super().__init__("No active registered push device")


class PushServiceNotConfiguredError(JsonableError):
    """Registering for end-to-end encrypted notifications where none can reach a phone (the log
    backend, or the bouncer without this server's registration): Zulip's answer, so that the app does
    not take its device for registered."""

    code = ErrorCode.PUSH_SERVICE_NOT_CONFIGURED

    def __init__(self) -> None:
        super().__init__("Server is not configured to use push notification service.")


class InvalidDeviceIdError(JsonableError):
    """A device id that is not one of the user's devices."""

    def __init__(self) -> None:
        super().__init__("Invalid `device_id`")
