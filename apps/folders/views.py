"""Channel folders (/api/v1/channel_folders...): every user of the organization reads them; its
administrators create, change and order them (Zulip's require_realm_admin)."""

from rest_framework.request import Request

from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsOrganizationAdministrator
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.folders.actions import check_add_channel_folder, check_reorder_channel_folders, check_update_channel_folder
from apps.folders.selectors import access_channel_folder_by_id, channel_folders_in_realm
from apps.folders.serializers import (
    CreateChannelFolderParams,
    ListChannelFoldersParams,
    ReorderChannelFoldersParams,
    UpdateChannelFolderParams,
)


class ChannelFoldersView(ApiView):
    """GET /channel_folders lists the folders in their order; PATCH reorders them."""

    permission_classes = [IsAuthenticatedUser]
    method_permission_classes = {"patch": [IsOrganizationAdministrator]}

    @uses_params(ListChannelFoldersParams)
    def get(self, request: Request):
        params = parse_params(ListChannelFoldersParams, request)
        folders = channel_folders_in_realm(request.user.realm_id, include_archived=params.include_archived)
        return json_success(request, {"channel_folders": folders})

    @uses_params(ReorderChannelFoldersParams)
    def patch(self, request: Request):
        params = parse_params(ReorderChannelFoldersParams, request)
        check_reorder_channel_folders(request.user.realm, params.order, acting_user=request.user)
        return json_success(request)


class CreateChannelFolderView(ApiView):
    """POST /channel_folders/create: a new folder, after the others; answers its id."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(CreateChannelFolderParams)
    def post(self, request: Request):
        params = parse_params(CreateChannelFolderParams, request)
        folder = check_add_channel_folder(
            request.user.realm, name=params.name, description=params.description, acting_user=request.user
        )
        return json_success(request, {"channel_folder_id": folder.id})


class ChannelFolderView(ApiView):
    """PATCH /channel_folders/{channel_folder_id}: its name, description, archived or not."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(UpdateChannelFolderParams)
    def patch(self, request: Request, channel_folder_id: int):
        params = parse_params(UpdateChannelFolderParams, request)
        folder = access_channel_folder_by_id(request.user.realm_id, channel_folder_id)
        check_update_channel_folder(
            folder,
            name=params.name,
            description=params.description,
            is_archived=params.is_archived,
            acting_user=request.user,
        )
        return json_success(request)
