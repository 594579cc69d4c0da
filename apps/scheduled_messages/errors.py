"""The error classes of scheduled messages (Zulip's messages)."""

from apps.core.errors import JsonableError, ResourceNotFoundError


class ScheduledMessageDoesNotExistError(ResourceNotFoundError):
    """One that does not exist for the user: missing, or someone else's (one answer for both)."""

    def __init__(self) -> None:
        super().__init__("Scheduled message does not exist")


class ReminderDoesNotExistError(ResourceNotFoundError):
    """One that does not exist for the user: missing, or someone else's (one answer for both)."""

    def __init__(self) -> None:
        super().__init__("Reminder does not exist")


class DeliveryTimeNotInFutureError(JsonableError):
    def __init__(self) -> None:
        super().__init__("Scheduled delivery time must be in the future.")


class TooManyScheduledMessagesError(JsonableError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"Too many scheduled messages (limit: {limit}); delete some first.")
