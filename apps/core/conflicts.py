"""Writes that race others' writes of the same row."""

from collections.abc import Callable
from typing import TypeVar

from django.db import IntegrityError

T = TypeVar("T")


def retried_on_conflict(write: Callable[[], T], attempts: int = 3) -> T:
    """write(), again when it failed on a unique constraint. Django's get_or_create and
    update_or_create insert and, when the insert conflicts, read the row again: a deletion at the
    same moment leaves nothing to read, and they raise the IntegrityError, where the next attempt
    inserts. `write` runs in a savepoint of its own (theirs do), so that a failed attempt leaves the
    transaction around it usable."""
    for _ in range(attempts - 1):
        try:
            return write()
        except IntegrityError:
            continue
    return write()
