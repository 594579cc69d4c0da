"""Production: everything from the environment, HTTPS enforced, nothing generated on the fly.

    DJANGO_SETTINGS_MODULE=config.settings.production SECRET_KEY=... EXTERNAL_HOST=chat.example.com \
    DATABASE_URL=postgres://... REDIS_URL=redis://... gunicorn -c config/gunicorn.py config.asgi:application
"""

from config.env import fail
from config.settings.base import *  # noqa: F403
from config.settings.base import VAR_DIR, cfg

SECRET_KEY = cfg.secret_key(VAR_DIR, allow_generated=False)
if cfg.boolean("DEBUG", default=False):
    fail("DEBUG", "must be false in production")
DEBUG = False
EXTERNAL_HTTPS = cfg.boolean("EXTERNAL_HTTPS", default=True)
EXTERNAL_URI_SCHEME = "https://" if EXTERNAL_HTTPS else "http://"
LOG_FORMAT = cfg.choice("LOG_FORMAT", "json", ("text", "json"))
LOGGING["handlers"]["stderr"]["formatter"] = LOG_FORMAT  # noqa: F405

# Behind a TLS-terminating proxy, set TRUST_X_FORWARDED_PROTO=true so Django knows the request was HTTPS.
if cfg.boolean("TRUST_X_FORWARDED_PROTO", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = cfg.boolean("SECURE_SSL_REDIRECT", default=EXTERNAL_HTTPS)
SECURE_HSTS_SECONDS = cfg.non_negative_int("SECURE_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True  # organizations live on subdomains
SECURE_HSTS_PRELOAD = cfg.boolean("SECURE_HSTS_PRELOAD", default=False)
# Cookies sent back over HTTPS only, where the clients reach the server over HTTPS: served over plain
# HTTP (EXTERNAL_HTTPS=false) a browser never sends them back, and logging in to the web app failed
# with "This page has expired" (the operator QA pass); `manage.py check --deploy` warns instead.
SESSION_COOKIE_SECURE = EXTERNAL_HTTPS
CSRF_COOKIE_SECURE = EXTERNAL_HTTPS
if not EXTERNAL_HTTPS:
    # Django's own three (set SECURE_SSL_REDIRECT, secure cookies) would break it; parley.W003 says
    # what it means instead (the verify QA pass).
    SILENCED_SYSTEM_CHECKS = [*SILENCED_SYSTEM_CHECKS, "security.W008", "security.W012", "security.W016"]  # noqa: F405
if not SECURE_HSTS_PRELOAD:
    # Preloading is an operator's commitment to the browsers' HSTS list, not a default we make for them.
    SILENCED_SYSTEM_CHECKS = [*SILENCED_SYSTEM_CHECKS, "security.W021"]
