"""Who a message is addressed to (Zulip's Recipient): a channel, one user, or a group of users in a
direct message. Found, or made on first use by the sender."""

import hashlib
from collections.abc import Sequence

from django.db import IntegrityError, transaction

from apps.messages.models import DirectMessageGroup, Message, Recipient
from apps.realms.models import Realm


def get_recipient(kind: int, type_id: int) -> Recipient:
    recipient = Recipient.objects.filter(type=kind, type_id=type_id).first()
    if recipient is not None:
        return recipient
    try:
        with transaction.atomic():
            return Recipient.objects.create(type=kind, type_id=type_id)
    except IntegrityError:  # created meanwhile by another request
        return Recipient.objects.get(type=kind, type_id=type_id)


def _group_key(user_ids: Sequence[int]) -> tuple[list[int], str]:
    ids = sorted(set(user_ids))
    return ids, hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()


def find_group_recipient(realm: Realm, user_ids: Sequence[int]) -> Recipient | None:
    """The recipient of the group direct message of exactly these users, if they ever had one."""
    _, key = _group_key(user_ids)
    group = DirectMessageGroup.objects.filter(realm=realm, key=key).first()
    if group is None:
        return None
    return Recipient.objects.filter(type=Recipient.Type.DIRECT_MESSAGE_GROUP, type_id=group.id).first()


def group_recipient(realm: Realm, user_ids: Sequence[int]) -> Recipient:
    """The recipient of the group direct message of exactly these users, made if need be."""
    ids, key = _group_key(user_ids)
    group = DirectMessageGroup.objects.filter(realm=realm, key=key).first()
    if group is None:
        try:
            with transaction.atomic():
                group = DirectMessageGroup.objects.create(realm=realm, user_ids=ids, key=key)
        except IntegrityError:  # made meanwhile by another request
            group = DirectMessageGroup.objects.get(realm=realm, key=key)
    return get_recipient(Recipient.Type.DIRECT_MESSAGE_GROUP, group.id)


def direct_message_recipient(realm: Realm, sender_id: int, user_ids: Sequence[int]) -> Recipient:
    """The recipient of a direct message from `sender_id` to `user_ids` (the sender among them or
    not), made if need be: the other person's for two people, the sender's own for a message to
    themselves, the group's for three people or more."""
    people = {*user_ids, sender_id}
    if len(people) <= 2:
        other = next((uid for uid in people if uid != sender_id), sender_id)
        return get_recipient(Recipient.Type.PERSONAL, other)
    return group_recipient(realm, sorted(people))


def direct_message_people(message: Message) -> set[int]:
    """The ids of a direct message's people: its sender and recipient, or its group's."""
    recipient = message.recipient
    if recipient.type == Recipient.Type.PERSONAL:
        return {message.sender_id, recipient.type_id}
    return set(DirectMessageGroup.objects.get(id=recipient.type_id).user_ids)
