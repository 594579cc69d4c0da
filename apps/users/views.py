"""Users, own profile, custom profile fields and API-key retrieval (/api/v1)."""

from django.contrib.auth import update_session_auth_hash
from rest_framework.request import Request

from apps.core.auth import realm_for_request
from apps.core.errors import AuthenticationFailedError, JsonableError
from apps.core.params import parse_params, uploaded_files, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsHuman, IsOrganizationAdministrator
from apps.core.responses import json_success
from apps.core.sessions import is_session_api, session_api_user
from apps.core.views import ApiView
from apps.users.access import access_user_by_email, access_user_by_id, as_seen_by
from apps.users.actions.activation import check_deactivate_own_user, check_deactivate_user, check_reactivate_user
from apps.users.actions.avatars import check_may_change_avatar, check_upload_avatar, do_change_avatar
from apps.users.actions.create_user import check_create_user_by_admin
from apps.users.actions.profile_data import check_remove_user_custom_profile_data, check_update_user_custom_profile_data
from apps.users.actions.profile_fields import (
    check_add_realm_custom_profile_field,
    check_reorder_realm_custom_profile_fields,
    check_update_realm_custom_profile_field,
    do_remove_realm_custom_profile_field,
)
from apps.users.actions.realm_defaults import check_update_realm_user_defaults
from apps.users.actions.settings import TargetUsers, check_update_settings
from apps.users.actions.user_settings import check_update_user
from apps.users.backends import check_password_login
from apps.users.hooks import own_user_extras
from apps.users.models import AvatarSource, User
from apps.users.selectors import (
    access_custom_profile_field,
    avatar_url,
    custom_profile_data,
    custom_profile_data_in_realm,
    get_custom_profile_fields,
    own_profile_data,
    user_rows_in_realm,
)
from apps.users.serializers import (
    CreateCustomProfileFieldParams,
    CreateUserParams,
    FetchApiKeyParams,
    GetUsersParams,
    OwnUserShape,
    RealmUserDefaultsParams,
    RemoveOwnProfileDataParams,
    ReorderCustomProfileFieldsParams,
    SessionFetchApiKeyParams,
    UpdateCustomProfileFieldParams,
    UpdateOwnProfileDataParams,
    UpdateSettingsParams,
    UpdateUserParams,
    UserAnswer,
    UsersAnswer,
    custom_profile_field_to_dict,
    given_settings,
    own_user_to_dict,
    user_to_dict,
    users_to_dicts,
)


class OwnUserView(ApiView):
    """GET /users/me; DELETE /users/me: the user leaves the organization (deactivates their account
    and their bots), as in Zulip."""

    @uses_params(returns=OwnUserShape)
    def get(self, request: Request):
        user = request.user
        return json_success(
            request,
            own_user_to_dict(
                user,
                profile_data=own_profile_data(user),
                extras=own_user_extras.call_merged(user),
            ),
        )

    def delete(self, request: Request):
        check_deactivate_own_user(request.user)
        return json_success(request)


class UsersView(ApiView):
    """GET /users; POST /users: an administrator with the can_create_users permission creates an
    account (Zulip's endpoint for provisioning tools)."""

    method_permission_classes = {"post": [IsOrganizationAdministrator]}

    @uses_params(CreateUserParams)
    def post(self, request: Request):
        params = parse_params(CreateUserParams, request)
        user = check_create_user_by_admin(
            request.user, email=params.email, password=params.password, full_name=params.full_name
        )
        return json_success(request, {"user_id": user.id})

    @uses_params(GetUsersParams, returns=UsersAnswer)
    def get(self, request: Request):
        params = parse_params(GetUsersParams, request)
        realm = request.user.realm
        ids = params.user_ids
        members = users_to_dicts(
            user_rows_in_realm(realm, ids),
            realm,
            acting_user=request.user,
            client_gravatar=params.client_gravatar,
            profile_data=custom_profile_data_in_realm(realm, ids) if params.include_custom_profile_fields else None,
        )
        # Not the server's own bots, as Zulip's (/register lists them apart: cross_realm_bots).
        members = as_seen_by(request.user, [member for member in members if not member.get("is_system_bot")])
        return json_success(request, {"members": members})


class UserView(ApiView):
    """GET, PATCH and DELETE /users/{user_id}; GET and PATCH /users/{email}."""

    def get_target(
        self, request: Request, *, for_admin: bool, allow_deactivated: bool = True, allow_bots: bool = True
    ) -> User:
        kwargs = {"for_admin": for_admin, "allow_deactivated": allow_deactivated, "allow_bots": allow_bots}
        if "email" in self.kwargs:
            return access_user_by_email(request.user, self.kwargs["email"], **kwargs)
        return access_user_by_id(request.user, self.kwargs["user_id"], **kwargs)

    @uses_params(GetUsersParams, returns=UserAnswer)
    def get(self, request: Request, **path):
        params = parse_params(GetUsersParams, request)
        target = self.get_target(request, for_admin=False)
        profile_data = (
            custom_profile_data([target]).get(target.id, {}) if params.include_custom_profile_fields else None
        )
        return json_success(
            request,
            {
                "user": user_to_dict(
                    target, acting_user=request.user, client_gravatar=params.client_gravatar, profile_data=profile_data
                )
            },
        )

    @uses_params(UpdateUserParams)
    def patch(self, request: Request, **path):
        params = parse_params(UpdateUserParams, request)
        target = self.get_target(request, for_admin=True)
        check_update_user(
            target,
            full_name=params.full_name,
            role=params.role,
            profile_data=None
            if params.profile_data is None
            else [(item.id, item.value) for item in params.profile_data],
            new_email=params.new_email,
            acting_user=request.user,
        )
        return json_success(request)

    def delete(self, request: Request, **path):
        target = self.get_target(request, for_admin=True, allow_deactivated=False, allow_bots=False)
        check_deactivate_user(target, acting_user=request.user)
        return json_success(request)


class UserByEmailView(UserView):
    http_method_names = ["get", "patch", "head"]


class ReactivateUserView(ApiView):
    def post(self, request: Request, user_id: int):
        target = access_user_by_id(request.user, user_id, allow_deactivated=True, allow_bots=True, for_admin=True)
        check_reactivate_user(target, acting_user=request.user)
        return json_success(request)


class OwnAvatarView(ApiView):
    """POST /users/me/avatar: one picture becomes the user's avatar; DELETE: back to Gravatar. Both
    answer the new `avatar_url` (DELETE the medium one, as Zulip)."""

    def post(self, request: Request):
        files = uploaded_files(request)
        if len(files) != 1:
            raise JsonableError("You must upload exactly one avatar.")
        check_may_change_avatar(request.user)
        check_upload_avatar(request.user, files[0], acting_user=request.user)
        return json_success(request, {"avatar_url": avatar_url(request.user)})

    def delete(self, request: Request):
        check_may_change_avatar(request.user)
        do_change_avatar(request.user, AvatarSource.GRAVATAR, acting_user=request.user)
        return json_success(request, {"avatar_url": avatar_url(request.user, medium=True)})


class OwnProfileDataView(ApiView):
    permission_classes = [IsAuthenticatedUser, IsHuman]

    @uses_params(UpdateOwnProfileDataParams)
    def patch(self, request: Request):
        params = parse_params(UpdateOwnProfileDataParams, request)
        check_update_user_custom_profile_data(
            request.user, [(item.id, item.value) for item in params.data], acting_user=request.user
        )
        return json_success(request)

    @uses_params(RemoveOwnProfileDataParams)
    def delete(self, request: Request):
        params = parse_params(RemoveOwnProfileDataParams, request)
        check_remove_user_custom_profile_data(request.user, params.data, acting_user=request.user)
        return json_success(request)


class CustomProfileFieldsView(ApiView):
    method_permission_classes = {"post": [IsOrganizationAdministrator], "patch": [IsOrganizationAdministrator]}

    def get(self, request: Request):
        fields = get_custom_profile_fields(request.user.realm)
        return json_success(request, {"custom_fields": [custom_profile_field_to_dict(f) for f in fields]})

    @uses_params(CreateCustomProfileFieldParams)
    def post(self, request: Request):
        params = parse_params(CreateCustomProfileFieldParams, request)
        field = check_add_realm_custom_profile_field(
            request.user.realm,
            name=params.name,
            hint=params.hint,
            field_type=params.field_type,
            field_data=params.field_data,
            display_in_profile_summary=params.display_in_profile_summary,
            required=params.required,
            editable_by_user=params.editable_by_user,
            acting_user=request.user,
        )
        return json_success(request, {"id": field.id})

    @uses_params(ReorderCustomProfileFieldsParams)
    def patch(self, request: Request):
        params = parse_params(ReorderCustomProfileFieldsParams, request)
        check_reorder_realm_custom_profile_fields(request.user.realm, params.order, acting_user=request.user)
        return json_success(request)


class CustomProfileFieldView(ApiView):
    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(UpdateCustomProfileFieldParams)
    def patch(self, request: Request, field_id: int):
        params = parse_params(UpdateCustomProfileFieldParams, request)
        field = access_custom_profile_field(request.user.realm, field_id)
        check_update_realm_custom_profile_field(field, **params.model_dump(exclude_none=True), acting_user=request.user)
        return json_success(request)

    def delete(self, request: Request, field_id: int):
        field = access_custom_profile_field(request.user.realm, field_id)
        do_remove_realm_custom_profile_field(field, acting_user=request.user)
        return json_success(request)


class FetchApiKeyView(ApiView):
    """POST /fetch_api_key: trade an email and password for the API key (no authentication).

    Under /json/, Zulip's json_fetch_api_key: the logged-in person's own key, for their password,
    with the session's CSRF token, as everything there (the security QA pass: any page could make a
    browser try passwords there, counting against its victims' login limit)."""

    # Anyone may ask: credentials sent are not looked at.
    authentication_classes = permission_classes = ()

    @uses_params(FetchApiKeyParams, SessionFetchApiKeyParams)  # the second under /json/
    def post(self, request: Request):
        if is_session_api(request):
            return _own_api_key(request)
        params = parse_params(FetchApiKeyParams, request)
        realm, address = realm_for_request(request._request), request.META.get("REMOTE_ADDR")
        user = check_password_login(realm, params.username, params.password, address=address)
        return json_success(request, {"api_key": user.api_key, "email": user.delivery_email, "user_id": user.id})


def _own_api_key(request: Request):
    """/json/fetch_api_key: the session's own key, for its password."""
    user = session_api_user(request)  # REST framework's request: its parsed body may hold the token
    params = parse_params(SessionFetchApiKeyParams, request)
    try:
        check_password_login(user.realm, user.delivery_email, params.password, address=request.META.get("REMOTE_ADDR"))
    except AuthenticationFailedError:
        raise JsonableError("Password is incorrect.") from None
    return json_success(request, {"api_key": user.api_key, "email": user.delivery_email, "user_id": user.id})


class SettingsView(ApiView):
    """PATCH /settings, and its legacy aliases PATCH /settings/display and /settings/notifications:
    people only (Zulip's human_users_only)."""

    permission_classes = [IsAuthenticatedUser, IsHuman]

    @uses_params(UpdateSettingsParams)
    def patch(self, request: Request):
        params = parse_params(UpdateSettingsParams, request)
        targets = params.target_users
        check_update_settings(
            request.user,
            changes=given_settings(params),
            full_name=params.full_name,
            email=params.email,
            old_password=params.old_password,
            new_password=params.new_password,
            target_users=None
            if targets is None
            else TargetUsers(tuple(targets.user_ids), tuple(targets.group_ids), targets.skip_if_already_edited),
            acting_user=request.user,
        )
        if params.new_password is not None and is_session_api(request):
            # A new password ends the user's sessions (Django's session hash) but this browser's,
            # as in Zulip, saved at once so the next request finds it.
            update_session_auth_hash(request._request, request.user)
            request._request.session.save()
        return json_success(request)


class RealmUserDefaultsView(ApiView):
    """PATCH /realm/user_settings_defaults: the organization's defaults for new users."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(RealmUserDefaultsParams)
    def patch(self, request: Request):
        params = parse_params(RealmUserDefaultsParams, request)
        check_update_realm_user_defaults(request.user.realm, given_settings(params), acting_user=request.user)
        return json_success(request)
