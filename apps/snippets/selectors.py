"""Reads of saved snippets: a user's own, nobody else's."""

from typing import Any

from apps.snippets.errors import SavedSnippetDoesNotExistError
from apps.snippets.models import SavedSnippet
from apps.users.models import User


def saved_snippet_to_dict(snippet: SavedSnippet) -> dict[str, Any]:
    """Zulip's SavedSnippet object."""
    return {
        "id": snippet.id,
        "title": snippet.title,
        "content": snippet.content,
        "date_created": int(snippet.date_created.timestamp()),
    }


def saved_snippets_for_user(user: User) -> list[dict[str, Any]]:
    """The user's snippets, oldest first: one query."""
    return [saved_snippet_to_dict(s) for s in SavedSnippet.objects.filter(user=user).order_by("id")]


def access_saved_snippet_by_id(user: User, snippet_id: int, *, lock: bool = False) -> SavedSnippet:
    """The user's snippet; "Saved snippet does not exist." for anyone else's and for none alike.
    `lock`: its row locked until the transaction ends (an edit or deletion at the same moment
    waits, then finds it as it is, or gone)."""
    snippets = SavedSnippet.objects.filter(user=user, id=snippet_id)
    snippet = (snippets.select_for_update() if lock else snippets).first()
    if snippet is None:
        raise SavedSnippetDoesNotExistError()
    return snippet
