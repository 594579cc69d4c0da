"""The embedded database while its files cannot be written (permissions changed, a file system
remounted read-only), then can again: writes fail as a database that cannot be reached, and work
again as soon as the files are writable, with no restart (apps/core/sqlite/base.py).

SQLite itself opens an unwritable database read-only, and such a connection stays read-only: a
server process kept failing every write after the files were writable again (the fault QA pass)."""

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import OperationalError
from django.db.utils import ConnectionHandler

from apps.core.errors import dependency_error
from config.env import sqlite_database


@contextlib.contextmanager
def unwritable(*paths: Path) -> Iterator[None]:
    """The files cannot be written by this process while inside: immutable for root (whom file
    modes do not stop), read-only modes otherwise."""
    names = [str(path) for path in paths if path.exists()]
    as_root = os.geteuid() == 0
    if as_root:
        if subprocess.run(["chattr", "+i", *names], capture_output=True).returncode != 0:
            pytest.skip("this file system has no immutable files (chattr)")
    else:
        for name in names:
            os.chmod(name, 0o444)
    try:
        yield
    finally:
        if as_root:
            subprocess.run(["chattr", "-i", *names], check=True)
        else:
            for name in names:
                os.chmod(name, 0o644)


@pytest.fixture
def database(tmp_path, django_db_blocker):
    """An embedded database of its own (not the tests'), open in another process (the task worker,
    say), which keeps its write-ahead log and index files while this one has no connection."""
    path = tmp_path / "parley.sqlite3"
    with django_db_blocker.unblock():
        first = connect(path)
        with first.cursor() as cursor:
            cursor.execute("CREATE TABLE notes (text TEXT)")
        reader = subprocess.Popen(
            [sys.executable, "-c", READER, str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        assert reader.stdout.readline() == "open\n"
        first.close()
        yield path
        reader.kill()
        reader.wait()


READER = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1])
connection.execute("SELECT count(*) FROM notes").fetchall()
print("open", flush=True)
time.sleep(120)
"""


def connect(path: Path):
    """A connection set up as the server's (a request's: closed when the request ends)."""
    return ConnectionHandler({"default": sqlite_database(path)})["default"]


def write(connection, text: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO notes (text) VALUES (%s)", [text])


def read(connection) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT text FROM notes ORDER BY text")
        return [text for (text,) in cursor.fetchall()]


def test_writes_work_again_once_the_files_are_writable(database, django_db_blocker):
    path = database
    files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
    assert all(name.exists() for name in files)
    long_request = connect(path)  # a request of another thread, open across the files' return
    with django_db_blocker.unblock():
        with unwritable(*files):
            with pytest.raises(OperationalError) as refused:
                write(connect(path), "while read-only")
            assert dependency_error(refused.value).http_status_code == 503  # "the database cannot be reached"
            # SQLite would open it read-only for this reader; it is refused as unreachable too.
            with contextlib.suppress(OperationalError):
                read(long_request)
        later = connect(path)
        write(later, "after")  # the same process, no restart
        write(long_request, "after, too")
        assert read(later) == ["after", "after, too"]
        later.close()
        long_request.close()


def test_a_writable_database_is_never_taken_for_read_only(tmp_path, django_db_blocker):
    """Other connections opening and closing remove and make the log and index files again, while
    a new connection looks at them (the newcomer QA pass: one request in about 2,000 got a 503 "the
    database is read-only", and the task worker logged it, on a writable database)."""
    path = tmp_path / "parley.sqlite3"
    with django_db_blocker.unblock():
        first = connect(path)
        with first.cursor() as cursor:
            cursor.execute("CREATE TABLE notes (text TEXT)")
        first.close()
        stop = threading.Event()

        def come_and_go() -> None:  # each last close removes the -wal and -shm files
            while not stop.is_set():
                other = connect(path)
                read(other)
                other.close()

        churn = threading.Thread(target=come_and_go)
        churn.start()
        try:
            looks, until = 0, time.monotonic() + 3
            while time.monotonic() < until:
                assert connect(path).files_writable(), f"taken for read-only after {looks} looks"
                looks += 1
        finally:
            stop.set()
            churn.join()
