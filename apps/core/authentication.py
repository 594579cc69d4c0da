"""REST framework's authentication classes: an API email and key over HTTP Basic for /api/v1, the
browser's session (with its CSRF token) for the same endpoints under /json/ (apps.core.sessions).
Each serves its own URL space only (`url_space`; ApiViewMixin.get_authenticators keeps those).

The rules are apps.core.auth's; a refusal keeps its Zulip error (message, code, status), carried
through REST framework's AuthenticationFailed so that the request counts as unauthenticated (the
rate limit then counts it against the client's address).
"""

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from apps.core.auth import authenticated_user, realm_for_request
from apps.core.errors import SESSION_CHALLENGE, JsonableError
from apps.core.notes import request_notes
from apps.core.sessions import API_URL_SPACE, SESSION_URL_SPACE, check_csrf, session_user


class ApiAuthenticationFailed(exceptions.AuthenticationFailed):
    """A refused authentication; `error` is what the client is told (apps.core.errors renders it)."""

    def __init__(self, error: JsonableError) -> None:
        super().__init__(error.msg)
        self.error = error


class ApiKeyAuthentication(BaseAuthentication):
    """HTTP Basic with the API email (or the delivery email) and the API key of the host's organization.

    No Authorization header is no attempt (another authenticator, or the permission that asks for a
    user, decides); a header that fails is a refusal, whatever else could authenticate the request.
    An incoming webhook bot is refused unless the view lists the method in
    `incoming_webhook_bot_methods` (apps.core.auth.authenticated_user).
    """

    url_space = API_URL_SPACE

    def authenticate(self, request: Request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        view = request.parser_context.get("view")
        webhook_methods = getattr(view, "incoming_webhook_bot_methods", ())
        try:
            user = authenticated_user(request._request, incoming_webhook_bots=request.method.lower() in webhook_methods)
        except JsonableError as error:
            raise ApiAuthenticationFailed(error) from None
        request_notes(request).user_id = user.id
        return user, None

    def authenticate_header(self, request: Request) -> str:
        return 'Basic realm="zulip"'


class SessionAuthentication(BaseAuthentication):
    """The browser's session, for /json/...: no session is no attempt (the permission asking for a
    user answers 401); a session without the CSRF token on an unsafe method is refused (403)."""

    url_space = SESSION_URL_SPACE

    def authenticate(self, request: Request):
        user = session_user(request._request, realm_for_request(request._request))
        if user is None:
            return None
        try:
            check_csrf(request)  # REST framework's request: its parsed body is where the token may be
        except JsonableError as error:
            raise ApiAuthenticationFailed(error) from None
        request_notes(request).user_id = user.id
        return user, None

    def authenticate_header(self, request: Request) -> str:
        return SESSION_CHALLENGE
