"""Parley's document against what Zulip's zulip.yaml marks required (the committed extract,
tools/zulip_openapi/zulip_required.json): the comparison runs, and the differences in parameters are
the known ones below; a new one (a parameter Parley now requires that Zulip's clients may omit, or one
Zulip requires that Parley does not take) fails until it is fixed or listed here with its reason."""

import copy

import yaml

from apps.core.openapi import openapi_document
from tools.zulip_openapi.compare import compare, load_extract
from tools.zulip_openapi.extract import extract

# Zulip requires, Parley does not take: the new end-to-end encrypted registration's key fields
# (Parley registers devices with the fields of its own implementation, apps/push).
KNOWN_MISSING = {"POST /mobile_push/register"}
# Parley requires, Zulip's document does not: Parley's parsers follow Zulip's server code, which
# requires these (the document leaves them optional or does not say).
KNOWN_STRICTER = {
    "PATCH /channel_folders",
    "POST /channel_folders/create",
    "POST /drafts",
    "POST /mobile_push/register",
    "POST /reminders",
}


def test_the_extract_says_where_it_came_from():
    source = load_extract()["source"]
    assert "zulip.yaml" in source
    assert "@" in source  # the commit


def test_parameter_differences_are_the_known_ones():
    extract_ = load_extract()
    comparison = compare(openapi_document(), extract_)
    assert len(comparison.common) > 90
    assert {"POST /messages", "GET /messages", "POST /register", "GET /users/me"} <= set(comparison.common)
    assert set(comparison.missing) == KNOWN_MISSING, comparison.report(extract_["source"])
    assert set(comparison.stricter) == KNOWN_STRICTER, comparison.report(extract_["source"])
    report = comparison.report(extract_["source"])
    assert extract_["source"] in report
    assert "POST /mobile_push/register: push_account_id, push_public_key" in report


def test_a_parameter_zulip_requires_that_parley_lacks_is_reported():
    extract_ = copy.deepcopy(load_extract())
    extract_["operations"]["POST /messages"]["body"].append("scheduled_delivery")
    comparison = compare(openapi_document(), extract_)
    assert comparison.missing["POST /messages"] == ["scheduled_delivery"]


def test_extract_follows_refs_and_all_of():
    document = yaml.safe_load(
        """
        paths:
          /things/{thing_id}:
            parameters: [{$ref: "#/components/parameters/ThingId"}]
            patch:
              parameters: [{name: dry_run, in: query, required: true}, {name: verbose, in: query}]
              requestBody:
                content:
                  application/x-www-form-urlencoded:
                    schema: {$ref: "#/components/schemas/Change"}
              responses:
                "200":
                  content:
                    application/json:
                      schema:
                        allOf: [{$ref: "#/components/schemas/Success"}, {required: [thing]}]
        components:
          parameters:
            ThingId: {name: thing_id, in: path, required: true}
          schemas:
            Change: {type: object, required: [name], properties: {name: {}, colour: {}}}
            Success: {required: [result, msg]}
        """
    )
    assert extract(document, "a test")["operations"] == {
        "PATCH /things/{thing_id}": {
            "path": ["thing_id"],
            "query": ["dry_run"],
            "body": ["name"],
            "response": ["msg", "result", "thing"],
        }
    }
