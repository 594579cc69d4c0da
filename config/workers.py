"""The uvicorn worker gunicorn runs: Django has no ASGI lifespan events, so none are attempted."""

from uvicorn_worker import UvicornWorker


class ParleyUvicornWorker(UvicornWorker):
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "lifespan": "off"}
