"""The error classes of saved snippets."""

from apps.core.errors import JsonableError, ResourceNotFoundError


class SavedSnippetDoesNotExistError(ResourceNotFoundError):
    """A snippet that does not exist for the user: missing, or someone else's (one answer for both)."""

    def __init__(self) -> None:
        super().__init__("Saved snippet does not exist.")


class TooManySavedSnippetsError(JsonableError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"Too many saved snippets (limit: {limit}); delete some first.")
