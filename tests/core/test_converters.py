"""`<id:...>` in a URL: ASCII digits that fit an id (zero too: views answer it as Zulip does)."""

import re

import pytest
from pydantic import TypeAdapter

from apps.core.converters import IdConverter
from apps.core.params import Id

ID = TypeAdapter(Id)


@pytest.mark.parametrize("text", ["1", "42", "007", "9" * 18])
def test_ids_match_and_are_valid_ids(text):
    assert re.fullmatch(IdConverter.regex, text)
    assert ID.validate_python(IdConverter().to_python(text)) == int(text)


def test_zero_matches():
    assert IdConverter().to_python("0") == 0


@pytest.mark.parametrize("text", ["-1", "9" * 19, "1e3", "١٢", ""])
def test_what_is_no_id_does_not_match(text):
    assert not re.fullmatch(IdConverter.regex, text)
