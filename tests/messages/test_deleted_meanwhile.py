"""A message deleted by another request between the moment a request read it and the moment it acts
on it is a message that does not exist ("Invalid message(s)"), never a server error: the QA pass's
reactions, edits and reads racing a deletion got 500s (a reaction's row referring to no message,
the message read again after its access was checked)."""

import pytest
from django.db import connection

from apps.messages.actions.reactions import check_add_reaction
from apps.messages.errors import InvalidMessageError
from apps.messages.models import Message, Reaction, UserMessage
from apps.messages.selectors import access_message
from tests.api import api_for, assert_error, assert_success


@pytest.fixture
def message_id(make_stream, send, member, admin):
    design = make_stream("design", member, admin)
    return send(member, design, "soon gone")


def test_a_reaction_to_a_message_deleted_since_it_was_read_is_refused(message_id, member, admin):
    message, _ = access_message(member, message_id)  # the reaction's request read it ...
    assert_success(api_for(admin).delete(f"/messages/{message_id}"))  # ... another deleted it
    with pytest.raises(InvalidMessageError):
        check_add_reaction(message, emoji_name="smile", emoji_code=None, reaction_type=None, acting_user=member)
    assert not Reaction.objects.exists()


def test_a_message_deleted_between_the_access_check_and_the_read_does_not_exist(message_id, member):
    # The state a deletion committing between access_message's two reads leaves: the reader's own
    # row still there (foreign keys are checked at commit), the message's gone.
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {Message._meta.db_table} WHERE id = %s", [message_id])  # noqa: S608
    for response in (
        api_for(member).get(f"/messages/{message_id}"),
        api_for(member).patch(f"/messages/{message_id}", {"content": "edited"}),
        api_for(member).post(f"/messages/{message_id}/reactions", {"emoji_name": "smile"}),
        api_for(member).delete(f"/messages/{message_id}"),
    ):
        assert_error(response, 400, "BAD_REQUEST", "Invalid message(s)")
    UserMessage.objects.filter(message_id=message_id).delete()  # what the deletion's commit would have
