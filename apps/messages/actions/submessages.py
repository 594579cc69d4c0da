"""Submessages (POST /submessage): what readers attach to a message, polls' votes and to-do lists'
tasks. The widget itself is the sender's first submessage, made when the message is sent."""

import json

from django.db import transaction
from pydantic_core import from_json

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.messages.access import users_told_of
from apps.messages.models import Message, SubMessage
from apps.messages.widgets import check_widget_change, widget_of, widget_type_of
from apps.users.models import User


def add_widget(message: Message) -> list[SubMessage]:
    """In the sending transaction: the widget a `/poll` or `/todo` message makes (none for others)."""
    widget = widget_of(message.content)
    if widget is None:
        return []
    submessage = SubMessage(message=message, sender_id=message.sender_id, msg_type="widget", content=json.dumps(widget))
    submessage.save(force_insert=True)
    return [submessage]


@transaction.atomic
def check_add_submessage(message: Message, *, msg_type: str, content: str, acting_user: User) -> SubMessage:
    """POST /submessage on a message `acting_user` can see. The message's row is locked, so that
    changes are numbered in the order they are checked. The first submessage is its sender's
    ("You cannot attach a submessage to this message."); a poll's or a to-do list's changes are
    checked (apps.messages.widgets).

    Emits: submessage {msg_type, message_id, submessage_id, sender_id, content} to everyone who
    can see the message.
    """
    Message.objects.select_for_update().filter(id=message.id).first()
    submessages = SubMessage.objects.filter(message=message)
    if acting_user.id != message.sender_id and not submessages.filter(sender_id=message.sender_id).exists():
        raise JsonableError("You cannot attach a submessage to this message.")
    try:
        data = from_json(content)
    except ValueError:
        raise JsonableError("Invalid json for submessage") from None
    first = submessages.filter(msg_type="widget").order_by("id").values_list("content", flat=True).first()
    widget_type = widget_type_of(first)
    if widget_type is not None:
        check_widget_change(widget_type, data, by_author=acting_user.id == message.sender_id)
    submessage = SubMessage.objects.create(message=message, sender=acting_user, msg_type=msg_type, content=content)
    event = {
        "type": "submessage",
        "msg_type": msg_type,
        "message_id": message.id,
        "submessage_id": submessage.id,
        "sender_id": acting_user.id,
        "content": content,
    }
    send_event_on_commit(message.realm_id, event, users_told_of(message.stream, [message.id]) | {acting_user.id})
    return submessage
