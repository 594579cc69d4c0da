"""/api/v1/openapi.json: served without credentials, valid OpenAPI 3.1, describing every /api/v1 route
with the parameters its handler parses, in Zulip's wire format; and the checks every API test makes
against it (tests/openapi/contract.py) refuse what the document does not allow."""

import json
import re

import pytest
from django.test import Client
from openapi_core.validation.response.exceptions import InvalidData
from openapi_spec_validator import validate
from openapi_spec_validator.versions.shortcuts import get_spec_version

from apps.core.errors import ErrorCode
from apps.core.notes import request_notes
from apps.core.openapi import api_routes, declared_params, openapi_document, path_template
from apps.messages.serializers import GetMessagesParams, SendMessageParams
from tests.api import ApiClient, assert_success, handlers_of
from tests.openapi.contract import check_response
from tests.reliability.sweep import params_used_by

METHODS = ("get", "post", "put", "patch", "delete")
DOCUMENT = openapi_document()


def routes() -> list[tuple[str, str, object]]:
    """(path template, method, handler) of every /api/v1 route Django serves (a method its view
    class refuses, `http_method_names`, is a 405: not served)."""

    found = []
    for route, view in api_routes():
        allowed = getattr(getattr(view, "cls", None) or view.view_class, "http_method_names", METHODS)
        handlers = handlers_of(view).items()
        found.extend((path_template(route), m, h) for m, h in handlers if m in METHODS and m in allowed)
    return found


def test_served_without_credentials_as_valid_openapi_3_1(realm):
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    served = response.json()
    assert served == json.loads(json.dumps(DOCUMENT))
    validate(served)
    assert (get_spec_version(served).major, get_spec_version(served).minor) == ("3", "1")
    # Valid JSON text for strict tools (the fuzz QA pass: schemathesis could not load patterns
    # holding lone surrogates, which no UTF-8 can carry).
    json.dumps(served, ensure_ascii=False).encode("utf-8")


def test_every_api_route_is_documented_and_nothing_else():
    served = {(path, method) for path, method, _ in routes()}
    documented = {(path, method) for path, item in DOCUMENT["paths"].items() for method in item if method in METHODS}
    assert len(served) > 100
    assert served - documented == set(), "routes the document does not describe"
    assert documented - served == set(), "operations no route serves"
    assert "/api/v1/events" in DOCUMENT["paths"]  # a plain Django view (the long-poll route's twin)


def test_each_handler_declares_the_params_classes_its_code_parses():
    """@uses_params is what the document reads; the classes a handler's code names must be those."""
    mismatched = {
        f"{method.upper()} {path}": (declared_params(handler), params_used_by(handler))
        for path, method, handler in routes()
        if set(declared_params(handler)) != set(params_used_by(handler))
    }
    assert mismatched == {}


def test_get_parameters_are_in_the_query_json_valued_ones_as_json():
    operation = DOCUMENT["paths"]["/api/v1/messages"]["get"]
    assert "requestBody" not in operation
    parameters = {p["name"]: p for p in operation["parameters"]}
    assert set(parameters) == set(GetMessagesParams.parameter_names())
    assert all(p["in"] == "query" for p in parameters.values())
    # narrow is a JSON list in the field; anchor is text ("newest", or digits)
    assert parameters["narrow"]["content"]["application/json"]["schema"]["type"] == "array"
    assert "content" not in parameters["anchor"]
    assert parameters["num_before"]["content"]["application/json"]["schema"]["type"] == "integer"


def test_other_methods_take_a_form_body_json_valued_fields_encoded_as_json():
    operation = DOCUMENT["paths"]["/api/v1/messages"]["post"]
    assert "parameters" not in operation
    body = operation["requestBody"]["content"]["application/x-www-form-urlencoded"]
    assert set(body["schema"]["properties"]) == set(SendMessageParams.parameter_names())
    assert set(body["schema"]["required"]) == {"type", "content"}  # `to`: a bot may post to its default channel
    assert body["schema"]["properties"]["type"]["enum"] == ["stream", "channel", "private", "direct"]
    assert body["encoding"]["read_by_sender"] == {"contentType": "application/json"}
    assert "content" not in body["encoding"]  # a string is sent as it is
    subscribe = DOCUMENT["paths"]["/api/v1/users/me/subscriptions"]["post"]["requestBody"]
    form = subscribe["content"]["application/x-www-form-urlencoded"]
    assert form["encoding"]["subscriptions"] == {"contentType": "application/json"}
    assert form["schema"]["properties"]["subscriptions"]["type"] == "array"


def test_every_operation_answers_the_envelopes():
    schemas = DOCUMENT["components"]["schemas"]
    assert schemas["Error"]["required"] == ["result", "msg", "code"]
    assert schemas["Error"]["properties"]["code"]["enum"] == [str(code) for code in ErrorCode]
    assert schemas["Success"]["required"] == ["result", "msg"]
    for path, item in DOCUMENT["paths"].items():
        for _method, operation in item.items():
            responses = operation["responses"]
            assert responses["4XX"] == responses["5XX"] == {"$ref": "#/components/responses/Error"}, path
            success = responses["200"]["content"]["application/json"]["schema"]
            envelope = {"$ref": "#/components/schemas/Success"}
            assert success == envelope or success["allOf"][0] == envelope, path


def test_credentials_are_http_basic_and_optional_only_where_the_view_says_so():
    assert DOCUMENT["components"]["securitySchemes"]["basicAuth"]["type"] == "http"
    assert DOCUMENT["components"]["securitySchemes"]["basicAuth"]["scheme"] == "basic"
    paths = DOCUMENT["paths"]
    assert paths["/api/v1/users/me"]["get"]["security"] == [{"basicAuth": []}]
    assert {} in paths["/api/v1/server_settings"]["get"]["security"]
    assert {} in paths["/api/v1/openapi.json"]["get"]["security"]
    assert paths["/api/v1/events"]["get"]["security"] == [{"basicAuth": []}]


def test_the_check_refuses_a_body_the_document_does_not_allow(member):
    response = ApiClient(member).get("/users/me")
    assert_success(response)
    response.content = json.dumps({"result": "fine", "msg": ""}).encode()
    with pytest.raises(InvalidData):
        check_response(response)


def test_the_check_refuses_a_parameter_the_document_does_not_list(member):
    response = ApiClient(member).get("/users/me")
    notes = request_notes(response.wsgi_request)
    notes.used_params = notes.used_params | {"secret_option"}
    with pytest.raises(AssertionError, match="secret_option"):
        check_response(response)


def test_docs_page_is_swagger_ui_from_our_own_static_files(realm):
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src" not in policy
    html = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert all(source.startswith("/") for source in sources), sources
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in sources
    assert "<script>" not in html
    script = Client().get("/api/docs/?script=")
    assert script.status_code == 200
    assert "/api/v1/openapi.json" in script.content.decode()
