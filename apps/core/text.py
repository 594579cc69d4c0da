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


def duration_text(seconds: int) -> str:
    """A whole duration as people write it: "24 hours", "90 minutes", "1 hour", "45 seconds"."""
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} second{'' if seconds == 1 else 's'}"
