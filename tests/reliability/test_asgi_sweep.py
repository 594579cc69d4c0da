"""The sweep of test_api_sweep, smaller, against a real server process: the ASGI path, where GET
/api/v1/events is served by a thin route in front of Django (apps/events/asgi.py), and the
long-poll's neighbours. Queues registered before the sweep give its `queue_id`s something to find.
"""

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from tests.reliability import sweep
from tests.reliability.population import populate

pytestmark = [pytest.mark.reliability, pytest.mark.e2e]

ASGI_ROUTES = (
    "GET /api/v1/events",
    "DELETE /api/v1/events",
    "POST /api/v1/register",
    "GET /api/v1/users/me",
    "GET /api/v1/messages",
)
ROUTES = [route for route in sweep.api_routes() if str(route) in ASGI_ROUTES]
EXAMPLES = 40


@pytest.fixture
def server_sweep(transactional_db, live_server_factory):
    population = populate()
    # Polls answer within 0.2 s (a heartbeat) instead of 45 s; the sweep's requests are not rate
    # limited (a limit would make later examples differ from earlier ones).
    server = live_server_factory(EVENTS_HEARTBEAT_SECONDS="0.1,0.2", RATE_LIMITING_ENABLED="false")
    creds = sweep.credentials(population)
    values = sweep.Values(population)
    queue_ids = []
    for credential in creds[:2]:
        response = requests.post(
            f"{server.url}/api/v1/register", headers={"Authorization": credential.authorization}, timeout=10
        )
        queue_ids.append(response.json()["queue_id"])
    values.by_name["queue_id"] = st.sampled_from(queue_ids) | st.text(max_size=12)
    return server, population, values, creds


def send(server, request: sweep.Request) -> requests.Response:
    url, body = request.url_and_body()
    host = request.credentials.host.replace("testserver", f"127.0.0.1:{server.port}")
    headers = {"Host": host, "Content-Type": "application/x-www-form-urlencoded"}
    if request.credentials.authorization is not None:
        headers["Authorization"] = request.credentials.authorization
    return requests.request(request.method, server.url + url, data=body, headers=headers, timeout=30)


@pytest.mark.parametrize("route", ROUTES, ids=str)
@sweep.sweep_settings(EXAMPLES)
@given(data=st.data())
def test_server_answers_every_request_in_the_envelope(route, server_sweep, data):
    server, population, values, creds = server_sweep
    request = data.draw(sweep.requests_for(route, population, values, creds), label="request")
    before = sweep.fingerprint()
    response = send(server, request)
    sweep.check_envelope(response.status_code, response.headers.get("Content-Type"), response.content, request)
    if response.status_code >= 400:
        assert sweep.fingerprint() == before, f"{response.status_code} for {request!r} changed rows"
