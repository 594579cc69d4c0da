"""The directory API (GET /users, /users/{userId}, /version, /openapi.json) with Dropshot's conventions."""

import re
from functools import partial
from pathlib import Path
from urllib.parse import unquote
from uuid import UUID

from django.http import HttpResponse, JsonResponse
from django.utils.cache import get_conditional_response, set_response_etag
from rest_framework.exceptions import NotFound
from rest_framework.request import Request

from apps.core import views as core_views
from apps.core.views import ApiView
from apps.directory import errors
from apps.directory.errors import (
    BadPathParameterError,
    InvalidQueryError,
    PreconditionFailedError,
    UserNotFoundError,
)
from apps.directory.filters import DirectoryUserFilter
from apps.directory.pagination import PageStart, decode_page_token, encode_page_token, parse_limit
from apps.directory.selectors import directory_users, get_directory_user, users_after
from apps.directory.serializers import directory_user_to_dict, user_page_to_dict, version_to_dict

# The spellings of a UUID Rust's uuid (Dropshot's) reads: hyphenated, simple, braced and URN
# (Python's UUID() reads more: hyphens anywhere, braces and prefixes on any form).
_HEX = "[0-9a-fA-F]"
_HYPHENATED = f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
UUID_RE = re.compile(rf"{_HYPHENATED}|{_HEX}{{32}}|\{{{_HYPHENATED}\}}|urn:uuid:{_HYPHENATED}")

# The committed document is the contract; it is served as it is (tests check the two agree).
OPENAPI_DOCUMENT = (Path(__file__).resolve().parent / "openapi.json").read_bytes()


class DirectoryView(ApiView):
    """ApiView's pipeline (organization from the host, HTTP Basic API-key authentication, rate
    limit), GET only, and every error as Dropshot's `Error`."""

    http_method_names = ["get"]

    def get_exception_handler(self):
        return errors.drf_exception_handler

    def initial(self, request: Request, *args, **kwargs) -> None:
        # As Dropshot: the route and method first (a wrong one is a 405), then the path parameters
        # are parsed, before the handler, and so authentication, runs.
        if request.method.lower() in self.http_method_names:
            refuse_encoded_slashes(request)
            self.parse_path_parameters()
        super().initial(request, *args, **kwargs)

    def parse_path_parameters(self) -> None:
        """Parses self.kwargs in place; raises BadPathParameterError."""


def refuse_encoded_slashes(request: Request) -> None:
    """Dropshot splits the path as sent at its slashes, then decodes each segment: an encoded slash
    (%2F) is part of its segment. uvicorn decodes the whole path first (the directory QA pass:
    `/users/%2F` listed the users, as `/users//`), so the path as sent is read again."""
    scope = getattr(request._request, "scope", None)
    raw = scope.get("raw_path") if scope else None
    if not raw or b"%2f" not in raw.lower():
        return
    segments = [unquote(segment) for segment in raw.decode("latin-1").split("/") if segment]
    if len(segments) == 2 and segments[0] == "users":
        raise BadPathParameterError(f"unable to parse '{segments[1]}' as a UUID")
    raise NotFound()


def query_param(request: Request, name: str) -> str | None:
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise InvalidQueryError(f"duplicate field `{name}`")
    return values[0] if values else None


class UsersView(DirectoryView):
    def get(self, request: Request):
        realm = request.user.realm
        limit = parse_limit(query_param(request, "limit"))
        token = query_param(request, "page_token")
        if token is None:
            after, scan = None, {"name": query_param(request, "name")}
        else:
            # As in Dropshot, a scan's parameters come from its token; any on the query are ignored.
            start = decode_page_token(realm, token)
            after, scan = start.after, {"name": start.name}
        filterset = DirectoryUserFilter(scan, queryset=directory_users(request.user))
        if not filterset.is_valid():
            field, messages = next(iter(filterset.errors.items()))
            raise InvalidQueryError(f"{field}: {' '.join(messages)}")
        # One row more than the page tells whether another page follows: no empty last page.
        users = users_after(filterset.qs, after, limit + 1)
        next_page = None
        if len(users) > limit:
            users = users[:limit]
            start = PageStart(after=users[-1][0], name=filterset.form.cleaned_data["name"] or None)
            next_page = encode_page_token(realm, start)
        return JsonResponse(user_page_to_dict(users, next_page))


class UserView(DirectoryView):
    def parse_path_parameters(self) -> None:
        if not UUID_RE.fullmatch(self.kwargs["user_id"]):
            raise BadPathParameterError(f"unable to parse '{self.kwargs['user_id']}' as a UUID")
        self.kwargs["user_id"] = UUID(self.kwargs["user_id"])

    def get(self, request: Request, user_id: str):
        user_uuid = self.kwargs["user_id"]
        user = get_directory_user(request.user, user_uuid)
        if user is None:
            raise UserNotFoundError(user_uuid)
        response = JsonResponse(directory_user_to_dict(user))
        set_response_etag(response)
        # 304 when If-None-Match names this ETag, 412 when If-Match does not hold (Django's
        # conditional GET rules), as an Error. If-Unmodified-Since is ignored, the answer having no
        # date (RFC 9110 13.1.4; Django's check fails it: the directory QA pass).
        request._request.META.pop("HTTP_IF_UNMODIFIED_SINCE", None)
        answer = get_conditional_response(request._request, etag=response["ETag"], response=response)
        if answer.status_code == 412:
            raise PreconditionFailedError()
        return answer


class VersionView(DirectoryView):
    # Anyone may ask: credentials sent are not looked at.
    authentication_classes = permission_classes = ()

    def get(self, request: Request):
        return JsonResponse(version_to_dict())


class OpenApiView(DirectoryView):
    # Anyone may ask: credentials sent are not looked at.
    authentication_classes = permission_classes = ()

    def get(self, request: Request):
        return HttpResponse(OPENAPI_DOCUMENT, content_type="application/json")


# Django's own error answers (unknown paths under the directory's URLs, crashes outside a view, bad
# hosts) as `Error`s; config/urls.py uses them for the directory's URL space.
not_found = partial(core_views.not_found, render=errors.error_response)
bad_request = partial(core_views.bad_request, render=errors.error_response)
permission_denied = partial(core_views.permission_denied, render=errors.error_response)
server_error = partial(core_views.server_error, render=errors.error_response)
