"""The uploads app's errors."""

from apps.core.errors import ErrorCode, JsonableError, ResourceNotFoundError


class FileTooLargeError(JsonableError):
    def __init__(self, max_size_mib: int) -> None:
        super().__init__(f"File is larger than this server's configured maximum upload size ({max_size_mib} MiB).")


class RealmUploadQuotaError(JsonableError):
    code = ErrorCode.REALM_UPLOAD_QUOTA

    def __init__(self) -> None:
        super().__init__("Upload would exceed your organization's upload quota.")


class InvalidAttachmentError(JsonableError):
    def __init__(self) -> None:
        super().__init__("Invalid attachment")


class UploadNotFoundError(ResourceNotFoundError):
    """A file that does not exist for the asker (missing, or another organization's)."""

    def __init__(self) -> None:
        super().__init__("File not found.")


class UploadForbiddenError(JsonableError):
    """A file of the organization that the asker may not see (Zulip answers 403 too)."""

    http_status_code = 403

    def __init__(self) -> None:
        super().__init__("You are not authorized to view this file.")
