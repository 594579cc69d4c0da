"""Drafts (/api/v1/drafts...): one ViewSet with Zulip's paths, for every user, bots included.

A user who turned draft synchronization off is refused before anything else is looked at, reads
included, as in Zulip."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser
from apps.core.responses import json_success
from apps.core.views import ApiViewSet
from apps.drafts.actions import check_create_drafts, check_delete_draft, check_edit_draft
from apps.drafts.selectors import access_draft_by_id, check_drafts_synchronized, drafts_for_user
from apps.drafts.serializers import CreateDraftsParams, EditDraftParams


class DraftsSynchronized(BasePermission):
    """The user keeps drafts on the server (else "User has disabled synchronizing drafts.")."""

    def has_permission(self, request, view) -> bool:
        check_drafts_synchronized(request.user)
        return True


class DraftViewSet(ApiViewSet):
    """GET and POST /drafts, PATCH and DELETE /drafts/{draft_id}."""

    permission_classes = [IsAuthenticatedUser, DraftsSynchronized]
    lookup_url_kwarg = "draft_id"
    lookup_value_converter = "id"

    def list(self, request: Request):
        drafts = drafts_for_user(request.user)
        return json_success(request, {"count": len(drafts), "drafts": drafts})

    @uses_params(CreateDraftsParams)
    def create(self, request: Request):
        params = parse_params(CreateDraftsParams, request)
        drafts = [draft.fields() for draft in params.drafts]
        created = check_create_drafts(request.user, drafts=drafts, acting_user=request.user)
        return json_success(request, {"ids": [draft.id for draft in created]})

    @uses_params(EditDraftParams)
    def partial_update(self, request: Request, draft_id: int):
        params = parse_params(EditDraftParams, request)
        draft = access_draft_by_id(request.user, draft_id)
        check_edit_draft(draft, fields=params.draft.fields(), acting_user=request.user)
        return json_success(request)

    def destroy(self, request: Request, draft_id: int):
        draft = access_draft_by_id(request.user, draft_id)
        check_delete_draft(draft, acting_user=request.user)
        return json_success(request)
