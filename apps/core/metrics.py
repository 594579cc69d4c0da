"""Prometheus metrics: the series Parley exports at GET /metrics, and who may read them.

The server (config/gunicorn.py) sets PROMETHEUS_MULTIPROC_DIR to a fresh directory before its
processes start: every gunicorn worker and task worker then writes its values to files there, and a
scrape, answered by whichever worker gets it, adds up those of every process (prometheus-client's
multiprocess mode). Without it (tests, a management command) the values are this process's own.
Figures that are the state of a shared store (event queues in Redis) are read when scraped, from
the functions apps register with `scrape_collectors`.

Labels take only bounded values: the route template of a request (`/api/v1/messages/<int:message_id>`),
never its path; the method from a fixed set; event types and task names from the code.
"""

import hmac
import ipaddress
import os
import re
from collections.abc import Iterable
from functools import cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, multiprocess
from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import Metric

from apps.core.hooks import Hooks

METRICS_PATH = "/metrics"

# Long-polls wait up to ~55 s: the last buckets are theirs.
REQUEST_SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
# Zulip alerts when send -> receive passes 3 s; the buckets are finer below that.
WAKE_SECONDS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10)

HTTP_REQUESTS = Counter(
    "parley_http_requests",
    "HTTP requests answered, by route template, method and status",
    ["route", "method", "status"],
)
HTTP_REQUEST_SECONDS = Histogram(
    "parley_http_request_duration_seconds",
    "Time to answer an HTTP request (a long-poll: its whole wait), by route template and method",
    ["route", "method"],
    buckets=REQUEST_SECONDS_BUCKETS,
)
POLLS_WAITING = Gauge(
    "parley_event_polls_waiting",
    "Long-polls (GET /api/v1/events) waiting for events right now, in every server process",
    multiprocess_mode="livesum",
)
WAKE_SECONDS = Histogram(
    "parley_event_wake_latency_seconds",
    "From an event's publication to the answer of the waiting long-poll it woke",
    buckets=WAKE_SECONDS_BUCKETS,
)
EVENTS_PUBLISHED = Counter("parley_events_published", "Events published to the event queues, by type", ["type"])
EVENT_QUEUES_REMOVED = Counter(
    "parley_event_queues_removed",
    "Event queues deleted by the server (expired: idle past their lifespan; too_many_queues: their "
    "user's least recently used past EVENT_QUEUE_MAX_PER_USER; too_many_events: past "
    "EVENT_QUEUE_MAX_EVENTS) or by their client (deleted)",
    ["reason"],
)
DEPENDENCY_ERRORS = Counter(
    "parley_dependency_errors",
    "Failures to reach a dependency (database: PostgreSQL or SQLite; redis)",
    ["dependency"],
)
TASKS = Counter(
    "parley_tasks",
    "Background tasks queued (once committed), succeeded, failed, or retried later",
    ["task", "outcome"],
)

HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

# Functions returning Prometheus metric families computed when /metrics is scraped (apps.events:
# the event queues' count and lengths). A function whose store cannot be reached returns none.
scrape_collectors = Hooks("scrape_collectors")


# The labelled children of the two request series, by (route, method, status): labels() takes a
# lock and builds its key every time, and every answered long-poll comes here.
_request_children: dict[tuple[str, str, int], tuple] = {}


def record_request(route: str, method: str, status: int, seconds: float) -> None:
    key = (route, method if method in HTTP_METHODS else "other", status)
    children = _request_children.get(key)
    if children is None:
        children = (HTTP_REQUESTS.labels(key[0], key[1], str(status)), HTTP_REQUEST_SECONDS.labels(key[0], key[1]))
        _request_children[key] = children
    children[0].inc()
    children[1].observe(seconds)


def count_dependency_error(dependency: str) -> None:
    DEPENDENCY_ERRORS.labels(dependency).inc()


# --- route templates ---------------------------------------------------------------------------

# A named group of a regular-expression route (REST framework's routers), written as path() writes it.
_NAMED_GROUP_RE = re.compile(r"\(\?P<(\w+)>(?:[^()]|\([^()]*\))*\)")


@cache
def route_template(route: str) -> str:
    """Django's `ResolverMatch.route` as a label: `/api/v1/user_groups/<pk>` for a router's
    `api/v1/^user_groups/(?P<pk>[^/.]+)$`."""
    template = _NAMED_GROUP_RE.sub(r"<\1>", route)
    for regex_only in ("^", "$", "/?", "\\"):
        template = template.replace(regex_only, "")
    # The directory's routes ignore empty segments ("/*", "/+": apps/directory/urls.py).
    return "/" + template.replace("/*", "").replace("/+", "/")


def route_label(request: HttpRequest, early_paths: Iterable[str] = ()) -> str:
    """The request's route template; paths answered before URL resolution (probes) are their own
    template, static files one template, and a path that matches no route `<unmatched>`."""
    match = getattr(request, "resolver_match", None)
    if match is not None:
        return route_template(match.route)
    path = request.path
    if path in early_paths:
        return path
    if path.startswith("/" + settings.STATIC_URL.lstrip("/")):
        return "/" + settings.STATIC_URL.lstrip("/") + "*"
    return "<unmatched>"


# --- who may read them ---------------------------------------------------------------------------

# Headers a proxy adds: the peer's address is then the proxy's, which says nothing about the client.
_PROXY_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


@cache
def _networks(cidrs: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


def may_read_metrics(request: HttpRequest) -> bool:
    """Whether the request may read /metrics: the bearer token (METRICS_BEARER_TOKEN, if set) from
    anywhere; else a direct connection (no proxy's headers) from a loopback address or one in
    METRICS_ALLOWED_NETWORKS."""
    if not settings.METRICS_ENABLED:
        return False
    token = settings.METRICS_BEARER_TOKEN
    if token:
        scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return True
    if any(header in request.META for header in _PROXY_HEADERS):
        return False
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return True
    return any(address in network for network in _networks(tuple(settings.METRICS_ALLOWED_NETWORKS)))


# --- the exposition ------------------------------------------------------------------------------


class _ThisProcess:
    """The values of this process (no PROMETHEUS_MULTIPROC_DIR)."""

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


class _ScrapeTime:
    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        for families in scrape_collectors.call():
            yield from families


def exposition() -> bytes:
    registry = CollectorRegistry(auto_describe=True)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_ThisProcess())
    registry.register(_ScrapeTime())
    return generate_latest(registry)


def metrics_response() -> HttpResponse:
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
