"""parse_params: Zulip's encodings and Zulip's error wording."""

import json
from typing import Annotated, Literal

import pytest
from django.test import RequestFactory
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from apps.core.errors import InvalidArgumentError, JsonableError, MissingArgumentError
from apps.core.params import Json, JsonOrText, ParamError, Params, parse_params
from apps.core.responses import json_success


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: int
    value: str | None


class ExampleParams(Params):
    name: Annotated[str, StringConstraints(max_length=10)]
    count: Json[int] = 0
    flag: Json[bool] = False
    kind: Json[Literal[1, 2]] | None = None
    tags: Json[list[str]] = Field(default_factory=list)
    items: Json[list[Item]] | None = None
    to: JsonOrText = ""


def form(method: str, data: dict[str, str], query: str = ""):
    factory = RequestFactory()
    body = "&".join(f"{k}={v}" for k, v in data.items())
    path = "/x" + (f"?{query}" if query else "")
    if method == "GET":
        return factory.get(path, data)
    return factory.generic(method, path, body, content_type="application/x-www-form-urlencoded")


def parse(data: dict[str, str], method: str = "POST"):
    return parse_params(ExampleParams, form(method, data))


def error_of(data: dict[str, str]) -> JsonableError:
    with pytest.raises(JsonableError) as info:
        parse(data)
    return info.value


@pytest.mark.parametrize("method", ["GET", "POST", "PATCH", "PUT", "DELETE"])
def test_every_method_reads_its_parameters(method):
    params = parse({"name": "ann", "count": "5", "flag": "true", "tags": json.dumps(["a"])}, method)
    assert (params.name, params.count, params.flag, params.tags) == ("ann", 5, True, ["a"])


def test_post_falls_back_to_the_query_string():
    params = parse_params(ExampleParams, form("POST", {"count": "2"}, query="name=bob"))
    assert (params.name, params.count) == ("bob", 2)


def test_defaults_apply_when_absent():
    params = parse({"name": "ann"})
    assert (params.count, params.flag, params.kind, params.tags, params.items) == (0, False, None, [], None)


def test_missing_parameter():
    error = error_of({})
    assert isinstance(error, MissingArgumentError)
    assert error.to_dict() == {
        "result": "error",
        "msg": "Missing 'name' argument",
        "code": "REQUEST_VARIABLE_MISSING",
        "var_name": "name",
    }


@pytest.mark.parametrize(
    ("data", "var_name", "msg"),
    [
        ({"count": "x"}, "count", "count is not valid JSON"),
        ({"count": "1.5"}, "count", "count is not an integer"),
        ({"count": '"5"'}, "count", "count is not an integer"),
        ({"flag": "1"}, "flag", "flag is not a boolean"),
        ({"flag": "True"}, "flag", "flag is not valid JSON"),
        ({"kind": "3"}, "kind", "Invalid kind"),
        ({"tags": '"a"'}, "tags", "tags is not a list"),
        ({"tags": "[1]"}, "tags", "tags[0] is not a string"),
        ({"name": "a" * 11}, "name", "name is too long (limit: 10 characters)"),
        ({"items": '[{"id": "x", "value": null}]'}, "items", 'items[0]["id"] is not an integer'),
        ({"items": '[{"value": null}]'}, "items", "id key is missing from items[0]"),
        ({"items": '[{"id": 1, "value": null, "z": 1}]'}, "items", 'Argument "z" at items[0] is unexpected'),
        ({"items": '[{"id": 1, "value": null, "int": 1}]'}, "items", 'Argument "int" at items[0] is unexpected'),
        ({"items": '[{"id": 1, "value": 5}]'}, "items", 'items[0]["value"] is not a string'),
        ({"count": "1e400"}, "count", "count is not an integer"),
        ({"items": '{"id": 1}'}, "items", "items is not a list"),
    ],
)
def test_invalid_values_use_zulip_wording(data, var_name, msg):
    error = error_of({"name": "ann", **data})
    assert isinstance(error, InvalidArgumentError)
    assert error.to_dict() == {"result": "error", "msg": msg, "code": "REQUEST_VARIABLE_INVALID", "var_name": var_name}


@pytest.mark.parametrize(
    ("data", "msg"),
    [
        ({"name": "a%00b"}, "name must not contain null bytes"),
        ({"tags": json.dumps(["ok", "a\x00b"])}, "tags[1] must not contain null bytes"),
        ({"items": json.dumps([{"id": 1, "value": "\x00"}])}, 'items[0]["value"] must not contain null bytes'),
    ],
)
def test_null_bytes_are_refused_in_raw_and_json_strings(data, msg):
    error = error_of({"name": "ann", **data})
    assert error.msg == msg
    assert error.code == "REQUEST_VARIABLE_INVALID"
    assert error.data["var_name"] == next(iter(data))


def test_json_nested_as_deep_as_it_is_read_is_checked():
    """The hostile QA pass: a list nested a thousand deep (orjson reads up to 1,024) ran the check for
    null bytes out of stack, a 500."""
    deep = "[" * 1000 + '"a\\u0000b"' + "]" * 1000  # the null byte in JSON's words
    assert error_of({"name": "ann", "to": deep}).msg == "to" + "[0]" * 1000 + " must not contain null bytes"
    value = parse({"name": "ann", "to": "[" * 1000 + "]" * 1000}).to
    for _ in range(999):
        [value] = value
    assert value == []


def test_field_validators_can_give_their_own_message():
    from pydantic import field_validator

    class ColourParams(Params):
        colour: str

        @field_validator("colour")
        @classmethod
        def hex_colour(cls, value: str) -> str:
            if not value.startswith("#"):
                raise ParamError(f"{value} is not a {{hex}} colour")
            return value

    with pytest.raises(InvalidArgumentError) as info:
        parse_params(ColourParams, form("POST", {"colour": "red"}))
    assert info.value.msg == "red is not a {hex} colour"


def test_ignored_parameters_are_sorted_and_exclude_declared_ones():
    request = form("POST", {"name": "ann", "zz": "1", "aa": "2"})
    parse_params(ExampleParams, request)
    body = json.loads(json_success(request).content)
    assert body["ignored_parameters_unsupported"] == ["aa", "zz"]


def test_multipart_bodies_are_read_for_patch():
    factory = RequestFactory()
    request = factory.generic(
        "PATCH",
        "/x",
        b'--B\r\nContent-Disposition: form-data; name="name"\r\n\r\nann\r\n--B--\r\n',
        content_type="multipart/form-data; boundary=B",
    )
    assert parse_params(ExampleParams, request).name == "ann"
