"""Calls run at the same moment, each in a thread with its own database connection: the tests of
what requests racing each other do (PostgreSQL; SQLite runs one writing transaction at a time)."""

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection
from django.db.models import Model

from tests.api import assert_error


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


def removed_while_changed(client: Callable[[], Any], path: str, changes: Sequence[dict]) -> list[Any]:
    """Two DELETEs of `path` and a PATCH of it with each of `changes`, all at once, each with a
    client of its own (`client()`); their answers, the DELETEs' first."""
    deletes = [lambda: client().delete(path)] * 2
    patches = [lambda change=change: client().patch(path, change) for change in changes]
    return at_once(*deletes, *patches)


def done_or_refused(answers: Sequence[Any], status: int, code: str, msg: str) -> None:
    """Each of `answers` a success, or this refusal."""
    for answer in answers:
        if answer.status_code != 200:
            assert_error(answer, status, code, msg)


@contextmanager
def made_and_gone_meanwhile(model: type[Model], **fields: Any) -> Iterator[list[bool]]:
    """Another request's row (`fields`), made just before this one's first INSERT into `model`'s
    table and gone before it reads the table again: made inside the savepoint of Django's
    get_or_create and update_or_create, it is rolled back with it. One connection, so SQLite too.
    The list yielded holds True once it happened."""
    happened: list[bool] = []
    insert = f'INSERT INTO "{model._meta.db_table}"'

    def meanwhile(execute, sql, params, many, context):
        if sql.startswith(insert) and not happened:
            happened.append(True)
            model.objects.create(**fields)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(meanwhile):
        yield happened
