"""`manage.py check` (and so `migrate`, and the server's start) refuses a PUSH_BACKEND whose settings
cannot work, instead of failing at the first notification."""

from typing import Any

from django.conf import settings
from django.core.checks import Error, register
from django.utils.module_loading import import_string

APNS = "apps.push.apns.APNsBackend"
FCM = "apps.push.fcm.FCMBackend"
DIRECT = "apps.push.direct.DirectBackend"
BOUNCER = "apps.push.backends.BouncerBackend"


@register("push")
def check_push_backend(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    # Imported here: the services' clients (HTTP/2, JWT, X.509) are not loaded by every process that
    # starts (each server worker and task worker, each manage.py command) for a check most never run.
    from apps.push import apns, e2ee, fcm

    backend = settings.PUSH_BACKEND
    try:
        import_string(backend)
    except ImportError:
        return [Error(f"PUSH_BACKEND {backend} cannot be imported", id="push.E001")]
    problems: list[str] = []
    if backend == APNS:
        problems = apns.configuration_errors()
    elif backend == FCM:
        problems = fcm.configuration_errors()
    elif backend == DIRECT:
        apns_set, fcm_set = bool(settings.APNS_TOKEN_KEY_FILE), bool(settings.ANDROID_FCM_CREDENTIALS_PATH)
        if not (apns_set or fcm_set):
            problems = ["neither APNS_TOKEN_KEY_FILE nor ANDROID_FCM_CREDENTIALS_PATH is set"]
        problems += (apns.configuration_errors() if apns_set else []) + (fcm.configuration_errors() if fcm_set else [])
    if backend in (APNS, FCM, DIRECT):
        problems += e2ee.key_errors()
    elif backend == BOUNCER:
        problems = [f"{name} is not set" for name in ("ZULIP_ORG_ID", "ZULIP_ORG_KEY") if not getattr(settings, name)]
    return [Error(f"PUSH_BACKEND {backend}: {problem}", id="push.E002") for problem in problems]
