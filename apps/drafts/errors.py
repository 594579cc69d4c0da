"""The error classes of drafts."""

from apps.core.errors import JsonableError, ResourceNotFoundError


class DraftDoesNotExistError(ResourceNotFoundError):
    """A draft that does not exist for the user: missing, or someone else's (one answer for both)."""

    def __init__(self) -> None:
        super().__init__("Draft does not exist")


class DraftsNotSynchronizedError(JsonableError):
    """The user turned `enable_drafts_synchronization` off: the server keeps none of their drafts."""

    def __init__(self) -> None:
        super().__init__("User has disabled synchronizing drafts.")
