"""`<id:...>` in a URL: ASCII digits. Zero and digits too many for an id are 0, which views answer as
Zulip does for an id that names nothing; an error message names the latter as written."""

import re

import pytest
from pydantic import TypeAdapter

from apps.core.converters import IdConverter
from apps.core.params import Id

ID = TypeAdapter(Id)


@pytest.mark.parametrize("text", ["1", "42", "007", "9" * 18, str(2**63 - 1), "0" * 30 + "5"])
def test_ids_match_and_are_valid_ids(text):
    assert re.fullmatch(IdConverter.regex, text)
    assert ID.validate_python(IdConverter().to_python(text)) == int(text)


@pytest.mark.parametrize("text", ["0", "000", str(2**63), "9" * 19, "9" * 5000])
def test_zero_and_what_no_id_can_be_are_zero(text):
    assert re.fullmatch(IdConverter.regex, text)
    assert IdConverter().to_python(text) == 0


def test_what_no_id_can_be_is_named_as_written():
    assert f"Field id {IdConverter().to_python('0' + '9' * 20)} not found." == f"Field id {'9' * 20} not found."
    assert str(IdConverter().to_python("9" * 5000)) == "9" * 40 + "..."


@pytest.mark.parametrize("text", ["-1", "1e3", "١٢", ""])
def test_what_is_no_id_does_not_match(text):
    assert not re.fullmatch(IdConverter.regex, text)
