"""Subscription rows carry the indexes their reads need, and no single-column index those already
cover (migration 0005)."""

import pytest
from django.db import connection

from apps.subscriptions.models import Subscription


@pytest.mark.django_db
def test_lookups_by_user_and_by_channel_have_an_index_and_nothing_more():
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Subscription._meta.db_table)
    indexed = {tuple(c["columns"]) for c in constraints.values() if c["index"] or c["unique"]}
    assert {("user_id", "stream_id"), ("stream_id", "active")} <= indexed
    assert ("user_id",) not in indexed
    assert ("stream_id",) not in indexed
