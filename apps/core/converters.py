"""Ids written as text: the `<id:name>` URL converter, and ids read out of other client text.

Only ASCII digits write an id. Python's `\\d`, str.isdecimal() and int() also take the digits of
other scripts (to int(), "\\u0661\\u0662", Arabic-Indic one and two, is 12), which would give one
id many spellings.
"""

import re

# Ids are 64-bit integers; 18 digits always fit.
MAX_ID_DIGITS = 18

_ASCII_INTEGER_RE = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)


class IdConverter:
    """A database id in a URL; longer digit strings are a 404, never an overflow. Zero matches: the
    view answers it as Zulip does for an id that names nothing (400 "Invalid channel ID", ...)."""

    regex = f"[0-9]{{1,{MAX_ID_DIGITS}}}"

    def to_python(self, value: str) -> int:
        return int(value)

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

    regex = "[^/\x00\ud800-\udfff]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class TextPathConverter(TextConverter):
    """The same, slashes allowed (as Django's `path`)."""

    regex = "[^\x00\ud800-\udfff]+"
