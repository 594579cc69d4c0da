"""Bot storage (/api/v1/bot_storage): PUT, GET and DELETE, for bots only (Zulip from feature level
494; anyone else gets PERMISSION_DENIED)."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from apps.bot_storage.actions import do_remove_bot_storage, do_set_bot_storage
from apps.bot_storage.selectors import bot_storage, check_is_bot
from apps.bot_storage.serializers import StorageKeysParams, UpdateStorageParams
from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser
from apps.core.responses import json_success
from apps.core.views import ApiView


class IsBot(BasePermission):
    def has_permission(self, request, view) -> bool:
        check_is_bot(request.user)
        return True


class BotStorageView(ApiView):
    """PUT /bot_storage stores keys, GET reads them, DELETE deletes them."""

    permission_classes = [IsAuthenticatedUser, IsBot]

    @uses_params(UpdateStorageParams)
    def put(self, request: Request):
        params = parse_params(UpdateStorageParams, request)
        do_set_bot_storage(request.user, entries=params.storage, acting_user=request.user)
        return json_success(request)

    @uses_params(StorageKeysParams)
    def get(self, request: Request):
        params = parse_params(StorageKeysParams, request)
        return json_success(request, {"storage": bot_storage(request.user, params.keys)})

    @uses_params(StorageKeysParams)
    def delete(self, request: Request):
        params = parse_params(StorageKeysParams, request)
        do_remove_bot_storage(request.user, keys=params.keys, acting_user=request.user)
        return json_success(request)
