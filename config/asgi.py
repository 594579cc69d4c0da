"""ASGI entry point: `gunicorn config.asgi:application -k uvicorn_worker.UvicornWorker`."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

application = get_asgi_application()
