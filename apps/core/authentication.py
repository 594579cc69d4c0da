"""REST framework's authentication class for the API: an API email and key over HTTP Basic.

The rules are apps.core.auth's; a refusal keeps its Zulip error (message, code, status), carried
through REST framework's AuthenticationFailed so that the request counts as unauthenticated (the
rate limit then counts it against the client's address).
"""

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from apps.core.auth import authenticated_user
from apps.core.errors import JsonableError
from apps.core.notes import request_notes


class ApiAuthenticationFailed(exceptions.AuthenticationFailed):
    """A refused authentication; `error` is what the client is told (apps.core.errors renders it)."""

    def __init__(self, error: JsonableError) -> None:
        super().__init__(error.msg)
        self.error = error


class ApiKeyAuthentication(BaseAuthentication):
    """HTTP Basic with the API email (or the delivery email) and the API key of the host's organization.

    No Authorization header is no attempt (another authenticator, or the permission that asks for a
    user, decides); a header that fails is a refusal, whatever else could authenticate the request.
    """

    def authenticate(self, request: Request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        try:
            user = authenticated_user(request._request)
        except JsonableError as error:
            raise ApiAuthenticationFailed(error) from None
        request_notes(request).user_id = user.id
        return user, None

    def authenticate_header(self, request: Request) -> str:
        return 'Basic realm="zulip"'
