"""gunicorn settings: `gunicorn -c config/gunicorn.py config.asgi:application`.

Uvicorn workers run Django under ASGI, so a waiting long-poll holds no thread.
"""

import functools
import importlib
import ipaddress
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

from apps.core.version import PARLEY_VERSION  # noqa: E402
from config.env import ConfigurationError, boolean, choice, positive_int  # noqa: E402
from config.starting import answering_unavailable  # noqa: E402
from config.task_worker import TaskWorkerProcess  # noqa: E402

# The same `.env` the Django settings read, so REDIS_URL there counts here too.
environ.Env.read_env(BASE_DIR / ".env")

# The settings read once here, and this file's own: a value that cannot work stops the server with
# its message alone (each worker would print a traceback, and the task workers be started again and
# again).
try:
    _SETTINGS = importlib.import_module(os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base"))
    _WORKERS = positive_int("WEB_CONCURRENCY", 2 if os.environ.get("REDIS_URL") else 1)
    _LOG_LEVEL = choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), any_case=True)
    _PRODUCTION = os.environ["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
    _LOG_FORMAT = choice("LOG_FORMAT", "json" if _PRODUCTION else "text", ("text", "json"))
    TASK_WORKER = boolean("TASK_WORKER", default=True)
    # Each about 100 MB: a typo of 1000 would start 1000 (the verify QA pass).
    WEBHOOK_WORKERS = positive_int("WEBHOOK_WORKERS", 1, maximum=32)
except ConfigurationError as exc:
    sys.exit(f"Configuration error: {exc}")
except ModuleNotFoundError as exc:
    sys.exit(f"Configuration error: DJANGO_SETTINGS_MODULE: {exc}")


def _check_redis_url() -> None:
    """A Redis that answers, but refuses what REDIS_URL asks of it (a database it does not have, a
    wrong password), can never work: stop with its answer (every request was a 500: the operator QA
    pass). A Redis that does not answer is an outage, not a setting: the server starts and answers
    503 until it is back."""
    import redis

    url = os.environ.get("REDIS_URL")
    if not url:
        return
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    except (redis.exceptions.ResponseError, redis.exceptions.AuthenticationError) as exc:
        sys.exit(f"Configuration error: REDIS_URL: Redis answered: {exc}")
    except redis.exceptions.RedisError:
        pass
    finally:
        client.close()


_check_redis_url()

# Prometheus metrics (apps/core/metrics.py) of every process: each worker, and each task worker
# started below, writes its values to files in this directory, which a scrape adds up. It must be
# set before anything imports prometheus_client, and start empty: a fresh directory, or the one
# PROMETHEUS_MULTIPROC_DIR names, emptied. Not again when this file is read again by the same
# master (SIGHUP reloads it): the running processes' files stay.
if os.environ.get("PARLEY_METRICS_MASTER") != str(os.getpid()):
    os.environ["PARLEY_METRICS_MASTER"] = str(os.getpid())
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="parley-metrics-")
        os.environ["PARLEY_METRICS_DIR_OWNED"] = "1"
    Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)
    for _old in Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).glob("*.db"):
        _old.unlink()
METRICS_DIR = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])

from prometheus_client import multiprocess  # noqa: E402

bind = f"{os.environ.get('BIND_ADDRESS', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
worker_class = "config.workers.ParleyUvicornWorker"
# Without Redis, rate limits (and later event queues) live in one process: run exactly one.
HAS_REDIS = bool(os.environ.get("REDIS_URL"))
workers = _WORKERS
if not HAS_REDIS and workers != 1:
    print("WEB_CONCURRENCY ignored: without REDIS_URL Parley runs a single server process.", flush=True)
    workers = 1
# Longer than the longest long-poll (about 55 s), so a waiting client is never cut off.
timeout = 120
graceful_timeout = 30
keepalive = 75
# gunicorn's control socket defaults to one path per user ($HOME/.gunicorn), which two servers on
# one machine would fight over; signals (HUP to reload, TERM to stop) do the same job.
control_socket_disable = True
# Parley writes its own access log line, with the request id.
accesslog = None
errorlog = "-"
loglevel = _LOG_LEVEL.lower()
# Gunicorn's own lines (serving, workers started and stopped) in the server's format, the settings'
# (config/settings/base.py LOGGING): with LOG_FORMAT=json (production's default) a log collector
# reads nothing but JSON; in text, one line format (the operator QA pass: gunicorn's "[date] [pid]
# [INFO]" lines among the server's).
_FILTERS = ("request_id", "server_logger_name")
_stderr = {"class": "logging.StreamHandler", "formatter": "server", "filters": _FILTERS, "stream": "ext://sys.stderr"}
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {name: _SETTINGS.LOGGING["filters"][name] for name in _FILTERS},
    "formatters": {"server": _SETTINGS.LOGGING["formatters"][_LOG_FORMAT]},
    "handlers": {"console": _stderr, "error_console": _stderr},
    "root": {"level": loglevel.upper(), "handlers": ["console"]},
    "loggers": {"gunicorn.error": {"level": loglevel.upper(), "handlers": ["error_console"], "propagate": False}},
}


# The background task worker runs beside the server unless TASK_WORKER=0 (config/task_worker.py):
# TASK_WORKER, read above.
# Outgoing webhooks (which wait on other people's services) on their own, WEBHOOK_WORKERS of them,
# each delivering one at a time (a slow bot service delays the others' deliveries by up to
# OUTGOING_WEBHOOK_TIMEOUT_SECONDS while all are busy: the bots QA pass); the rest (push
# notifications) on another, so that a slow bot service never delays a notification.
_task_workers: list[TaskWorkerProcess] = []


def set_up_for_make_run(server) -> None:
    """`make run`'s set-up (PARLEY_SET_UP_DEMO: the demo's address): the database migrated and the
    demo organization made (bootstrap_demo), while the static files that changed are collected.
    Made here, once the port listens and before the workers start, the port answering 503 meanwhile
    (config/starting.py): before, it was closed 10-14 s, and zulip-terminal's poll gives up after ten
    refused tries a second apart (the resilience QA pass). A set-up that fails stops the server."""
    demo_url = os.environ.get("PARLEY_SET_UP_DEMO")
    if not demo_url:
        return
    manage = [sys.executable, "manage.py"]
    # Not the server's metrics directory: the set-up's processes are not the server's.
    server_only = {"PROMETHEUS_MULTIPROC_DIR", "PARLEY_METRICS_MASTER", "PARLEY_METRICS_DIR_OWNED"}
    environment = {key: value for key, value in os.environ.items() if key not in server_only}
    # In sessions of their own, so that Ctrl-C reaches the master alone, which stops them quietly
    # (each printed its KeyboardInterrupt traceback: the operator QA pass).
    run = functools.partial(subprocess.Popen, cwd=BASE_DIR, env=environment, start_new_session=True)
    setting_up: list[subprocess.Popen] = []

    def stop(signum: int, frame) -> None:
        for process in setting_up:
            process.terminate()
        _remove_owned_metrics_dir()
        server.log.info("Stopped during the set-up (%s)", signal.Signals(signum).name)
        sys.exit(128 + signum)

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        with answering_unavailable(server.LISTENERS):
            setting_up.append(run([*manage, "collectstatic_changed", "--verbosity", "0"]))
            setting_up.append(run([*manage, "bootstrap_demo", "--migrate", "--url", demo_url]))
            demo, collected = setting_up[1].wait(), setting_up[0].wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if status := demo or collected:
        _remove_owned_metrics_dir()
        sys.exit(status)


def when_ready(server) -> None:
    set_up_for_make_run(server)
    mode = "with Redis" if HAS_REDIS else "embedded mode (no REDIS_URL): state lives in this single process"
    server.log.info("Parley %s serving on http://%s with %d worker(s), %s", PARLEY_VERSION, bind, workers, mode)
    # Not behind a proxy on this machine: EXTERNAL_HOST names where clients reach it (the operator QA
    # pass: the hint was given to a server at chat.example.com behind its local proxy).
    external = os.environ.get("EXTERNAL_HOST", "localhost").rsplit(":", 1)[0]
    if is_loopback(bind.rsplit(":", 1)[0]) and is_loopback(external):
        server.log.info(
            "Only this machine can connect (BIND_ADDRESS %s). For a phone or another computer, serve on "
            "the network and name this machine as they reach it: BIND_ADDRESS=0.0.0.0 "
            "EXTERNAL_HOST=<this machine's address>:%s (README: Connecting a phone)",
            bind.rsplit(":", 1)[0], os.environ.get("PORT", "8000"),
        )  # fmt: skip
    if TASK_WORKER:
        names = ["webhooks"] if WEBHOOK_WORKERS == 1 else [f"webhooks {n}" for n in range(1, WEBHOOK_WORKERS + 1)]
        _task_workers.extend(TaskWorkerProcess(BASE_DIR, server.log, name, ["--queue", "webhooks"]) for name in names)
        _task_workers.append(
            TaskWorkerProcess(BASE_DIR, server.log, "the other tasks", ["--exclude-queue", "webhooks"])
        )
        for worker in _task_workers:
            worker.start()
    else:
        server.log.info("No task worker (TASK_WORKER=0): run `manage.py run_tasks` apart")


def child_exit(server, worker) -> None:
    # The waiting polls it counted (a "livesum" gauge) leave the sum; its counters stay in it.
    multiprocess.mark_process_dead(worker.pid)


def on_exit(server) -> None:
    # Both asked at once, then waited for: a stop takes as long as the slower one, not the sum (a
    # restart keeps the port closed no longer than it must: the resilience QA pass).
    for worker in _task_workers:
        worker.stop()
    for worker in _task_workers:
        worker.wait_stopped(timeout=graceful_timeout)
    _remove_owned_metrics_dir()


def _remove_owned_metrics_dir() -> None:
    if os.environ.get("PARLEY_METRICS_DIR_OWNED"):
        shutil.rmtree(METRICS_DIR, ignore_errors=True)


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return address == "localhost"
