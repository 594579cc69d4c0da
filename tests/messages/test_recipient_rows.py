"""The per-recipient rows (UserMessage) without foreign key constraints on PostgreSQL (migration
0009): they still go with their message and their user, and the indexes the API's reads need are
there on both databases."""

import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps as django_apps
from django.db import connection
from django.db.models import F

from apps.messages.actions.delete import do_delete_message
from apps.messages.models import Message, UserMessage
from apps.users.models import User
from tests.api import api_for, assert_success

# What the reads by user need (0004, 0005, 0010 and the unique constraint); a rebuilt table loses the
# partial ones on SQLite.
READ_INDEXES = {
    "messages_one_row_per_user",
    "chat_messages_usermessage_unread",
    "chat_messages_usermessage_starred",
    "chat_messages_usermessage_mentioned",
    "chat_messages_usermessage_alerted",
    "chat_messages_usermessage_private",
}


def rows_of(user_ids=(), message_ids=()) -> int:
    return (
        UserMessage.objects.filter(user_id__in=user_ids).count()
        + UserMessage.objects.filter(message_id__in=message_ids).count()
    )


@pytest.mark.django_db
def test_the_indexes_reads_need_are_there_and_not_a_user_index_of_its_own():
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, UserMessage._meta.db_table)
    assert set(constraints) >= READ_INDEXES
    assert not [name for name, c in constraints.items() if c["columns"] == ["user_id"] and c["index"]]
    foreign_keys = [name for name, c in constraints.items() if c["foreign_key"]]
    assert len(foreign_keys) == (0 if connection.vendor == "postgresql" else 2)


def test_a_deleted_message_takes_its_rows(send, member, admin, make_stream):
    general = make_stream("general", member, admin)
    kept, deleted = send(member, general), send(member, general)
    do_delete_message(Message.objects.get(id=deleted), acting_user=admin)
    assert rows_of(message_ids=[deleted]) == 0
    assert rows_of(message_ids=[kept]) == 2


def test_a_deleted_user_takes_their_rows(send, member, admin, make_stream):
    general = make_stream("general", member, admin)
    message = send(admin, general)
    User.objects.get(id=member.id).delete()
    assert rows_of(user_ids=[member.id]) == 0
    assert UserMessage.objects.filter(message_id=message).count() == 1


def direct_message_rows(message_ids) -> dict[int, bool]:
    rows = UserMessage.objects.filter(message_id__in=message_ids).values_list("message_id", "flags")
    return {message_id: bool(flags & UserMessage.IS_PRIVATE) for message_id, flags in rows}


def test_a_direct_messages_rows_carry_the_private_bit_and_a_channel_messages_do_not(send, member, admin, make_stream):
    dm = send(member, [admin])
    channel = send(member, make_stream("general", member, admin))
    assert direct_message_rows([dm, channel]) == {dm: True, channel: False}
    assert UserMessage.objects.filter(message_id=dm).count() == 2
    # An internal bit: the API's flags of the message are those of any message.
    fetched = assert_success(api_for(admin).get("/messages", {"anchor": dm, "num_before": 0, "num_after": 0}))
    assert fetched["messages"][0]["flags"] == []


def test_the_migration_marks_the_direct_messages_sent_before_it(send, member, admin, make_stream):
    migration = importlib.import_module("apps.messages.migrations.0010_is_private_flag")
    dm = send(member, [admin])
    channel = send(member, make_stream("general", member, admin))
    UserMessage.objects.update(flags=F("flags").bitand(~UserMessage.IS_PRIVATE))
    assert direct_message_rows([dm, channel]) == {dm: False, channel: False}
    migration.mark_direct_messages(django_apps, SimpleNamespace(connection=connection))
    assert direct_message_rows([dm, channel]) == {dm: True, channel: False}
    migration.unmark_direct_messages(django_apps, SimpleNamespace(connection=connection))
    assert direct_message_rows([dm, channel]) == {dm: False, channel: False}
