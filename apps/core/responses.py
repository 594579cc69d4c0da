"""The success envelope: `{"result": "success", "msg": "", ...}`."""

from typing import Any

from django.http import HttpRequest, JsonResponse
from rest_framework.request import Request

from apps.core.params import ignored_parameters


def json_success(request: HttpRequest | Request, data: dict[str, Any] | None = None) -> JsonResponse:
    """A success response; lists the parameters the endpoint did not use, as Zulip does."""
    body: dict[str, Any] = {"result": "success", "msg": "", **(data or {})}
    ignored = ignored_parameters(request)
    if ignored:
        body["ignored_parameters_unsupported"] = ignored
    return JsonResponse(body)
