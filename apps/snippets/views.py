"""Saved snippets (/api/v1/saved_snippets...): one ViewSet with Zulip's paths, for every user."""

from rest_framework.request import Request

from apps.core.params import parse_params, uses_params
from apps.core.responses import json_success
from apps.core.views import ApiViewSet
from apps.snippets.actions import do_create_saved_snippet, do_delete_saved_snippet, do_edit_saved_snippet
from apps.snippets.selectors import saved_snippets_for_user
from apps.snippets.serializers import CreateSavedSnippetParams, EditSavedSnippetParams


class SavedSnippetViewSet(ApiViewSet):
    """GET and POST /saved_snippets, PATCH and DELETE /saved_snippets/{saved_snippet_id}."""

    lookup_url_kwarg = "saved_snippet_id"
    lookup_value_converter = "id"

    def list(self, request: Request):
        return json_success(request, {"saved_snippets": saved_snippets_for_user(request.user)})

    @uses_params(CreateSavedSnippetParams)
    def create(self, request: Request):
        params = parse_params(CreateSavedSnippetParams, request)
        snippet = do_create_saved_snippet(
            request.user, title=params.title, content=params.content, acting_user=request.user
        )
        return json_success(request, {"saved_snippet_id": snippet.id})

    @uses_params(EditSavedSnippetParams)
    def partial_update(self, request: Request, saved_snippet_id: int):
        params = parse_params(EditSavedSnippetParams, request)
        do_edit_saved_snippet(
            request.user, saved_snippet_id, title=params.title, content=params.content, acting_user=request.user
        )
        return json_success(request)

    def destroy(self, request: Request, saved_snippet_id: int):
        do_delete_saved_snippet(request.user, saved_snippet_id, acting_user=request.user)
        return json_success(request)
