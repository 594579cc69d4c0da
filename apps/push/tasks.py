"""Background tasks of push registrations: a push bouncer must know which tokens are whose, and the
encrypted registrations of devices (apps/push/e2ee.py)."""

import logging

from apps.core.tasks import TemporaryFailure, retried_task
from apps.push import actions  # the module: it queues these tasks, which run its actions
from apps.push.backends import ServiceRefused, push_backend
from apps.push.models import Device
from apps.users.models import User

logger = logging.getLogger("apps.push")

# Attempts while the push service is down.
MAX_ATTEMPTS = 6


@retried_task(max_attempts=MAX_ATTEMPTS)
def register_token_with_service(user_id: int, kind: int, token: str, ios_app_id: str | None) -> None:
    user = User.objects.select_related("realm").filter(id=user_id).first()
    if user is not None:
        push_backend().register_token(user, kind, token, ios_app_id)


@retried_task(max_attempts=MAX_ATTEMPTS)
def unregister_token_with_service(user_id: int, kind: int, token: str) -> None:
    user = User.objects.select_related("realm").filter(id=user_id).first()
    if user is not None:
        push_backend().unregister_token(user, kind, token)


# Attempts of a device's registration while the bouncer is down (the waits add up to about 3 hours),
# then it is marked expired, as Zulip marks it (REQUEST_EXPIRED): the app registers again.
REGISTRATION_MAX_ATTEMPTS = 12


@retried_task(max_attempts=REGISTRATION_MAX_ATTEMPTS, pass_attempt=True)
def register_device_with_service(
    device_id: int, token_id: int, bouncer_public_key: str, registration: str, *, attempt: int
) -> None:
    """Hands a device's sealed registration to the push bouncer (or, with the direct backends, opens
    it: apps/push/e2ee.py); the device's token counts once it has it. A registration superseded
    meanwhile (another token, the device removed) is not sent; one refused is marked with its error
    code, for the app to register again."""
    device = Device.objects.select_related("user__realm").filter(id=device_id, pending_push_token_id=token_id).first()
    if device is None:
        return
    try:
        push_backend().register_device(device.user, token_id, bouncer_public_key, registration)
    except TemporaryFailure:
        if attempt < REGISTRATION_MAX_ATTEMPTS:
            raise
        logger.error("push: the registration of device %s could not reach the push service in time", device_id)
        actions.do_fail_push_registration(device, "REQUEST_EXPIRED")
        return
    except ServiceRefused as exc:
        logger.error("push: the push service refused the registration of device %s: %s", device_id, exc)
        actions.do_fail_push_registration(device, exc.code)
        return
    actions.do_complete_push_registration(device, token_id)
