"""Request parameter classes of /saved_snippets (the SavedSnippet object:
apps.snippets.selectors.saved_snippet_to_dict)."""

from typing import Annotated

from pydantic import StringConstraints

from apps.core.params import Params
from apps.snippets.models import SavedSnippet

# Stripped, then neither empty nor longer than Zulip allows.
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=SavedSnippet.MAX_TITLE_LENGTH)]
Content = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=SavedSnippet.MAX_CONTENT_LENGTH)
]


class CreateSavedSnippetParams(Params):
    title: Title
    content: Content


class EditSavedSnippetParams(Params):
    title: Title | None = None
    content: Content | None = None
