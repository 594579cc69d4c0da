"""A test client for the directory API that checks every response against its OpenAPI document."""

import base64
import json
import re
from pathlib import Path
from typing import Any

from django.core.exceptions import TooManyFieldsSent
from django.test import Client
from openapi_core import OpenAPI
from openapi_core.contrib.django import DjangoOpenAPIRequest, DjangoOpenAPIResponse
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from openapi_schema_validator import OAS30Validator

from apps.users.models import User

OPENAPI_PATH = Path(__file__).resolve().parents[2] / "apps" / "directory" / "openapi.json"
# Loading checks the document itself against the OpenAPI 3.0 schema.
OPENAPI = OpenAPI.from_file_path(str(OPENAPI_PATH))
ERROR_SCHEMA = json.loads(OPENAPI_PATH.read_text())["components"]["schemas"]["Error"]
ABSENT = object()


class DirectoryOpenAPIRequest(DjangoOpenAPIRequest):
    """The request as the document names its path: our routes are regexes (they ignore empty
    segments, a trailing slash too), so the path is matched against the document's templates instead."""

    @property
    def host_url(self) -> str:
        # The document names no server; the host (even one Django refuses) plays no part.
        return f"{self.request.scheme}://{self.request.META.get('HTTP_HOST', '')}"

    @property
    def path(self) -> str:
        return re.sub("/+", "/", self.request.path).rstrip("/") or "/"

    @property
    def path_pattern(self) -> None:
        return None


def check_response(response) -> None:
    """The response is one the document allows; an error is an `Error` whose request_id is the
    X-Request-Id header's."""
    assert response["X-Request-Id"]
    if response.wsgi_request.method == "HEAD":
        return  # nothing in the body to check
    if response.status_code == 200 and response.wsgi_request.path.rstrip("/") == "/openapi.json":
        return  # the document itself, not one of its operations (test_openapi compares it to the file)
    try:
        OPENAPI.validate_response(DirectoryOpenAPIRequest(response.wsgi_request), DjangoOpenAPIResponse(response))
    except TooManyFieldsSent:  # a query string Django refused: no operation to check it against
        OAS30Validator(ERROR_SCHEMA).validate(response.json())
    except (PathNotFound, OperationNotFound):
        # Not an operation of the document (an unknown path, another method): only an error fits.
        assert response.status_code >= 400, response.content
        OAS30Validator(ERROR_SCHEMA).validate(response.json())
    if response.status_code >= 400:
        assert response["Content-Type"] == "application/json"
        assert response.json()["request_id"] == response["X-Request-Id"]


class DirectoryClient:
    """Requests to the directory API (at the root), authenticated as `user` when given."""

    def __init__(self, user: User | None = None, *, api_key: str | None = None, host: str = "testserver") -> None:
        self.client = Client(raise_request_exception=False)
        self.headers: dict[str, str] = {"HTTP_HOST": host}
        if user is not None:
            token = base64.b64encode(f"{user.delivery_email}:{api_key or user.api_key}".encode()).decode()
            self.headers["HTTP_AUTHORIZATION"] = f"Basic {token}"

    def get(self, path: str, params: dict[str, Any] | None = None, **extra: str):
        return self.request("GET", path, params, **extra)

    def request(self, method: str, path: str, params: dict[str, Any] | None = None, **extra: str):
        query = {name: value for name, value in (params or {}).items() if value is not None}
        response = self.client.generic(method, path, query_params=query, **self.headers, **extra)
        check_response(response)
        return response


def assert_error(response, status: int, message: str | None = None, error_code: Any = ABSENT) -> dict[str, Any]:
    """An `Error` with this status (and message and error_code, when given; None: no error_code)."""
    body = response.json()
    assert response.status_code == status, body
    assert set(body) <= {"message", "request_id", "error_code"}, body
    if message is not None:
        assert body["message"] == message, body
    if error_code is None:
        assert "error_code" not in body, body
    elif error_code is not ABSENT:
        assert body.get("error_code") == error_code, body
    return body


def scan(client: DirectoryClient, **params: Any) -> list[dict[str, Any]]:
    """Every page of GET /users, first to last, following next_page (keeping `limit`, as progenitor does)."""
    pages = []
    response = client.get("/users", params)
    while True:
        assert response.status_code == 200, response.json()
        page = response.json()
        pages.append(page)
        if page["next_page"] is None:
            return pages
        response = client.get("/users", {"page_token": page["next_page"], "limit": params.get("limit")})
