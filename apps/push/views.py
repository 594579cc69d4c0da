"""Push registrations (/api/v1/users/me/apns_device_token, /users/me/android_gcm_reg_id,
/mobile_push/test_notification, /mobile_push/e2ee/test_notification, /register_client_device,
/mobile_push/register, /remove_client_device). People only: bots are refused, as in Zulip."""

from django.conf import settings
from rest_framework.request import Request

from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsHuman
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.push.actions import (
    check_register_push_device,
    do_add_push_device_token,
    do_register_client_device,
    do_remove_client_device,
    do_remove_push_device_token,
)
from apps.push.errors import InvalidPushDeviceTokenError, NoActivePushDeviceError, PushServiceNotConfiguredError
from apps.push.models import PushDeviceToken
from apps.push.selectors import access_device_by_id, push_targets, push_tokens_for_user
from apps.push.sending import send_test_notification
from apps.push.serializers import (
    AddApnsTokenParams,
    DeviceIdParams,
    OptionalDeviceIdParams,
    RegisterPushDeviceParams,
    TestNotificationParams,
    TokenParams,
    check_app_id,
    check_token,
)


class HumanView(ApiView):
    permission_classes = [IsAuthenticatedUser, IsHuman]


class TokenView(HumanView):
    """DELETE of one kind of token, and adding one once its parameters are read."""

    kind: int

    def add(self, request: Request, token: str, *, app_id: str | None = None):
        token = check_token(token, self.kind)
        do_add_push_device_token(request.user, kind=self.kind, token=token, ios_app_id=app_id)
        return json_success(request)

    @uses_params(TokenParams)
    def delete(self, request: Request):
        params = parse_params(TokenParams, request)
        token = check_token(params.token, self.kind)
        do_remove_push_device_token(request.user, kind=self.kind, token=token)
        return json_success(request)


class ApnsTokenView(TokenView):
    """POST and DELETE /users/me/apns_device_token (hexadecimal tokens, with their app's id)."""

    kind = PushDeviceToken.Kind.APNS

    @uses_params(AddApnsTokenParams)
    def post(self, request: Request):
        params = parse_params(AddApnsTokenParams, request)
        return self.add(request, params.token, app_id=check_app_id(params.appid))


class FcmTokenView(TokenView):
    """POST and DELETE /users/me/android_gcm_reg_id."""

    kind = PushDeviceToken.Kind.FCM

    @uses_params(TokenParams)
    def post(self, request: Request):
        return self.add(request, parse_params(TokenParams, request).token)


class TestNotificationView(HumanView):
    """POST /mobile_push/test_notification: to one token of the user's, or to all of them."""

    @uses_params(TestNotificationParams)
    def post(self, request: Request):
        params = parse_params(TestNotificationParams, request)
        tokens = push_tokens_for_user(request.user)
        if params.token is not None:
            tokens = [token for token in tokens if token.token == params.token]
            if not tokens:
                raise InvalidPushDeviceTokenError()
        if not tokens:
            raise NoActivePushDeviceError()
        send_test_notification(request.user, tokens)
        return json_success(request)


class EncryptedTestNotificationView(HumanView):
    """POST /mobile_push/e2ee/test_notification: to one registered device of the user's (`device_id`),
    or to all of them."""

    @uses_params(OptionalDeviceIdParams)
    def post(self, request: Request):
        params = parse_params(OptionalDeviceIdParams, request)
        _, devices = push_targets(request.user)
        if params.device_id is not None:
            devices = [device for device in devices if device.id == params.device_id]
        if not devices:
            raise NoActivePushDeviceError()
        send_test_notification(request.user, [], devices)
        return json_success(request)


class RegisterClientDeviceView(HumanView):
    """POST /register_client_device: a new device of the user; answers its `device_id`."""

    def post(self, request: Request):
        device = do_register_client_device(request.user)
        return json_success(request, {"device_id": device.id})


class RemoveClientDeviceView(HumanView):
    """POST /remove_client_device."""

    @uses_params(DeviceIdParams)
    def post(self, request: Request):
        params = parse_params(DeviceIdParams, request)
        do_remove_client_device(access_device_by_id(request.user, params.device_id))
        return json_success(request)


class RegisterPushDeviceView(HumanView):
    """POST /mobile_push/register: the device's push key and token (end-to-end encrypted push)."""

    @uses_params(RegisterPushDeviceParams)
    def post(self, request: Request):
        params = parse_params(RegisterPushDeviceParams, request)
        if not settings.PUSH_NOTIFICATIONS_ENABLED:
            raise PushServiceNotConfiguredError()
        device = access_device_by_id(request.user, params.device_id)
        check_register_push_device(
            device,
            token_kind=params.token_kind,
            token_id=params.token_id,
            bouncer_public_key=params.bouncer_public_key,
            encrypted_push_registration=params.encrypted_push_registration,
            push_key=params.push_key,
            push_key_id=params.push_key_id,
        )
        return json_success(request)
