"""Settings for the test suite: SQLite (or DATABASE_URL), Redis only when REDIS_URL is set."""

import os

from config.env import SQLITE_ENGINE
from config.settings.base import *  # noqa: F403
from config.settings.base import DATABASES, VAR_DIR

EXTERNAL_HOST = "testserver"
ALLOWED_HOSTS = ["testserver", ".testserver", "localhost", "127.0.0.1"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
FAKE_EMAIL_DOMAIN = "parley.invalid"

# Each pytest-xdist worker has its own database and its own Redis key namespace.
_worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
if DATABASES["default"]["ENGINE"] == SQLITE_ENGINE:
    # A file, not :memory:, so that a real server process started by a test can share it.
    DATABASES["default"]["NAME"] = str(VAR_DIR / "test" / f"parley-{_worker}.sqlite3")
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test" / f"test-parley-{_worker}.sqlite3")}
    (VAR_DIR / "test").mkdir(parents=True, exist_ok=True)
REDIS_KEY_PREFIX = f"parley-test-{_worker}"
if "KEY_PREFIX" in CACHES["default"]:  # noqa: F405
    CACHES["default"]["KEY_PREFIX"] = REDIS_KEY_PREFIX  # noqa: F405

LOGGING["root"]["level"] = "WARNING"  # noqa: F405
# The manifest storage needs `collectstatic` first, which the test suite does not run.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
# Uploaded files of each worker (and of the servers its tests start) in a folder of their own.
STORAGES["uploads"] = {
    "BACKEND": "django.core.files.storage.FileSystemStorage",
    "OPTIONS": {"location": str(VAR_DIR / "test" / f"uploads-{_worker}")},
}
