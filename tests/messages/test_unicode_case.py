"""Names and topics that differ only in the case of a non-ASCII letter ("Été", "été") are the same,
as PostgreSQL's UPPER has them, on SQLite too (apps/core/sqlite/base.py), in searches and mentions
as well, and the SQLite indexes built with SQLite's own ASCII-only UPPER are rebuilt (messages
0011)."""

import importlib

import pytest
from django.db import connection

from apps.core.sqlite.base import unicode_upper
from apps.messages.models import Message
from tests.api import api_for, assert_success
from tests.messages.conftest import get_messages, message_ids

SPELLINGS = ("Été", "été", "ÉTÉ")


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def unread_topics(user) -> list[tuple[str, list[int]]]:
    state = assert_success(api_for(user).post("/register", {"fetch_event_types": ["message", "update_message_flags"]}))
    return [(entry["topic"], entry["unread_message_ids"]) for entry in state["unread_msgs"]["streams"]]


def test_a_topic_is_one_whatever_the_case_of_its_accented_letters(design, send, member, admin):
    ids = [send(member, design, topic=topic) for topic in SPELLINGS]
    assert unread_topics(admin) == [("Été", ids)]
    narrow = [{"operator": "channel", "operand": "design"}, {"operator": "topic", "operand": "ÉTÉ"}]
    assert message_ids(admin, narrow) == ids
    topics = assert_success(api_for(admin).get(f"/users/me/{design.id}/topics"))["topics"]
    assert topics == [{"name": "ÉTÉ", "max_id": ids[-1]}]
    assert_success(api_for(admin).post("/mark_topic_as_read", {"stream_id": design.id, "topic_name": "été"}))
    assert unread_topics(admin) == []


def test_a_channel_name_is_taken_whatever_the_case_of_its_accented_letters(make_stream, admin):
    make_stream("Équipe", admin)
    response = api_for(admin).post("/users/me/subscriptions", {"subscriptions": [{"name": "équipe"}]})
    subscribed = assert_success(response)
    assert subscribed["subscribed"] == {}
    assert subscribed["already_subscribed"] == {str(admin.id): ["Équipe"]}


def test_search_ignores_the_case_of_accented_letters(design, send, member, admin):
    ids = [send(member, design, content=f"un {word} chaud", topic="vacances") for word in SPELLINGS]
    in_topic = send(member, design, content="rien", topic="ÉTÉ 2026")
    send(member, design, content="un hiver froid", topic="vacances")
    assert message_ids(admin, [{"operator": "search", "operand": "été"}]) == [*ids, in_topic]
    assert message_ids(admin, [{"operator": "search", "operand": "ÉTÉ CHAUD"}]) == ids


def test_a_mention_ignores_the_case_of_accented_letters(design, send, member, admin):
    admin.full_name = "Émile Durand"
    admin.save(update_fields=["full_name"])
    message_id = send(member, design, content="@**ÉMILE DURAND** à toi")
    [message] = [m for m in get_messages(admin, [])["messages"] if m["id"] == message_id]
    assert "mentioned" in message["flags"]
    assert f'data-user-id="{admin.id}"' in message["content"]


def test_lower_and_upper_fold_every_letter(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT LOWER(%s), UPPER(%s)", ["ÉTÉ Ünïcode", "été ünïcode"])
        assert cursor.fetchone() == ("été ünïcode", "ÉTÉ ÜNÏCODE")


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's indexes only")
def test_the_migration_rebuilds_indexes_built_with_sqlites_own_upper(design, send, member):
    ids = [send(member, design, topic=topic) for topic in SPELLINGS]

    def ascii_upper(value):
        return value.translate({c: c - 32 for c in range(ord("a"), ord("z") + 1)}) if isinstance(value, str) else value

    raw = connection.connection
    raw.create_function("upper", 1, ascii_upper, deterministic=True)
    with connection.cursor() as cursor:
        cursor.execute('REINDEX "messages_by_topic"')  # as an index built before the fix is
    raw.create_function("upper", 1, unicode_upper, deterministic=True)  # the backend's, as it is now

    def by_index() -> list[int]:
        found = Message.objects.filter(stream=design, topic__iexact="ÉTÉ").order_by("id")
        return list(found.values_list("id", flat=True))

    assert by_index() == [ids[2]]  # the index tells them apart: the wrong answer of a stale index
    migration = importlib.import_module("apps.messages.migrations.0011_sqlite_unicode_upper")
    migration.rebuild_upper_indexes(None, type("Editor", (), {"connection": connection})())
    assert by_index() == ids
