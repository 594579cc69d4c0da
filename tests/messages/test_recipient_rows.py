"""The per-recipient rows (UserMessage) without foreign key constraints on PostgreSQL (migration
0009): they still go with their message and their user, and the indexes the API's reads need are
there on both databases."""

import pytest
from django.db import connection

from apps.messages.actions.delete import do_delete_message
from apps.messages.models import Message, UserMessage
from apps.users.models import User

# What the reads by user need (0004, 0005 and the unique constraint); a rebuilt table loses the
# partial ones on SQLite.
READ_INDEXES = {
    "messages_one_row_per_user",
    "chat_messages_usermessage_unread",
    "chat_messages_usermessage_starred",
    "chat_messages_usermessage_mentioned",
    "chat_messages_usermessage_alerted",
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
