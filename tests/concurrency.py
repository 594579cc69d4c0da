"""Calls run at the same moment, each in a thread with its own database connection: the tests of
what requests racing each other do (PostgreSQL; SQLite runs one writing transaction at a time)."""

import threading
from collections.abc import Callable
from typing import Any

from django.db import connection


def at_once(*calls: Callable[[], Any], timeout: float = 60) -> list[Any]:
    """What each of `calls` returned, in order; they are started together (a barrier), each in a
    thread whose connection is closed when its call ends. A call that raised fails the test with
    its exception."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=10)
            results[index] = call()
        except Exception as error:  # raised below, in the test's thread
            results[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index, call)) for index, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads)
    for result in results:
        if isinstance(result, Exception):
            raise result
    return results
