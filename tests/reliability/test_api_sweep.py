"""A hypothesis sweep of every /api/v1 route and method, in this process with Django's test client.

Each example sends one request: path parameters from the population's ids and emails or junk (zero,
huge, negative, non-ASCII digits, NUL, ...), the parameters the handler's `Params` classes declare
with plausible or junk values, with the credentials of a role or ones to refuse. Every answer is
JSON in Zulip's envelope and never a 5xx, and a refused request changes no row. Each example runs in
a savepoint rolled back afterwards (its events are published first), from fresh process state, so
every example starts from the same organization and the seed reproduces it.
"""

import os

import pytest
from django.db import transaction
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from apps.core.params import Params
from tests.api import ApiClient
from tests.conftest import reset_process_state
from tests.reliability.population import populate
from tests.reliability.sweep import (
    METHODS,
    Request,
    Values,
    api_path,
    api_patterns,
    api_routes,
    check_envelope,
    credentials,
    fingerprint,
    requests_for,
    sweep_settings,
)

pytestmark = pytest.mark.reliability

# Examples per route and method; RELIABILITY_EXAMPLES=500 sweeps deeper.
EXAMPLES = int(os.environ.get("RELIABILITY_EXAMPLES", "25"))
# GET /events does its database work on the server's executor threads, whose connections cannot
# see this test's uncommitted organization: test_asgi_sweep sweeps it on a real server.
LONG_POLL = "GET /api/v1/events"
ROUTES = [route for route in api_routes() if str(route) != LONG_POLL]


@pytest.fixture
def sweep(db):
    population = populate()
    return population, Values(population), credentials(population)


def send(client: Client, request: Request):
    url, body = request.url_and_body()
    extra = {"HTTP_HOST": request.credentials.host}
    if request.credentials.authorization is not None:
        extra["HTTP_AUTHORIZATION"] = request.credentials.authorization
    return client.generic(request.method, url, body, content_type="application/x-www-form-urlencoded", **extra)


@pytest.mark.parametrize("route", ROUTES, ids=str)
@sweep_settings(EXAMPLES)
@given(data=st.data())
def test_route_answers_every_request_in_the_envelope(route, sweep, django_capture_on_commit_callbacks, data):
    population, values, creds = sweep
    request = data.draw(requests_for(route, population, values, creds), label="request")
    reset_process_state()
    with transaction.atomic():
        before = fingerprint()
        with django_capture_on_commit_callbacks(execute=True):
            response = send(Client(raise_request_exception=False), request)
        check_envelope(response.status_code, response.get("Content-Type"), response.content, request)
        if response.status_code >= 400:
            after = fingerprint()
            changed = {table: (count, after[table]) for table, count in before.items() if after[table] != count}
            assert not changed, f"{response.status_code} for {request!r} changed rows: {changed}"
        transaction.set_rollback(True)


def test_every_route_refuses_the_methods_it_lacks_in_the_envelope(sweep):
    population, _, _ = sweep
    api = ApiClient(population.users["owner"])
    member_id = str(population.users["member"].id)
    for pattern, handlers in api_patterns():
        path = api_path(pattern, [member_id] * pattern.count("<"))
        for method in METHODS:
            if method.lower() not in handlers:
                response = api.request(method, path)
                body = response.json()
                assert response.status_code == 405, (method, path, body)
                assert body["result"] == "error", (method, path, body)
                assert body["code"] == "BAD_REQUEST", (method, path, body)


def test_every_parameter_class_is_swept():
    """The sweep finds the Params classes of every handler: each one the project defines is used by
    some route (a class only used elsewhere would be named here)."""

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    swept = {cls for route in api_routes() for cls in route.params}
    defined = {cls for cls in subclasses(Params) if cls.__module__.startswith("apps.") and cls.model_fields}
    bases = {base for cls in defined for base in cls.__mro__[1:]}
    assert defined - bases - swept == set()
