"""The error classes of channel folders, with Zulip's messages."""

from apps.core.errors import JsonableError


class InvalidChannelFolderError(JsonableError):
    """A folder that does not exist in the user's organization (missing, or another's: one answer)."""

    def __init__(self) -> None:
        super().__init__("Invalid channel folder ID")


class ChannelFolderNameInUseError(JsonableError):
    def __init__(self) -> None:
        super().__init__("Channel folder name already in use")
