"""The success envelope: `{"result": "success", "msg": "", ...}`."""

from typing import Any

from django.http import HttpRequest
from rest_framework.request import Request

from apps.core.encoding import CompactJsonResponse
from apps.core.params import ignored_parameters


def json_success(request: HttpRequest | Request, data: dict[str, Any] | None = None) -> CompactJsonResponse:
    """A success response; lists the parameters the endpoint did not use, as Zulip does."""
    return CompactJsonResponse(success_body(data, ignored_parameters(request)))


def success_body(data: dict[str, Any] | None, ignored: list[str]) -> dict[str, Any]:
    """The success envelope around `data`, with the parameters the endpoint did not use."""
    body: dict[str, Any] = {"result": "success", "msg": "", **(data or {})}
    if ignored:
        body["ignored_parameters_unsupported"] = ignored
    return body
