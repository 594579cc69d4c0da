"""Two people subscribing at the same moment to a channel that does not exist yet: one request
creates it, the other subscribes to it (the QA pass found the second refused with "Channel 'x'
already exists" every time on PostgreSQL)."""

import pytest
from django.db import connection

from apps.subscriptions.models import Stream, Subscription
from tests.api import ApiClient, assert_success
from tests.concurrency import at_once


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_two_people_joining_a_new_channel_at_once_both_join(member, admin):
    for round_number in range(5):
        name = f"launch {round_number}"

        def join(user, name=name):
            return ApiClient(user).post("/users/me/subscriptions", {"subscriptions": [{"name": name}]})

        responses = at_once(lambda: join(member), lambda: join(admin))
        for user, response in zip((member, admin), responses, strict=True):
            assert assert_success(response)["subscribed"] == {str(user.id): [name]}
        stream = Stream.objects.get(name=name)
        joined = Subscription.objects.filter(stream=stream, active=True).values_list("user_id", flat=True)
        assert set(joined) == {member.id, admin.id}
