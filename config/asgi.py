"""The ASGI application gunicorn's uvicorn workers serve; how requests are served is decided here.

- GET /api/v1/events (the long-poll, most requests of a busy server) goes to a thin route in front
  of Django (apps/events/asgi.py): a waiting poll holds no thread and little memory.
- GET /health/live is answered on the event loop, so that it holds while every thread is busy.
- Everything else goes to Django, whose synchronous code runs on ASGI_THREADS long-lived threads
  per process (apps/core/asgi.py) instead of a new thread per request.
- At start-up each process subscribes to event notifications (with Redis) and starts the periodic
  sweep of expired event queues.

The measurements behind these choices are in benchmarks/events/README.md. ASGI_MODE selects the
alternatives measured there: "pooled-django" (every request, polls included, through Django on the
pooled threads) and "stock-django" (Django's own handler, a new thread per request).
"""

import gc
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
django.setup(set_prefix=False)

from django.conf import settings  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402

from apps.core.asgi import PooledASGIHandler, answer_liveness_probe, executor_pool, is_liveness_probe  # noqa: E402
from apps.events.asgi import EventsPollApp, is_events_poll  # noqa: E402
from apps.events.lifecycle import background_tasks  # noqa: E402

django_app = get_asgi_application() if settings.ASGI_MODE == "stock-django" else PooledASGIHandler(executor_pool())
events_app = EventsPollApp() if settings.ASGI_MODE == "thin-route" else django_app


# What the imports and Django's set-up built lives as long as the process: out of the collector's
# sight, full collections no longer walk it (in a worker holding 1,000 polls they took ~90 ms, a
# pause every answer waits for; 17-35 ms after: benchmarks/events/README.md).
gc.freeze()


async def application(scope, receive, send) -> None:
    if scope["type"] == "lifespan":
        await background_tasks.serve_lifespan(receive, send)
    elif is_events_poll(scope):
        await events_app(scope, receive, send)
    elif is_liveness_probe(scope):
        await answer_liveness_probe(scope, receive, send)
    else:
        await django_app(scope, receive, send)
