"""The JSON of the API's answers: compact UTF-8, written by orjson, as Zulip's own server writes it
(several times faster than the standard library's encoder, which took a tenth of a register of
10,000 people: benchmarks/scale/README.md). What orjson does not know itself (datetimes, lazily
translated text, decimals) Django's encoder writes, as before; integer keys become strings, as
with json.dumps. The long-poll route writes its own (apps.events.asgi.encode_json)."""

import json
from typing import Any

import orjson
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponse

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
_django_default = DjangoJSONEncoder().default


def encode_json(data: Any) -> bytes:
    try:
        return orjson.dumps(data, default=_django_default, option=_OPTIONS)
    except orjson.JSONEncodeError:
        # A lone surrogate, which UTF-8 cannot carry: the standard library escapes it.
        return json.dumps(data, cls=DjangoJSONEncoder).encode()


class CompactJsonResponse(HttpResponse):
    """Django's JsonResponse, encoded by encode_json."""

    def __init__(self, data: Any, **kwargs: Any) -> None:
        kwargs.setdefault("content_type", "application/json")
        super().__init__(encode_json(data), **kwargs)
