"""Two people subscribing at the same moment to a channel that does not exist yet: one request
creates it, the other subscribes to it (the QA pass found the second refused with "Channel 'x'
already exists" every time on PostgreSQL)."""

import threading

import pytest
from django.db import connection

from apps.subscriptions.models import Stream, Subscription
from tests.api import ApiClient, assert_success


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_two_people_joining_a_new_channel_at_once_both_join(member, admin):
    for round_number in range(5):
        name = f"launch {round_number}"
        barrier = threading.Barrier(2)
        responses, errors = {}, []

        def join(user, name=name, barrier=barrier, responses=responses, errors=errors):
            try:
                barrier.wait(timeout=10)
                responses[user.id] = ApiClient(user).post(
                    "/users/me/subscriptions", {"subscriptions": [{"name": name}]}
                )
            except Exception as error:  # reported below
                errors.append(error)
            finally:
                connection.close()  # each thread had its own connection

        threads = [threading.Thread(target=join, args=(user,)) for user in (member, admin)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        for user in (member, admin):
            assert assert_success(responses[user.id])["subscribed"] == {str(user.id): [name]}
        stream = Stream.objects.get(name=name)
        assert set(Subscription.objects.filter(stream=stream, active=True).values_list("user_id", flat=True)) == {
            member.id,
            admin.id,
        }
