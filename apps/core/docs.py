"""The messaging API's OpenAPI document (GET /api/v1/openapi.json) and its docs page (GET /api/docs/)."""

from typing import Any

from django.http import HttpResponse, JsonResponse
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny
from rest_framework.request import Request

from apps.core.openapi import API_PREFIX, TITLE, openapi_document
from apps.core.views import ApiView


class OpenApiDocumentView(ApiView):
    """GET /api/v1/openapi.json: this document. No credentials needed."""

    authentication_classes: list = []
    permission_classes: list = []

    def get(self, request: Request) -> JsonResponse:
        return JsonResponse(openapi_document())


# Swagger UI's files come from our static files (drf-spectacular-sidecar), its start-up script from
# this page's own URL (`?script`): no other origin and no inline script. Its styles are partly inline.
DOCS_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"


class ApiDocsView(SpectacularSwaggerSplitView):
    """GET /api/docs/: the document in Swagger UI, served by this server alone."""

    # Not OPTIONS: REST framework's metadata answer has no template for this page's renderer.
    http_method_names = ["get", "head"]
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []
    url = API_PREFIX + "openapi.json"
    title = TITLE

    def finalize_response(self, request: Request, response: HttpResponse, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Content-Security-Policy"] = DOCS_CSP
        return response
