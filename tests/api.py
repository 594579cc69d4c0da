"""A test client that talks to /api/v1 the way the official Zulip client does."""

import base64
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.test import Client
from django.views import View

from apps.users.models import User
from tests.openapi.contract import PROJECT_URLCONF, check_response


def encode_params(params: dict[str, Any] | None) -> dict[str, str]:
    """Strings raw, everything else as JSON text; None values left out (zulip's do_api_query)."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in (params or {}).items() if v is not None}


class ApiClient:
    def __init__(
        self,
        user: User | None = None,
        *,
        email: str | None = None,
        api_key: str | None = None,
        host: str = "testserver",
        authorization: str | None = None,
    ) -> None:
        self.client = Client(raise_request_exception=False)
        self.host = host
        self.headers: dict[str, str] = {"HTTP_HOST": host}
        if user is not None:
            email = email or user.delivery_email
            api_key = api_key or user.api_key
        if authorization is not None:
            self.headers["HTTP_AUTHORIZATION"] = authorization
        elif email is not None and api_key is not None:
            token = base64.b64encode(f"{email}:{api_key}".encode()).decode()
            self.headers["HTTP_AUTHORIZATION"] = f"Basic {token}"

    @staticmethod
    def url(path: str) -> str:
        return path if path.startswith(("/api/", "/health/", "/admin/")) else f"/api/v1{path}"

    def get(self, path: str, params: dict[str, Any] | None = None, **extra: str):
        response = self.client.get(self.url(path), encode_params(params), **self.headers, **extra)
        return self.checked(response)

    def request(self, method: str, path: str, params: dict[str, Any] | None = None, **extra: str):
        body = urlencode(encode_params(params))
        response = self.client.generic(
            method,
            self.url(path),
            body,
            content_type="application/x-www-form-urlencoded",
            **self.headers,
            **extra,
        )
        return self.checked(response)

    @staticmethod
    def checked(response):
        """Answers under /api/v1 are checked against the OpenAPI document (tests/openapi/contract.py)."""
        if response.wsgi_request.path.startswith("/api/v1/") and settings.ROOT_URLCONF == PROJECT_URLCONF:
            check_response(response)  # not a test's own routes (@pytest.mark.urls)
        return response

    def post(self, path: str, params: dict[str, Any] | None = None, **extra: str):
        return self.request("POST", path, params, **extra)

    def patch(self, path: str, params: dict[str, Any] | None = None, **extra: str):
        return self.request("PATCH", path, params, **extra)

    def put(self, path: str, params: dict[str, Any] | None = None, **extra: str):
        return self.request("PUT", path, params, **extra)

    def delete(self, path: str, params: dict[str, Any] | None = None, **extra: str):
        return self.request("DELETE", path, params, **extra)


def api_for(user: User) -> ApiClient:
    """An API client of `user`, on their organization's host."""
    subdomain = user.realm.string_id
    return ApiClient(user, host=f"{subdomain}.testserver" if subdomain else "testserver")


def assert_success(response) -> dict[str, Any]:
    assert response["Content-Type"] == "application/json", response.content
    body = response.json()
    assert response.status_code == 200, body
    assert body["result"] == "success", body
    assert body["msg"] == "", body
    return body


def assert_error(response, status: int, code: str, msg: str | None = None) -> dict[str, Any]:
    assert response["Content-Type"] == "application/json", response.content
    body = response.json()
    assert response.status_code == status, body
    assert body["result"] == "error", body
    assert body["code"] == code, body
    if msg is not None:
        assert body["msg"] == msg, body
    return body


def handlers_of(view: Callable) -> dict[str, Callable]:
    """{method: handler} of a URL pattern's view: the methods its class defines (not Django's
    OPTIONS), or the actions a router gave a ViewSet (not the HEAD it adds for GET)."""
    if hasattr(view, "actions"):
        return {method: getattr(view.cls, name) for method, name in view.actions.items() if method != "head"}
    cls = view.view_class
    return {m: getattr(cls, m) for m in View.http_method_names if getattr(cls, m, None) not in (None, View.options)}
