"""Ids written as text: the `<id:name>` URL converter, and ids read out of other client text.

Only ASCII digits write an id. Python's `\\d`, str.isdecimal() and int() also take the digits of
other scripts (to int(), "\\u0661\\u0662", Arabic-Indic one and two, is 12), which would give one
id many spellings.
"""

import re

# Ids are 64-bit signed integers.
MAX_ID = 2**63 - 1

_ASCII_INTEGER_RE = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)


class UnknownId(int):
    """Digits too many for an id: 0 to the database, which finds nothing by it, and the digits
    as written wherever a message names it ("Field id 99999999999999999999 not found.")."""

    def __new__(cls, digits: str) -> "UnknownId":
        unknown = super().__new__(cls, 0)
        unknown.digits = digits
        return unknown

    def __str__(self) -> str:
        return self.digits

    def __format__(self, spec: str) -> str:
        return format(self.digits, spec)


class IdConverter:
    """A database id in a URL. Zero, and digits too many for an id, name nothing: the view answers
    them as Zulip does for an id that names nothing (400 "Invalid message(s)", "Invalid channel
    ID", ...), never with an overflow."""

    regex = "[0-9]+"

    def to_python(self, value: str) -> int:
        digits = value.lstrip("0") or "0"
        if len(digits) > len(str(MAX_ID)) or int(digits) > MAX_ID:
            return UnknownId(digits[:40] + "..." if len(digits) > 40 else digits)
        return int(digits)

    def to_url(self, value: int) -> str:
        return str(value)


def is_ascii_digits(text: str) -> bool:
    """Whether `text` is a non-empty run of ASCII digits."""
    return text.isascii() and text.isdecimal()


def ascii_int(text: str) -> int:
    """int(text) for an integer written with ASCII digits (a sign and surrounding whitespace
    allowed, as int() allows them); ValueError for anything else."""
    if not _ASCII_INTEGER_RE.fullmatch(text):
        raise ValueError(f"not an integer: {text!r}")
    return int(text)


class TextConverter:
    """A piece of text in a URL (as Django's `str`: no slash) that the database can be asked about:
    without NUL (PostgreSQL refuses it in text) or a lone surrogate (no UTF-8 encoding). Such a
    path names nothing: a 404."""

    regex = r"[^/\x00\ud800-\udfff]+"  # escapes, not the characters: the OpenAPI document shows it

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class TextPathConverter(TextConverter):
    """The same, slashes allowed (as Django's `path`)."""

    regex = r"[^\x00\ud800-\udfff]+"
