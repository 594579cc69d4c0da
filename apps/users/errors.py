"""The users app's errors that more than one place raises or names (Zulip's messages, BAD_REQUEST)."""

from apps.core.errors import ErrorCode, JsonableError


class LastOwnerRoleError(JsonableError):
    """Demoting the organization's only active owner (an organization always keeps one)."""

    MSG = "The owner permission cannot be removed from the only organization owner."

    def __init__(self) -> None:
        super().__init__(self.MSG)


class LastOwnerDeactivationError(JsonableError):
    """Deactivating the organization's only active owner."""

    MSG = "Cannot deactivate the only organization owner"

    def __init__(self) -> None:
        super().__init__(self.MSG)


class CannotDeactivateLastUserError(JsonableError):
    """A user leaving an organization they are the only (owner) of, as Zulip's."""

    code = ErrorCode.CANNOT_DEACTIVATE_LAST_USER

    def __init__(self, is_last_owner: bool = True) -> None:
        entity = "organization owner" if is_last_owner else "user"
        super().__init__(f"Cannot deactivate the only {entity}.", is_last_owner=is_last_owner, entity=entity)


class EmailInUseError(JsonableError):
    def __init__(self, email: str) -> None:
        super().__init__(f"Email '{email}' already in use")


class ProfileFieldNotFoundError(JsonableError):
    """A custom profile field id that is not one of the organization's (or of none)."""

    def __init__(self, field_id: int) -> None:
        super().__init__(f"Field id {field_id} not found.")


class ProfileFieldLabelInUseError(JsonableError):
    def __init__(self) -> None:
        super().__init__("A field with that label already exists.")


class EmailChangeLinkError(JsonableError):
    """An email change confirmation link that cannot be used (apps/users/pages.py shows `msg`)."""

    def __init__(self, msg: str, *, status: int = 400) -> None:
        super().__init__(msg)
        self.http_status_code = status
