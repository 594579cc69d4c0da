"""The uvicorn worker gunicorn runs (config/gunicorn.py)."""

import sys

from gunicorn.arbiter import Arbiter
from uvicorn import Server
from uvicorn_worker import UvicornWorker


class ParleyServer(Server):
    async def shutdown(self, sockets=None) -> None:
        from apps.events.lifecycle import end_waiting_polls  # Django is set up by now

        # Waiting long-polls answer as soon as uvicorn's shutdown first yields, which is after it
        # has stopped listening and told every connection to close after its current response.
        end_waiting_polls()
        await super().shutdown(sockets=sockets)


class ParleyUvicornWorker(UvicornWorker):
    # config/asgi.py uses the lifespan events to start and stop each process's background tasks.
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "lifespan": "on"}

    async def _serve(self) -> None:
        # UvicornWorker._serve (uvicorn-worker, pinned), with our Server; tests/e2e/test_events_e2e.py
        # checks that stopping a server answers its waiting polls at once.
        self.config.app = self.wsgi
        server = ParleyServer(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
