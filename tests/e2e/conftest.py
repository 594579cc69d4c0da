import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from apps.users.models import Role
from tests.factories import RealmFactory, UserFactory
from tests.server import start_redis_server


@pytest.fixture
def parley_server(transactional_db, live_server_factory):
    """A real server sharing this test's database (committed data, so the server sees it)."""
    return live_server_factory()


@pytest.fixture(scope="session")
def collected_static(tmp_path_factory) -> str:
    """The static files, collected once (as `make run` does) into a folder of this run's own."""
    root = str(tmp_path_factory.mktemp("static"))
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.base", "STATIC_ROOT": root},
        check=True,
        timeout=300,
    )
    return root


@pytest.fixture
def page_server(transactional_db, live_server_factory, collected_static):
    """parley_server for a browser: with the static files its pages load."""
    return live_server_factory(STATIC_ROOT=collected_static)


@pytest.fixture
def people(transactional_db):
    """The default organization with an owner and a member (committed, so servers see them)."""
    realm = RealmFactory(string_id="", name="E2E Org")
    owner = UserFactory(realm=realm, role=Role.OWNER, delivery_email="owner@e2e.example", full_name="Olive Owner")
    member = UserFactory(realm=realm, delivery_email="member@e2e.example", full_name="Mick Member")
    return realm, owner, member


@pytest.fixture
def own_redis(tmp_path):
    """A redis-server of this test's own, to restart, kill or pause (skipped without redis-server)."""
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    server = start_redis_server(tmp_path)
    yield server
    server.kill()


@pytest.fixture
def chromium() -> str:
    """The system's Chromium: $PARLEY_CHROMIUM, else `chromium` (Debian) or `chromium-browser` on the PATH."""
    path = os.environ.get("PARLEY_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs Debian's chromium (.ci/run); it is missing")
        pytest.skip("needs a Chromium browser: apt-get install chromium (.ci/run installs it in CI)")
    return path
