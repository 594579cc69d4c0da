"""Presence (/api/v1/users/me/presence, /realm/presence, /users/{user_id_or_email}/presence)."""

from rest_framework.request import Request

from apps.core.errors import JsonableError
from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsHuman, IsOrganizationAdministrator
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.presence.actions import check_update_user_status, do_update_user_presence
from apps.presence.selectors import access_user_for_presence, presence_response, user_presence, user_status_of
from apps.presence.serializers import (
    GetUserPresenceParams,
    UpdatePresenceParams,
    UpdateStatusParams,
    UpdateUserStatusParams,
)
from apps.users.access import access_user_by_id

STATUSES = {"active": True, "idle": False}


class OwnPresenceView(ApiView):
    """POST /users/me/presence: the ping every client sends (people only, as in Zulip). Answers the
    organization's presence, unless `ping_only`; modern clients send `last_update_id` and get only
    what changed since, by user id."""

    permission_classes = [IsAuthenticatedUser, IsHuman]

    @uses_params(UpdatePresenceParams)
    def post(self, request: Request):
        params = parse_params(UpdatePresenceParams, request)
        if params.status not in STATUSES:
            raise JsonableError(f"Invalid status: {params.status}")
        do_update_user_presence(request.user, active=STATUSES[params.status])
        if params.ping_only:
            return json_success(request)
        slim = params.slim_presence or params.last_update_id is not None
        data = presence_response(
            request.user,
            slim=slim,
            last_update_id=params.last_update_id,
            history_limit_days=params.history_limit_days,
        )
        return json_success(request, data)


class RealmPresenceView(ApiView):
    """GET /realm/presence: everyone's presence in the legacy shape, keyed by API email."""

    def get(self, request: Request):
        data = presence_response(request.user, slim=False)
        del data["presence_last_update_id"]
        return json_success(request, data)


class UserPresenceView(ApiView):
    """GET /users/{user_id_or_email}/presence (bots may ask)."""

    @uses_params(GetUserPresenceParams)
    def get(self, request: Request, user_id: int | None = None, email: str | None = None):
        params = parse_params(GetUserPresenceParams, request)
        named = user_id if user_id is not None else email
        target = access_user_for_presence(request.user, named)
        return json_success(request, {"presence": user_presence(target, named, slim=params.slim_presence)})


class OwnStatusView(ApiView):
    """POST /users/me/status: the user's status text and emoji (and the deprecated away)."""

    @uses_params(UpdateStatusParams)
    def post(self, request: Request):
        params = parse_params(UpdateStatusParams, request)
        check_update_user_status(
            request.user,
            away=params.away,
            status_text=params.status_text,
            emoji_name=params.emoji_name,
            emoji_code=params.emoji_code,
            reaction_type=params.reaction_type,
        )
        return json_success(request)


class UserStatusView(ApiView):
    """GET /users/{user_id}/status; POST, for administrators: set someone's status (Zulip 11)."""

    method_permission_classes = {"post": [IsOrganizationAdministrator]}

    def get(self, request: Request, user_id: int):
        user = access_user_by_id(request.user, user_id, allow_deactivated=True, allow_bots=True)
        return json_success(request, {"status": user_status_of(user)})

    @uses_params(UpdateUserStatusParams)
    def post(self, request: Request, user_id: int):
        params = parse_params(UpdateUserStatusParams, request)
        user = access_user_by_id(request.user, user_id)
        check_update_user_status(
            user,
            away=None,
            status_text=params.status_text,
            emoji_name=params.emoji_name,
            emoji_code=params.emoji_code,
            reaction_type=params.reaction_type,
        )
        return json_success(request)
