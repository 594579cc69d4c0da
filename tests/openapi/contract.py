"""Every answer of the shared API client (tests/api.py) checked against /api/v1/openapi.json, so the
document cannot drift from the code: the status and body must be ones the operation documents, and
every parameter the view read must be one the operation documents."""

import threading
from functools import cache
from typing import Any

from django.conf import settings
from django.core.exceptions import TooManyFieldsSent
from django.http import HttpRequest, HttpResponse
from openapi_core import OpenAPI
from openapi_core.contrib.django import DjangoOpenAPIRequest, DjangoOpenAPIResponse
from openapi_core.datatypes import RequestParameters
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from openapi_schema_validator import OAS31Validator

from apps.core.notes import request_notes
from apps.core.openapi import openapi_document

# The document describes the project's routes; a test with routes of its own (@pytest.mark.urls)
# is not checked against it.
PROJECT_URLCONF = settings.ROOT_URLCONF


_building = threading.Lock()


@cache
def _openapi() -> OpenAPI:
    # Loading checks the document against the OpenAPI 3.1 schema.
    return OpenAPI.from_dict(openapi_document())


def openapi() -> OpenAPI:
    """The document, built once: by one thread at a time (tests that run requests at once,
    tests.concurrency, may be the first to ask; drf-spectacular's generation is not thread-safe)."""
    with _building:
        return _openapi()


class ApiOpenAPIRequest(DjangoOpenAPIRequest):
    def __init__(self, request: HttpRequest) -> None:
        try:
            super().__init__(request)
        except TooManyFieldsSent:  # a query string Django refused: the answer is what is checked
            self.request = request
            self.parameters = RequestParameters(path=request.resolver_match.kwargs if request.resolver_match else {})

    @property
    def host_url(self) -> str:
        # The document names no server: the host (an organization's subdomain) plays no part.
        return f"{self.request.scheme}://{self.request.META.get('HTTP_HOST', '')}"

    @property
    def body(self) -> bytes:
        return b""  # only responses are checked; a body Django refused (too big) cannot be read again


def documented_parameters(path: str, method: str) -> set[str]:
    operation = openapi_document()["paths"][path].get(method, {})
    names = {parameter["name"] for parameter in operation.get("parameters", ()) if parameter["in"] == "query"}
    for media in operation.get("requestBody", {}).get("content", {}).values():
        names.update(media["schema"].get("properties", {}))
    return names


def check_response(response: HttpResponse) -> None:
    """The response is one the document allows for its request (an error envelope for a path or
    method the document does not have), and the parameters the view read are documented."""
    request = response.wsgi_request
    if request.method == "HEAD" or response.status_code == 304:
        return  # no body to check
    openapi_request = ApiOpenAPIRequest(request)
    try:
        openapi().validate_response(openapi_request, DjangoOpenAPIResponse(response))
    except (PathNotFound, OperationNotFound):
        assert response.status_code >= 400, response.content
        OAS31Validator(error_schema()).validate(response.json())
        return
    route = openapi_request.path_pattern
    if route is not None and request.method.lower() not in openapi_document()["paths"].get(route, {}):
        # A route's undocumented method: what openapi-core matched it with is another template.
        assert response.status_code == 405, response.content
        return
    if route is not None and response.status_code < 500:
        used = request_notes(request).used_params
        undocumented = used - documented_parameters(route, request.method.lower())
        assert not undocumented, f"{request.method} {route} reads {sorted(undocumented)}, not in the document"


@cache
def error_schema() -> dict[str, Any]:
    return openapi_document()["components"]["schemas"]["Error"]
