"""Request parameters the way Zulip clients send them, parsed into typed classes.

A view declares a `Params` subclass whose field names are the parameter names:

    class UpdateUserParams(Params):
        full_name: str | None = None            # raw string, sent without JSON quotes
        role: Json[Literal[100, 200]] | None = None   # JSON text inside the form field

and calls `parse_params(UpdateUserParams, request)`; the handler says so with
`@uses_params(UpdateUserParams)`, which is how the OpenAPI document (apps/core/openapi.py) learns
its parameters. Parameters come from the form-encoded body for
POST, PATCH, PUT and DELETE (the query string is a fallback, as in Zulip) and from the query string
for GET. Errors use Zulip's codes and wording; parameters a view does not declare are reported in
`ignored_parameters_unsupported` by `json_success`.
"""

import json
import mimetypes
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Annotated, Any, TypeVar

import orjson
from django.http import HttpRequest, QueryDict
from django.http.multipartparser import MultiPartParserError
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, Json, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError
from rest_framework.request import Request

from apps.core.errors import InvalidArgumentError, JsonableError, MissingArgumentError, malformed_multipart_message
from apps.core.notes import request_notes

__all__ = [
    "Id",
    "Json",
    "JsonOrText",
    "ParamError",
    "Params",
    "content_type_of",
    "one_of",
    "parse_param_source",
    "parse_params",
    "request_params",
    "uploaded_files",
    "uses_params",
]

# A database id in a parameter: positive and within 64 bits (larger values would overflow queries).
Id = Annotated[int, Field(ge=1, le=2**63 - 1)]


def _true_false_or_partial(value: Any) -> str:
    """Zulip's Json[bool | Literal["partial"]], as "true", "false" or "partial": JSON text, or the raw
    word (what the official Python client sends for a string)."""
    if value in ("true", "false", "partial", '"partial"'):
        return value.strip('"')
    try:
        orjson.loads(value)  # as every JSON parameter (the hostile QA pass: json's RecursionError was a 500)
    except (TypeError, orjson.JSONDecodeError):
        raise ParamError("include_subscribers is not valid JSON") from None
    raise ParamError("Invalid include_subscribers")


# `include_subscribers` (POST /register, GET /users/me/subscriptions).
IncludeSubscribers = Annotated[str, BeforeValidator(_true_false_or_partial)]

P = TypeVar("P", bound="Params")
F = TypeVar("F", bound=Callable[..., Any])


def _json_or_text(value: str) -> Any:
    """As Zulip reads it (orjson): text that is no JSON is text; a number beyond 64 bits is a float
    (the client QA pass: a 30-digit `to` was taken as a channel id and echoed back as a number no
    JSON client holds; as in Zulip, it is now no channel id)."""
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return value


# A parameter that is JSON when it parses and raw text otherwise (POST /messages' `to`). Parsed here,
# its strings are checked like every other parameter's (no null bytes); pydantic's parser refuses
# lone surrogates, which no text can be stored with.
JsonOrText = Annotated[str, AfterValidator(_json_or_text)]

# pydantic error type -> Zulip's message template (zerver/lib/typed_endpoint.py).
ERROR_TEMPLATES = {
    "bool_parsing": "{var_name} is not a boolean",
    "bool_type": "{var_name} is not a boolean",
    "int_parsing": "{var_name} is not an integer",
    "int_type": "{var_name} is not an integer",
    "int_from_float": "{var_name} is not an integer",
    "float_parsing": "{var_name} is not a float",
    "float_type": "{var_name} is not a float",
    "string_type": "{var_name} is not a string",
    "list_type": "{var_name} is not a list",
    "dict_type": "{var_name} is not a dict",
    "model_type": "{var_name} is not a dict",
    "model_attributes_type": "{var_name} is not a dict",
    "json_invalid": "{var_name} is not valid JSON",
    "json_type": "{var_name} is not valid JSON",
    "greater_than": "{var_name} is too small",
    "greater_than_equal": "{var_name} is too small",
    "less_than": "{var_name} is too large",
    "less_than_equal": "{var_name} is too large",
    "literal_error": "Invalid {var_name}",
    "enum": "Invalid {var_name}",
    "string_too_long": "{var_name} is too long (limit: {max_length} characters)",
    "too_long": "{var_name} has too many items (limit: {max_length})",
    "string_pattern_mismatch": "{var_name} has invalid format",
}


class ParamError(PydanticCustomError):
    """Raise from a field validator to give the client this exact message."""

    def __new__(cls, message: str) -> "ParamError":
        return super().__new__(cls, "parley", message)


def one_of(*choices: Any) -> Any:
    """An annotation accepting exactly these values, of their own type (1.0 is not 1): "Invalid x"."""
    allowed = frozenset(choices)
    kind = type(choices[0])

    def check(value: Any) -> Any:
        if value not in allowed:
            raise PydanticCustomError("literal_error", "Invalid value")
        return value

    return Annotated[kind, AfterValidator(check), Field(json_schema_extra={"enum": list(choices)})]


class Params(BaseModel):
    """Base class of request parameter classes. Unknown parameters are ignored, never errors."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        return _parameter_names(cls)


def uses_params(*params_classes: type[Params], returns: Any = None) -> Callable[[F], F]:
    """Declares the Params classes a handler parses (`parse_params`, itself or through the functions
    it calls), and the type of what it answers besides the envelope (a TypedDict or a pydantic model):
    the OpenAPI document's parameters and success schema. It changes nothing at run time."""

    def declare(handler: F) -> F:
        handler.params_classes = params_classes
        handler.returns = returns
        return handler

    return declare


@cache
def _parameter_names(params_class: type[Params]) -> tuple[str, ...]:
    return tuple(field.alias or name for name, field in params_class.model_fields.items())


def request_params(request: HttpRequest | Request) -> QueryDict:
    """The parameters of a request: the query string for GET, else the form body (then the query)."""
    if isinstance(request, Request):
        django_request = request._request
        body = request.data if request.method not in ("GET", "HEAD") else None
    else:
        django_request = request
        body = _parse_body(request) if request.method not in ("GET", "HEAD") else None
    if body is None:
        return django_request.GET
    notes = request_notes(django_request)
    if notes.params is None:
        merged = django_request.GET.copy()
        if isinstance(body, QueryDict):
            for key in body:
                merged.setlist(key, body.getlist(key))
        notes.params = merged
    return notes.params


def _parse_body(request: HttpRequest) -> QueryDict:
    """Form bodies for every method: Django itself only parses POST (Zulip's process_as_post)."""
    if request.method == "POST":
        return request.POST
    content_type = request.content_type or ""
    if content_type.startswith("multipart/form-data"):
        from django.http.multipartparser import MultiPartParser

        try:
            return MultiPartParser(request.META, request, request.upload_handlers).parse()[0]
        except MultiPartParserError as exc:
            raise JsonableError(malformed_multipart_message(exc)) from exc
    if content_type in ("application/x-www-form-urlencoded", ""):
        return QueryDict(request.body, encoding=request.encoding)
    raise JsonableError(f'Unsupported media type "{content_type}" in request.')


def parse_params(params_class: type[P], request: HttpRequest | Request) -> P:
    """Validate the request's parameters into `params_class`.

    Raises MissingArgumentError / InvalidArgumentError (Zulip's REQUEST_VARIABLE_* codes).
    """
    _mark_used(request, params_class.parameter_names())
    return parse_param_source(params_class, request_params(request))


def parse_param_source(params_class: type[P], source: Mapping[str, str]) -> P:
    """parse_params() for parameters already in hand (e.g. a query string)."""
    names = params_class.parameter_names()
    data = {name: source[name] for name in names if name in source}
    try:
        params = params_class.model_validate(data)
    except ValidationError as exc:
        raise _translate(exc.errors(include_url=False)[0]) from None
    # After validation, so that strings inside JSON values ("\u0000") are checked too.
    for name, field in params_class.model_fields.items():
        alias = field.alias or name
        if alias in data:
            _reject_null_bytes(alias, alias, getattr(params, name))
    return params


def _mark_used(request: HttpRequest | Request, names: tuple[str, ...]) -> None:
    notes = request_notes(request)
    notes.used_params = notes.used_params.union(names)


def uploaded_files(request: HttpRequest | Request) -> list:
    """Every file of a multipart request (UploadedFile), whatever its field names."""
    return [file for key in request.FILES for file in request.FILES.getlist(key)]


_CONTENT_TYPE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}")


GENERIC_CONTENT_TYPE = "application/octet-stream"


def content_type_of(declared: str | None, file_name: str) -> str:
    """An uploaded file's content type: the one the client declared (when it is one, and says more
    than "some bytes"), else the one its name suggests (the official client declares none), else
    application/octet-stream (as Zulip guesses)."""
    declared = (declared or "").strip().lower()
    if _CONTENT_TYPE_RE.fullmatch(declared) and declared != GENERIC_CONTENT_TYPE:
        return declared
    guessed, _ = mimetypes.guess_type(file_name, strict=False)
    return guessed or GENERIC_CONTENT_TYPE


def ignored_parameters(request: HttpRequest | Request) -> list[str]:
    """The parameters the view did not read; files are the request's payload, never parameters (the
    official client names an upload's part after the file), nor is a form's CSRF token, which
    Django's CSRF check reads (the hostile QA pass: reported as ignored)."""
    used = request_notes(request).used_params
    try:
        provided = request_params(request)
    except JsonableError:
        return []
    return sorted(set(provided) - used - set(request.FILES) - {"csrfmiddlewaretoken"})


def _reject_null_bytes(var_name: str, path: str, value: Any) -> None:
    """No string in the value (its keys too) holds a null byte. Walked with a stack of its own, not by
    recursion: JSON nested a thousand deep, which orjson reads, was a RecursionError (a 500)."""
    pending = [(path, value)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, str):
            if "\x00" in value:
                raise InvalidArgumentError(var_name, f"{path} must not contain null bytes")
        elif isinstance(value, list | tuple):
            pending.extend((f"{path}[{index}]", item) for index, item in reversed(list(enumerate(value))))
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                pending.extend(((f"{path}[{json.dumps(key)}]", item), (f"{path}[{json.dumps(key)}]", key)))
        elif isinstance(value, BaseModel):
            pending.append((path, value.model_dump()))


def _var_name(loc: tuple[int | str, ...]) -> str:
    """Zulip's naming of nested values: `data[0]["id"]`."""
    head, *rest = loc
    return str(head) + "".join(f"[{json.dumps(part)}]" for part in rest)


def _translate(error: ErrorDetails) -> JsonableError:
    error_type = error["type"]
    # Union and Json wrappers add tags such as "int" or "function-after[...]" to the location; they
    # are not part of the parameter's name. The last part of a missing or unexpected key is the key.
    *path, last = error["loc"]
    keep_last = error_type in ("missing", "extra_forbidden")
    loc = tuple(part for part in path if isinstance(part, int) or not _is_type_tag(part))
    if keep_last or isinstance(last, int) or not _is_type_tag(last):
        loc = (*loc, last)
    if error_type == "missing":
        if len(loc) == 1:
            return MissingArgumentError(str(loc[0]))
        return InvalidArgumentError(str(loc[0]), f"{loc[-1]} key is missing from {_var_name(loc[:-1])}")
    var_name = _var_name(loc)
    if error_type == "extra_forbidden":
        return InvalidArgumentError(str(loc[0]), f'Argument "{loc[-1]}" at {_var_name(loc[:-1])} is unexpected')
    if error_type == "parley":
        return InvalidArgumentError(str(loc[0]), error["msg"])
    if error_type == "string_too_short":
        min_length = (error.get("ctx") or {}).get("min_length", 1)
        message = f"{var_name} cannot be blank" if min_length == 1 else f"{var_name} is too short."
        return InvalidArgumentError(str(loc[0]), message)
    template = ERROR_TEMPLATES.get(error_type)
    if template is None:
        return InvalidArgumentError(str(loc[0]), f"Invalid {var_name}")
    return InvalidArgumentError(str(loc[0]), template.format(var_name=var_name, **(error.get("ctx") or {})))


def _is_type_tag(part: str) -> bool:
    return (
        part in {"int", "str", "bool", "float", "list", "dict", "none", "json-or-python"}
        or "[" in part
        or part.startswith(("function-", "literal", "constrained", "nullable", "lax-", "strict-"))
    )
