"""The browser's way into the API, as Zulip's web app has it: the same endpoints under /json/...
(config/urls.py mounts each app's urls there as well as under /api/v1), authenticated by Django's
session, with CSRF checked on every unsafe method. /api/v1 takes API keys only and /json/ sessions
only: a page's script cannot be tricked into using a key, and a key cannot skip the CSRF check.

The session's user counts only for the organization of the request's host, while both are active:
the same rule for the sign-in pages (apps.web), uploaded files (apps.uploads) and /json/.
"""

from typing import Any

from django.contrib.auth import get_user
from django.http import HttpRequest
from django.middleware.csrf import CsrfViewMiddleware
from rest_framework.request import Request

from apps.core.auth import authenticated_user, realm_for_request
from apps.core.errors import SESSION_CHALLENGE, CsrfFailedError, UnauthorizedError
from apps.core.notes import request_notes

SESSION_API_PREFIX = "/json/"
# The URL spaces an authentication class serves (its `url_space`).
API_URL_SPACE, SESSION_URL_SPACE = "api", "json"


def is_session_api(request: HttpRequest | Request) -> bool:
    """Whether the request is to the browser's API (/json/...) rather than /api/v1."""
    return request.path_info.startswith(SESSION_API_PREFIX)


def url_space(request: HttpRequest | Request) -> str:
    return SESSION_URL_SPACE if is_session_api(request) else API_URL_SPACE


def session_user(request: HttpRequest, realm: Any) -> Any | None:
    """The user logged in to `realm` in this browser (Django's session), if any: the model instance
    itself, not the lazy `request.user` (actions look at its type)."""
    if not hasattr(request, "session"):
        return None
    user = get_user(request)
    if not user.is_authenticated:
        return None
    if user.realm_id != realm.id or not user.is_active or realm.deactivated:
        return None
    request_notes(request).user_id = user.id  # for the access log
    return user


def credentials_or_session_user(request: HttpRequest) -> Any:
    """Who asks for a file or a picture outside the API (GET only, as an <img> does): API credentials
    (HTTP Basic: the apps) or the organization's browser session; 401 otherwise."""
    if request.META.get("HTTP_AUTHORIZATION"):
        return authenticated_user(request)
    user = session_user(request, realm_for_request(request))
    if user is None:
        raise UnauthorizedError()
    return user


class _CsrfCheck(CsrfViewMiddleware):
    """Django's own CSRF rules (token from the form field or the X-CSRFToken header, the origin
    checks), answering the reason of a refusal instead of a page."""

    def _reject(self, request: HttpRequest, reason: str) -> str:
        return reason


def check_csrf(request: HttpRequest | Request) -> None:
    """Refuse (403 CSRF_FAILED) an unsafe request without the session's CSRF token."""
    check = _CsrfCheck(lambda request: None)
    check.process_request(request)
    reason = check.process_view(request, None, (), {})
    if reason:
        raise CsrfFailedError(reason)


def session_api_user(request: HttpRequest) -> Any:
    """The session's user of the host's organization for a /json/ request (401 with a challenge no
    browser prompts for when there is none; 403 CSRF_FAILED for an unsafe method without the token)."""
    user = session_user(request, realm_for_request(request))
    if user is None:
        raise UnauthorizedError(challenge=SESSION_CHALLENGE)
    check_csrf(request)
    return user
