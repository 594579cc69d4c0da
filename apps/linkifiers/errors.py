from apps.core.errors import JsonableError
from apps.linkifiers.patterns import LinkifierInvalid


class LinkifierNotFoundError(JsonableError):
    def __init__(self) -> None:
        super().__init__("Linkifier not found.")


class LinkifierValidationError(JsonableError):
    """Zulip's ValidationFailureError: the first problem as the message, all of them by field in
    `errors` ("__all__" for the fields together)."""

    def __init__(self, invalid: LinkifierInvalid) -> None:
        super().__init__(str(invalid), errors=invalid.errors)
