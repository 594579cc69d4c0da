"""The uvicorn worker gunicorn runs (config/gunicorn.py)."""

from uvicorn_worker import UvicornWorker


class ParleyUvicornWorker(UvicornWorker):
    # config/asgi.py uses the lifespan events to start and stop each process's background tasks.
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "lifespan": "on"}
