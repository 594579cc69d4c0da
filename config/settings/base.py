"""Settings shared by every environment, read from environment variables (see config/env.py).

Without any variable set this is the embedded default that `make run` serves: a SQLite file under
var/, in-process rate limits and caches, no Redis.
"""

import os
from pathlib import Path

from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.retry import Retry

from config import env as cfg

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

cfg.read_dot_env(BASE_DIR)
env = cfg.env

DEBUG = cfg.boolean("DEBUG", default=False)
PORT = cfg.port()
EXTERNAL_HOST = cfg.external_host(default=f"localhost:{PORT}")
ALLOWED_HOSTS = cfg.allowed_hosts(EXTERNAL_HOST)
SECRET_KEY = cfg.secret_key(VAR_DIR, allow_generated=True)
SECRET_KEY_FALLBACKS = cfg.secret_key_fallbacks()
# The scheme clients use to reach us; realm URLs in API responses are built with it.
EXTERNAL_URI_SCHEME = "https://" if cfg.boolean("EXTERNAL_HTTPS", default=False) else "http://"

# Short timeouts: a dependency that is down must produce a quick 503, never a hanging request.
DEPENDENCY_CONNECT_TIMEOUT = cfg.positive_int("DEPENDENCY_CONNECT_TIMEOUT", 3)
REDIS_SOCKET_TIMEOUT = cfg.positive_float("REDIS_SOCKET_TIMEOUT", 2.0)
# Seconds a client is told to wait (Retry-After) when a dependency is down.
SERVICE_UNAVAILABLE_RETRY_AFTER = 5

# Parley's apps in their layers' order, lowest first (docs/architecture.md), and before Django's:
# a command of theirs (createsuperuser) takes the place of Django's own.
INSTALLED_APPS = [
    "apps.core",
    "apps.events",
    "apps.realms",
    "apps.users",
    "apps.groups",
    "apps.folders",
    "apps.subscriptions",
    "apps.linkifiers",
    "apps.messages",
    "apps.presence",
    "apps.drafts",
    "apps.scheduled_messages",
    "apps.snippets",
    "apps.navigation_views",
    "apps.bot_storage",
    "apps.bots",
    "apps.push",
    "apps.email_notifications",
    "apps.uploads",
    "apps.webhooks",
    "apps.invites",
    "apps.directory",
    "apps.web",
    "apps.demo",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    # the messaging API's OpenAPI document and docs page (apps/core/openapi.py)
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "django_tasks",
    "django_tasks_db",
]

MIDDLEWARE = [
    "apps.core.middleware.request_id_middleware",
    # Health probes are answered early: no host check, no HTTPS redirect, no session.
    "apps.core.middleware.health_check_middleware",
    # Outside SecurityMiddleware, so that its HTTPS redirects and host refusals carry the header too
    # (as the long-poll route's answers do: apps/core/security.py).
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # The HTML pages' Content-Security-Policy, where a view set none of its own (not on redirects).
    "apps.core.middleware.page_csp_middleware",
    "django.middleware.security.SecurityMiddleware",
    "apps.core.middleware.static_files_middleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = "config.wsgi.application"
# Zulip's URLs have no trailing slash; a redirect would turn a POST into a GET.
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": cfg.database(VAR_DIR, DEPENDENCY_CONNECT_TIMEOUT)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = cfg.redis_url()

# Background work (push notifications, outgoing webhooks): Django's tasks API, its tasks stored in
# the database in the transaction of the change that queues them, and run by `manage.py run_tasks`
# (apps/core/tasks.py). The server starts one worker beside itself (config/gunicorn.py) unless
# TASK_WORKER=0, for operators who run their workers apart (README "Background tasks").
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "webhooks"]}}
TASK_WORKER = cfg.boolean("TASK_WORKER", default=True)
# How often an idle worker looks for new tasks.
TASK_POLL_SECONDS = cfg.positive_float("TASK_POLL_SECONDS", 0.5)
# A task still running after this long was abandoned (its worker was killed): it runs again.
TASK_ABANDONED_AFTER_SECONDS = cfg.positive_int("TASK_ABANDONED_AFTER_SECONDS", 600)
# Finished tasks are kept this long (failed ones, for the operator to read in the admin, 30 days).
TASK_KEEP_SUCCEEDED_SECONDS = cfg.positive_int("TASK_KEEP_SUCCEEDED_SECONDS", 86400)
TASK_KEEP_FAILED_SECONDS = cfg.positive_int("TASK_KEEP_FAILED_SECONDS", 30 * 86400)

# Outgoing webhooks (apps/webhooks): the time one delivery may take (Zulip's 10 s), the largest
# answer read from a bot's service, and the networks it may be in besides the public internet
# (comma-separated CIDRs: loopback, private, link-local, multicast, reserved and cloud-metadata
# addresses are refused unless listed here).
OUTGOING_WEBHOOK_TIMEOUT_SECONDS = cfg.positive_float("OUTGOING_WEBHOOK_TIMEOUT_SECONDS", 10.0)
OUTGOING_WEBHOOK_MAX_RESPONSE_BYTES = cfg.positive_int("OUTGOING_WEBHOOK_MAX_RESPONSE_BYTES", 256 * 1024)
OUTGOING_WEBHOOK_ALLOWED_NETWORKS = cfg.networks("OUTGOING_WEBHOOK_ALLOWED_NETWORKS")

# Where push notifications go (apps/push/backends.py): the log backend records them in the log;
# the bouncer backend sends them through a Zulip-compatible push bouncer (PUSH_BOUNCER_URL, with
# this server's registration ZULIP_ORG_ID and ZULIP_ORG_KEY), which reaches the official apps; the
# direct backend (apps/push/direct.py) sends straight to APNs and FCM, for an operator's own app.
PUSH_BACKEND = env.str("PUSH_BACKEND", default="apps.push.backends.LogBackend")
PUSH_BOUNCER_URL = env.str("PUSH_BOUNCER_URL", default="https://push.zulipchat.com")
ZULIP_ORG_ID = env.str("ZULIP_ORG_ID", default="")
ZULIP_ORG_KEY = env.str("ZULIP_ORG_KEY", default="")
PUSH_BOUNCER_TIMEOUT_SECONDS = cfg.positive_int("PUSH_BOUNCER_TIMEOUT_SECONDS", 30)
# Direct APNs (Zulip's names): token authentication with the .p8 key of APNS_TOKEN_KEY_ID in Apple's
# team APNS_TEAM_ID; the topic is the app id a token was registered with, else APNS_TOPIC (the
# app's bundle id); APNS_SANDBOX for development builds. APNS_URL replaces Apple's address (tests).
APNS_TOKEN_KEY_FILE = env.str("APNS_TOKEN_KEY_FILE", default="")
APNS_TOKEN_KEY_ID = env.str("APNS_TOKEN_KEY_ID", default="")
APNS_TEAM_ID = env.str("APNS_TEAM_ID", default="")
APNS_TOPIC = env.str("APNS_TOPIC", default="")
APNS_SANDBOX = cfg.boolean("APNS_SANDBOX", default=False)
APNS_URL = env.str("APNS_URL", default="")
# Direct FCM (Zulip's name): the Firebase project's service account key (JSON). FCM_URL replaces
# Google's address of the send API (tests; the token's address is the key file's token_uri).
ANDROID_FCM_CREDENTIALS_PATH = env.str("ANDROID_FCM_CREDENTIALS_PATH", default="")
FCM_URL = env.str("FCM_URL", default="https://fcm.googleapis.com")
# For an own app registering devices for end-to-end encrypted notifications (Zulip 12's apps do):
# the private keys (base64, X25519) of the key pairs whose public key the app seals registrations
# for, in place of Zulip's bouncer's; the direct backends open them (apps/push/e2ee.py).
PUSH_REGISTRATION_PRIVATE_KEYS = env.list("PUSH_REGISTRATION_PRIVATE_KEYS", default=[])
# How long one request to APNs or FCM may take.
PUSH_SERVICE_TIMEOUT_SECONDS = cfg.positive_int("PUSH_SERVICE_TIMEOUT_SECONDS", 15)
# Zulip's PUSH_NOTIFICATION_REDACT_CONTENT: notifications say "New message" instead of the text.
PUSH_NOTIFICATION_REDACT_CONTENT = cfg.boolean("PUSH_NOTIFICATION_REDACT_CONTENT", default=False)
DIRECT_PUSH_BACKENDS = ("apps.push.direct.DirectBackend", "apps.push.apns.APNsBackend", "apps.push.fcm.FCMBackend")
# What clients are told (`push_notifications_enabled`, `realm_push_notifications_enabled`): whether
# notifications can reach phones: the bouncer backend with this server's registration, or the
# direct backends (whose configuration `manage.py check` verifies).
PUSH_NOTIFICATIONS_ENABLED = (
    PUSH_BACKEND == "apps.push.backends.BouncerBackend" and bool(ZULIP_ORG_ID and ZULIP_ORG_KEY)
) or PUSH_BACKEND in DIRECT_PUSH_BACKENDS
# A pooled connection that Redis closed (it restarted, or dropped idle clients) fails the next
# command sent on it: that command is sent once more, at once, on a new connection, instead of
# failing its request. Only for a closed connection: a command that timed out may have run, and a
# Redis that is down or hung answers 503 within the timeouts above, not after twice as long.
# Connections idle for `health_check_interval` seconds are pinged before use (and replaced if dead).
_REDIS_RETRY = (NoBackoff(), 1, (RedisConnectionError,))
REDIS_CONNECTION_KWARGS = {
    "socket_connect_timeout": DEPENDENCY_CONNECT_TIMEOUT,
    "socket_timeout": REDIS_SOCKET_TIMEOUT,
    "health_check_interval": 30,
    "retry": Retry(*_REDIS_RETRY),
}
# The same for redis.asyncio's connections (event queues), whose retries run on the event loop.
REDIS_ASYNC_CONNECTION_KWARGS = {**REDIS_CONNECTION_KWARGS, "retry": AsyncRetry(*_REDIS_RETRY)}
REDIS_KEY_PREFIX = env.str("REDIS_KEY_PREFIX", default="parley")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": REDIS_KEY_PREFIX,
            "OPTIONS": {"CONNECTION_POOL_KWARGS": REDIS_CONNECTION_KWARGS},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_USER_MODEL = "users.User"
AUTHENTICATION_BACKENDS = ["apps.users.backends.RealmEmailBackend"]
# Emails are unique per organization, not server-wide; RealmEmailBackend knows the organization.
# The directory's index carries names for PostgreSQL's index-only scans; SQLite simply ignores them.
SILENCED_SYSTEM_CHECKS = ["auth.W004", "models.W040"]
AUTH_PASSWORD_VALIDATORS = [
    {
        "NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator",
        # The user model's own names for the address and the name (it has no `email` or `username`).
        "OPTIONS": {"user_attributes": ("delivery_email", "full_name")},
    },
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Where `collectstatic` puts the static files WhiteNoise serves (the web app's, the admin's).
STATIC_ROOT = cfg.directory("STATIC_ROOT", VAR_DIR / "static")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Uploaded files and custom emoji (apps/uploads/storage.py): any Django storage backend will do;
    # an S3-compatible bucket (django-storages) when UPLOADS_S3_BUCKET is set, else the filesystem.
    "uploads": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": env.str("UPLOADS_DIR", default=str(VAR_DIR / "uploads"))},
    },
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

if env.str("UPLOADS_S3_BUCKET", default=""):
    STORAGES["uploads"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env.str("UPLOADS_S3_BUCKET"),
            # An S3-compatible service's address (MinIO, Ceph, ...); empty: AWS's own.
            "endpoint_url": env.str("UPLOADS_S3_ENDPOINT_URL", default="") or None,
            "region_name": env.str("UPLOADS_S3_REGION", default="") or None,
            # Empty: boto3's own chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, an instance role).
            "access_key": env.str("UPLOADS_S3_ACCESS_KEY_ID", default="") or None,
            "secret_key": env.str("UPLOADS_S3_SECRET_ACCESS_KEY", default="") or None,
            # Objects private, never overwritten (names are random), served by Parley's own views.
            "default_acl": "private",
            "file_overwrite": False,
            "location": env.str("UPLOADS_S3_PREFIX", default=""),
        },
    }

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

REST_FRAMEWORK = {
    # API-key authentication, a user required, the general rate limit: apps/core/views.py ApiView.
    # /json/... (the web app) is the session's: apps/core/sessions.py.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.core.authentication.ApiKeyAuthentication",
        "apps.core.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["apps.core.permissions.IsAuthenticatedUser"],
    "DEFAULT_THROTTLE_CLASSES": ["apps.core.throttling.ApiRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON whatever the Accept header asks, as Zulip answers (no 406).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "apps.core.negotiation.JsonContentNegotiation",
    # Zulip clients send form-encoded bodies on POST, PATCH, PUT and DELETE.
    "DEFAULT_PARSER_CLASSES": [
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "apps.core.errors.drf_exception_handler",
    "UNAUTHENTICATED_USER": None,
    # /api/v1/openapi.json: each view's parameters from its handlers' @uses_params.
    "DEFAULT_SCHEMA_CLASS": "apps.core.openapi.ParamsAutoSchema",
}
SPECTACULAR_SETTINGS = {
    "OAS_VERSION": "3.1.0",
    "DESCRIPTION": "Zulip's REST API as Parley serves it. Parameters are sent as Zulip's clients send "
    "them: in the query string on GET, else in a form-encoded body; lists, objects, booleans and numbers "
    "as JSON text inside the field.",
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "PREPROCESSING_HOOKS": ["apps.core.openapi.api_endpoints_only"],
    "POSTPROCESSING_HOOKS": ["apps.core.openapi.complete_document"],
    # Path segments: ids are positive integers (apps.core.converters.IdConverter).
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 1}},
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "displayOperationId": False},
}

# A form sent without its CSRF token: a page that says what to do (Django's own speaks of DEBUG).
CSRF_FAILURE_VIEW = "apps.core.views.csrf_failure"

# Rate limits: requests per window (seconds). Redis-backed when REDIS_URL is set.
RATE_LIMITING_ENABLED = cfg.boolean("RATE_LIMITING_ENABLED", default=True)
RATE_LIMIT_API_BY_USER = (cfg.positive_int("RATE_LIMIT_API_BY_USER", 200), 60)
# GET /events polls, a budget of their own per user: a poll returns as soon as events wait, so each
# client of a busy user polls several times a second, and a user has several (a phone, a laptop, a
# terminal): 200 a minute held two clients 10 s at a time at 2 messages a second (the QA pass).
RATE_LIMIT_EVENTS_BY_USER = (cfg.positive_int("RATE_LIMIT_EVENTS_BY_USER", 600), 60)
RATE_LIMIT_API_BY_IP = (cfg.positive_int("RATE_LIMIT_API_BY_IP", 100), 60)
RATE_LIMIT_AUTH_FAILURES = (cfg.positive_int("RATE_LIMIT_AUTH_FAILURES", 5), 1800)
RATE_LIMIT_AUTH_FAILURES_BY_IP = (cfg.positive_int("RATE_LIMIT_AUTH_FAILURES_BY_IP", 100), 1800)
# Channels a user may create through the API per hour; also the most one request may create.
RATE_LIMIT_CHANNEL_CREATION = (cfg.positive_int("RATE_LIMIT_CHANNEL_CREATION", 100), 3600)

# POST /streams/{id}/delete_topic deletes this many messages per transaction, newest first, and
# answers `complete: false` (the client repeats) once this much time has passed.
DELETE_TOPIC_BATCH_SIZE = cfg.positive_int("DELETE_TOPIC_BATCH_SIZE", 500)
DELETE_TOPIC_TIME_BUDGET_SECONDS = float(cfg.positive_int("DELETE_TOPIC_TIME_BUDGET_SECONDS", 50))
# POST /mark_all_as_read marks this many messages read per transaction and answers `complete: false`
# (the client repeats) after this long, as Zulip does.
MARK_READ_BATCH_SIZE = cfg.positive_int("MARK_READ_BATCH_SIZE", 2000)
MARK_READ_TIME_BUDGET_SECONDS = float(cfg.positive_int("MARK_READ_TIME_BUDGET_SECONDS", 50))

# Uploads (apps/uploads): the largest file POST /user_uploads takes (0: uploads are off), and the
# space an organization's files may take altogether (0: no quota).
MAX_FILE_UPLOAD_SIZE_MIB = cfg.non_negative_int("MAX_FILE_UPLOAD_SIZE_MIB", 25)
UPLOAD_QUOTA_MIB_PER_REALM = cfg.non_negative_int("UPLOAD_QUOTA_MIB_PER_REALM", 0)
# The largest picture POST /users/me/avatar (and a bot's) takes (apps.users.avatars).
MAX_AVATAR_FILE_SIZE_MIB = cfg.positive_int("MAX_AVATAR_FILE_SIZE_MIB", 5)
# Whether people without a picture of their own get Gravatar's (as Zulip's ENABLE_GRAVATAR): off
# (a server without the internet, or to tell Gravatar nothing), they get DEFAULT_AVATAR_URI, else
# the server's own default picture, and clients are never asked to compute Gravatar addresses.
ENABLE_GRAVATAR = cfg.boolean("ENABLE_GRAVATAR", default=True)
DEFAULT_AVATAR_URI = cfg.picture_address("DEFAULT_AVATAR_URI")

# Event queues (apps/events). A queue lives this long after its last poll unless the client asks
# otherwise (queue_lifespan_secs, up to 7 days); caps bound memory (an evicted queue answers
# BAD_EVENT_QUEUE_ID and its client registers again).
EVENT_QUEUE_LIFESPAN_SECONDS = cfg.positive_int("EVENT_QUEUE_LIFESPAN_SECONDS", 600)
# The lifespan of a queue registered with idle_queue_timeout="mobile" (the Zulip mobile app's): its
# app polls only while it is open, and finds its queue again when reopened within this time.
EVENT_QUEUE_MOBILE_LIFESPAN_SECONDS = cfg.positive_int("EVENT_QUEUE_MOBILE_LIFESPAN_SECONDS", 12 * 3600)
EVENT_QUEUE_MAX_EVENTS = cfg.positive_int("EVENT_QUEUE_MAX_EVENTS", 10000)
EVENT_QUEUE_MAX_PER_USER = cfg.positive_int("EVENT_QUEUE_MAX_PER_USER", 50)
EVENT_QUEUE_SWEEP_SECONDS = cfg.positive_int("EVENT_QUEUE_SWEEP_SECONDS", 60)
# Without Redis, how often the server looks in the outbox for events other processes committed (the
# task worker's: a scheduled message sent, a bot's reply), which reach its in-memory queues so.
EVENT_OUTBOX_POLL_SECONDS = cfg.positive_float("EVENT_OUTBOX_POLL_SECONDS", 1.0)
# A waiting poll is answered with a heartbeat after a random time in this range (Zulip: 45-55 s).
EVENTS_HEARTBEAT_SECONDS = cfg.seconds_range("EVENTS_HEARTBEAT_SECONDS", (45.0, 55.0))
# Clients use this as their HTTP timeout for long-polls; above the heartbeat.
EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS = 90
# How long a long-poll's credentials are trusted without asking the database again; changes that
# matter (key rotated, user deactivated, ...) drop them at once (apps/events/credentials.py).
# Without Redis, a management command (another process) cannot tell the server, so they expire sooner.
CREDENTIAL_CACHE_SECONDS = cfg.positive_int("CREDENTIAL_CACHE_SECONDS", 300 if REDIS_URL else 30)
# How long an organization's linkifiers stay in the cache; a change drops them at once where the
# cache is shared (Redis), and without Redis a command's change reaches the server this much later.
LINKIFIER_CACHE_SECONDS = 300 if REDIS_URL else 30
# Redis connections one process uses for polls, however many polls are waiting; under a burst
# (every client re-polling at once) the others queue for up to EVENTS_REDIS_QUEUE_SECONDS.
EVENTS_REDIS_MAX_CONNECTIONS = cfg.positive_int("EVENTS_REDIS_MAX_CONNECTIONS", 50)
EVENTS_REDIS_QUEUE_SECONDS = cfg.positive_int("EVENTS_REDIS_QUEUE_SECONDS", 30)
# Threads per server process that run Django's synchronous code (see config/asgi.py).
ASGI_THREADS = cfg.positive_int("ASGI_THREADS", 4)
# How config/asgi.py serves requests; the other modes exist to measure against (benchmarks/events).
ASGI_MODE = cfg.choice("ASGI_MODE", "thin-route", ("thin-route", "pooled-django", "stock-django"))

# Email: the links that confirm a new address (PATCH /settings). EMAIL_URL names the SMTP server in
# production (smtp+tls://user:password@smtp.example.com:587); by default emails are printed to
# standard output. Tests use Django's in-memory outbox.
globals().update(cfg.email())
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default=f"Parley <noreply@{cfg.mail_domain(EXTERNAL_HOST)}>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
EMAIL_TIMEOUT = cfg.positive_int("EMAIL_TIMEOUT", 10)
# Email notifications of direct messages and mentions to people who are offline (apps.email_notifications).
EMAIL_NOTIFICATIONS = cfg.boolean("EMAIL_NOTIFICATIONS", default=True)
# How long a link confirming a new email address may be used.
EMAIL_CHANGE_LINK_VALIDITY_SECONDS = cfg.positive_int("EMAIL_CHANGE_LINK_VALIDITY_SECONDS", 24 * 3600)
# Email changes a user may start (Zulip's email_change_by_user): per hour and per day.
RATE_LIMIT_EMAIL_CHANGE = (
    (cfg.positive_int("RATE_LIMIT_EMAIL_CHANGE_PER_HOUR", 2), 3600),
    (cfg.positive_int("RATE_LIMIT_EMAIL_CHANGE_PER_DAY", 5), 86400),
)
# How long a link setting a new password (/accounts/password/reset/) may be used (Django's own
# setting); a link also stops working once the password changes or its owner logs in.
PASSWORD_RESET_TIMEOUT = cfg.positive_int("PASSWORD_RESET_LINK_VALIDITY_SECONDS", 24 * 3600)
# Password reset emails one address may be sent (Zulip's password_reset_form_by_email): per hour and per day.
RATE_LIMIT_PASSWORD_RESET = (
    (cfg.positive_int("RATE_LIMIT_PASSWORD_RESET_PER_HOUR", 2), 3600),
    (cfg.positive_int("RATE_LIMIT_PASSWORD_RESET_PER_DAY", 5), 86400),
)
# Password reset emails one IP address may have sent in a day, to any addresses (Zulip's sends_email_by_ip).
RATE_LIMIT_PASSWORD_RESET_PER_IP_PER_DAY = cfg.positive_int("RATE_LIMIT_PASSWORD_RESET_PER_IP_PER_DAY", 5)

# Invitation emails (POST /invites and their resending) an organization may send in 24 hours: a
# member cannot turn the server into a source of spam.
INVITATIONS_PER_DAY = cfg.positive_int("INVITATIONS_PER_DAY", 1000)

# Feature level advertised to Zulip clients; they switch parameter encodings on it.
API_FEATURE_LEVEL = 496
# Fallback domain for hidden email addresses when the organization's host is not a domain.
FAKE_EMAIL_DOMAIN = env.str("FAKE_EMAIL_DOMAIN", default="parley.invalid")

# Prometheus metrics at GET /metrics (apps/core/metrics.py; README "Metrics"): answered to loopback
# addresses, to addresses in METRICS_ALLOWED_NETWORKS (comma-separated CIDRs) when connecting
# directly (not through a proxy), and from anywhere to `Authorization: Bearer <METRICS_BEARER_TOKEN>`
# when set; everyone else gets what a path that does not exist gets.
METRICS_ENABLED = cfg.boolean("METRICS_ENABLED", default=True)
METRICS_ALLOWED_NETWORKS = cfg.networks("METRICS_ALLOWED_NETWORKS")
METRICS_BEARER_TOKEN = cfg.token("METRICS_BEARER_TOKEN", min_length=20)
# The server (config/gunicorn.py) makes the folder its processes write their metrics in; a command
# run with the server's environment before the server ever started must find it too.
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)

LOG_FORMAT = cfg.choice("LOG_FORMAT", "text", ("text", "json"))
LOG_LEVEL = cfg.choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), any_case=True)
# Logs go to standard error, as gunicorn's own do: one stream for everything the server logs, and
# the standard output of operator commands carries only their output (one JSON object with --json).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "apps.core.logging.RequestIdFilter"},
        "server_logger_name": {"()": "apps.core.logging.ServerLoggerNameFilter"},
        "suspicious_request": {"()": "apps.core.logging.SuspiciousRequestFilter"},
        "service_unavailable": {"()": "apps.core.logging.ServiceUnavailableFilter"},
        "task_worker_stop": {"()": "apps.core.logging.TaskWorkerStopFilter"},
    },
    "formatters": {
        "text": {
            "()": "apps.core.logging.TextFormatter",
            "fmt": "%(asctime)s %(levelname)s [%(request_id)s] %(name)s: %(message)s",
        },
        "json": {"()": "apps.core.logging.JsonFormatter"},
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "filters": [
                "request_id",
                "server_logger_name",
                "suspicious_request",
                "service_unavailable",
                "task_worker_stop",
            ],
            "formatter": LOG_FORMAT,
        }
    },
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    "loggers": {
        # Our access log replaces uvicorn's, which knows no request id.
        "uvicorn.access": {"level": "WARNING"},
        "django.request": {"level": "ERROR"},
        "django.server": {"level": "WARNING"},
        # The task worker's own lines ("starting", "no more tasks") every time it looks for work.
        "django_tasks_db": {"level": "WARNING"},
    },
}
