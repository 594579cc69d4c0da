"""schemathesis against the directory API's OpenAPI document, on a real server process.

Every operation of the document, with every check schemathesis has (status codes, content types,
response schemas and headers, valid data accepted, invalid data refused, authentication required,
undocumented methods refused), in its coverage and fuzzing phases, valid and invalid data, a fixed
seed and a bounded number of examples. The document is the committed file, which the server is
checked to serve as it is.
"""

from pathlib import Path
from uuid import UUID

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from apps.users.models import Role
from tests.factories import BotFactory, RealmFactory, UserFactory

pytestmark = pytest.mark.reliability

DOCUMENT = Path(__file__).resolve().parents[2] / "apps" / "directory" / "openapi.json"
EMAIL, API_KEY = "owner@directory.example", "DirectorySweepKey000000000000000"
# Known users, so that GET /users/{userId} also meets ones that exist (200, 304) or existed (404).
ACTIVE, BOT, DEACTIVATED, FOREIGN = (UUID(int=n) for n in (1, 2, 3, 4))

CONFIG = SchemathesisConfig.from_dict(
    {
        "seed": 1,
        "auth": {"openapi": {"basicAuth": {"username": EMAIL, "password": API_KEY}}},
        "generation": {"mode": "all", "max-examples": 100, "database": "none"},
        "checks": {"enabled": True},
        "dictionaries": {"known-users": {"values": [str(u) for u in (ACTIVE, BOT, DEACTIVATED, FOREIGN)]}},
        "parameters": {"userId": {"dictionary": "known-users", "probability": 0.3}},
        "operations": [
            {
                # A page_token is opaque: a string the server did not sign is a 400 InvalidPageToken.
                "include-path": "/users",
                "checks": {"positive_data_acceptance": {"expected-statuses": ["2XX", 400]}},
            }
        ],
    }
)
schema = schemathesis.openapi.from_path(DOCUMENT, config=CONFIG)


@pytest.fixture
def directory_server(transactional_db, live_server_factory):
    realm = RealmFactory(string_id="", name="Directory")
    owner = UserFactory(realm=realm, role=Role.OWNER, delivery_email=EMAIL, api_key=API_KEY)
    UserFactory(realm=realm, uuid=ACTIVE, full_name="Ada Active")
    BotFactory(realm=realm, bot_owner=owner, uuid=BOT)
    UserFactory(realm=realm, uuid=DEACTIVATED, is_active=False)
    UserFactory(realm=RealmFactory(string_id="zephyr"), uuid=FOREIGN)
    UserFactory.create_batch(3, realm=realm)
    server = live_server_factory(RATE_LIMITING_ENABLED="false")
    assert requests.get(f"{server.url}/openapi.json", timeout=10).content == DOCUMENT.read_bytes()
    return server


@schema.parametrize()
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], database=None)
def test_directory_api_keeps_its_document(case, directory_server):
    # The server is read-only here, so one serves every example of an operation.
    case.call_and_validate(base_url=directory_server.url)
