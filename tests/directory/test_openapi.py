"""The OpenAPI document: committed, served as it is, valid 3.0, and shaped the way generated
Dropshot clients need (progenitor's conditions for its paginated stream helper)."""

import json

from openapi_spec_validator import validate
from openapi_spec_validator.versions.shortcuts import get_spec_version

from apps.directory.pagination import DEFAULT_LIMIT, MAX_LIMIT, MAX_TOKEN_LENGTH, NAME_FILTER_MAX_LENGTH
from tests.directory.api import OPENAPI_PATH, DirectoryClient

DOCUMENT = json.loads(OPENAPI_PATH.read_text())


def test_served_document_is_the_committed_file(realm):
    response = DirectoryClient().get("/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.content == OPENAPI_PATH.read_bytes()


def test_document_is_openapi_3_0_version_1_0_0():
    validate(DOCUMENT)
    assert (get_spec_version(DOCUMENT).major, get_spec_version(DOCUMENT).minor) == ("3", "0")
    assert DOCUMENT["openapi"].startswith("3.0.")
    assert DOCUMENT["info"]["version"] == "1.0.0"
    assert sorted(DOCUMENT["paths"]) == ["/users", "/users/{userId}", "/version"]


def test_user_list_meets_progenitors_pagination_conditions():
    operation = DOCUMENT["paths"]["/users"]["get"]
    assert operation["x-dropshot-pagination"] == {"required": []}
    query = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
    assert {"limit", "page_token"} <= set(query)
    assert not any(p.get("required") for p in query.values())
    assert query["limit"]["schema"] == {"nullable": True, "type": "integer", "format": "uint32", "minimum": 1}
    page = DOCUMENT["components"]["schemas"]["UserResultsPage"]
    assert set(page["properties"]) == {"items", "next_page"}
    assert page["required"] == ["items"]
    assert page["properties"]["next_page"] == {
        "nullable": True,
        "description": "token used to fetch the next page of results (if any)",
        "type": "string",
    }


def test_every_operation_answers_errors_with_the_error_schema():
    error = DOCUMENT["components"]["schemas"]["Error"]
    assert error["required"] == ["message", "request_id"]
    assert all(schema == {"type": "string"} for schema in error["properties"].values())
    for path_item in DOCUMENT["paths"].values():
        responses = path_item["get"]["responses"]
        assert responses["4XX"] == responses["5XX"] == {"$ref": "#/components/responses/Error"}


def test_documented_limits_are_the_servers():
    description = DOCUMENT["paths"]["/users"]["get"]["description"]
    assert f"a page holds {DEFAULT_LIMIT} users" in description
    assert f"above {MAX_LIMIT} is served as {MAX_LIMIT}" in description
    assert f"at most {MAX_TOKEN_LENGTH} characters" in description
    name = next(p for p in DOCUMENT["paths"]["/users"]["get"]["parameters"] if p["name"] == "name")
    assert name["schema"]["maxLength"] == NAME_FILTER_MAX_LENGTH
