import os
import shutil

import pytest

from apps.users.models import Role
from tests.factories import RealmFactory, UserFactory
from tests.server import start_redis_server


@pytest.fixture
def parley_server(transactional_db, live_server_factory):
    """A real server sharing this test's database (committed data, so the server sees it)."""
    return live_server_factory()


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
