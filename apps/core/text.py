"""Checks of user-written text that several apps share."""

import unicodedata


def unprintable_position(text: str) -> int | None:
    """The 1-based position of the first control, surrogate or non-character, as Zulip checks."""
    for position, char in enumerate(text, start=1):
        code = ord(char)
        noncharacter = 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE
        if unicodedata.category(char) in ("Cc", "Cs") or noncharacter:
            return position
    return None
