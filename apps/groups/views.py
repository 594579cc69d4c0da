"""User groups (/api/v1/user_groups...): one ViewSet with Zulip's paths, for every non-guest user,
bots included (Zulip 496)."""

from rest_framework.decorators import action
from rest_framework.request import Request

from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsNotGuest
from apps.core.responses import json_success
from apps.core.views import ApiViewSet
from apps.groups.actions.groups import check_add_user_group, check_deactivate_user_group, check_update_user_group
from apps.groups.actions.members import check_update_user_group_members, check_update_user_group_subgroups
from apps.groups.selectors import (
    access_user_group_to_read,
    group_member_ids,
    is_user_in_group,
    subgroup_ids,
    user_groups_in_realm_serialized,
)
from apps.groups.serializers import (
    CreateUserGroupParams,
    GetMembersParams,
    GetSubgroupsParams,
    GetUserGroupsParams,
    UpdateMembersParams,
    UpdateSubgroupsParams,
    UpdateUserGroupParams,
)
from apps.users.access import access_user_by_id


class UserGroupViewSet(ApiViewSet):
    """GET /user_groups, POST /user_groups/create, PATCH and DELETE /user_groups/{id}, POST
    /user_groups/{id}/deactivate, GET and POST /user_groups/{id}/members and /subgroups, GET
    /user_groups/{id}/members/{user_id}. Guests are refused before anything else is looked at, as
    in Zulip."""

    permission_classes = [IsAuthenticatedUser, IsNotGuest]
    lookup_url_kwarg = "user_group_id"
    lookup_value_converter = "id"

    @uses_params(GetUserGroupsParams)
    def list(self, request: Request):
        params = parse_params(GetUserGroupsParams, request)
        groups = user_groups_in_realm_serialized(
            request.user.realm, include_deactivated=params.include_deactivated_groups
        )
        return json_success(request, {"user_groups": groups})

    @action(detail=False, methods=["post"], url_path="create")
    @uses_params(CreateUserGroupParams)
    def create_group(self, request: Request):
        params = parse_params(CreateUserGroupParams, request)
        group = check_add_user_group(
            request.user.realm,
            name=params.name,
            member_ids=params.members,
            description=params.description,
            settings=params.settings(),
            subgroup_ids=params.subgroups or (),
            acting_user=request.user,
        )
        return json_success(request, {"group_id": group.id})

    @uses_params(UpdateUserGroupParams)
    def partial_update(self, request: Request, user_group_id: int):
        params = parse_params(UpdateUserGroupParams, request)
        check_update_user_group(
            user_group_id,
            name=params.name,
            description=params.description,
            deactivated=params.deactivated,
            settings=params.settings(),
            acting_user=request.user,
        )
        return json_success(request)

    def destroy(self, request: Request, user_group_id: int):
        # The official client's remove_user_group(); Zulip replaced deletion with deactivation.
        return self.deactivate(request, user_group_id)

    @action(detail=True, methods=["post"])
    def deactivate(self, request: Request, user_group_id: int):
        check_deactivate_user_group(user_group_id, acting_user=request.user)
        return json_success(request)

    @action(detail=True, methods=["get"])
    @uses_params(GetMembersParams)
    def members(self, request: Request, user_group_id: int):
        params = parse_params(GetMembersParams, request)
        group = access_user_group_to_read(request.user, user_group_id)
        return json_success(
            request, {"members": group_member_ids(group.id, direct_member_only=params.direct_member_only)}
        )

    @members.mapping.post
    @uses_params(UpdateMembersParams)
    def update_members(self, request: Request, user_group_id: int):
        params = parse_params(UpdateMembersParams, request)
        check_update_user_group_members(
            user_group_id,
            add=params.add,
            delete=params.delete,
            add_subgroups=params.add_subgroups,
            delete_subgroups=params.delete_subgroups,
            acting_user=request.user,
        )
        return json_success(request)

    @action(detail=True, methods=["get"], url_path="members/<id:user_id>")
    @uses_params(GetMembersParams)
    def member(self, request: Request, user_group_id: int, user_id: int):
        params = parse_params(GetMembersParams, request)
        group = access_user_group_to_read(request.user, user_group_id)
        target = access_user_by_id(request.user, user_id)
        member = is_user_in_group(group.id, target, direct_member_only=params.direct_member_only)
        return json_success(request, {"is_user_group_member": member})

    @action(detail=True, methods=["get"])
    @uses_params(GetSubgroupsParams)
    def subgroups(self, request: Request, user_group_id: int):
        params = parse_params(GetSubgroupsParams, request)
        group = access_user_group_to_read(request.user, user_group_id)
        ids = subgroup_ids(group.id, direct_subgroup_only=params.direct_subgroup_only)
        return json_success(request, {"subgroups": ids})

    @subgroups.mapping.post
    @uses_params(UpdateSubgroupsParams)
    def update_subgroups(self, request: Request, user_group_id: int):
        params = parse_params(UpdateSubgroupsParams, request)
        check_update_user_group_subgroups(user_group_id, add=params.add, delete=params.delete, acting_user=request.user)
        return json_success(request)
