"""What Parley learns about a request while serving it, in one typed place (Zulip's RequestNotes).

Middleware, authentication, rate limits and parameter parsing each fill in their part; the access
log, the response headers and `ignored_parameters_unsupported` read it back. The long-poll route,
which serves GET /events without a Django request, keeps the same notes on its PollRequest.
"""

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, QueryDict
from rest_framework.request import Request

from apps.core.ratelimit import RateLimitState


@dataclass(slots=True)
class RequestNotes:
    request_id: str = "-"
    # The organization the request's host names (resolved once; see apps.core.auth).
    realm: Any = None
    # The organization's id where no Realm is at hand (the long-poll route's cached credentials).
    realm_id: int | None = None
    # Who authenticated, and from where (the client's address, a trusted proxy's X-Forwarded-For):
    # for the access log line.
    user_id: int | None = None
    client: str | None = None
    # The rate limit this request was counted against: for the X-RateLimit-* headers.
    rate_limit: RateLimitState | None = None
    # The merged form-body and query parameters (apps.core.params), and those an endpoint read.
    params: QueryDict | None = None
    used_params: frozenset[str] = frozenset()  # the empty one is shared: a waiting poll allocates none


def request_notes(request: HttpRequest | Request) -> RequestNotes:
    """The notes of `request` (a Django request or REST framework's wrapper of one)."""
    django_request = request._request if isinstance(request, Request) else request
    try:
        return django_request.parley_notes
    except AttributeError:
        notes = django_request.parley_notes = RequestNotes()
        return notes
