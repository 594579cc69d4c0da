"""The API's JSON (apps.core.encoding): compact UTF-8 as Zulip's server writes it, and what the
standard library's encoder with Django's additions wrote for everything else."""

import datetime
import json
from decimal import Decimal

from django.core.serializers.json import DjangoJSONEncoder
from django.utils.translation import gettext_lazy

from apps.core.encoding import encode_json
from tests.api import assert_success


def test_answers_are_compact_utf8(client_for, member):
    member.full_name = "Zoë Ñandú"
    member.save()
    response = client_for(member).get("/users/me")
    assert assert_success(response)["full_name"] == "Zoë Ñandú"
    assert response.content.startswith(b'{"result":"success","msg":""')
    assert "Zoë Ñandú".encode() in response.content


def test_what_json_cannot_say_is_written_as_djangos_encoder_wrote_it():
    value = {
        7: "an integer key",
        None: "a null key",
        "when": datetime.datetime(2026, 11, 27, 3, 4, 5, 123456, tzinfo=datetime.UTC),
        "day": datetime.date(2026, 11, 27),
        "text": gettext_lazy("Invalid API key"),
        "amount": Decimal("1.50"),
    }
    assert json.loads(encode_json(value)) == json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def test_a_lone_surrogate_is_escaped_not_refused():
    assert json.loads(encode_json({"content": "half \ud800 a pair"})) == {"content": "half \ud800 a pair"}
