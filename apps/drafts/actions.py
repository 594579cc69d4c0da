"""Drafts: what a user writes before sending it, kept for their other devices (Zulip's drafts).

A user's drafts are their own: they are changed by that user (a request) or by the server
(`acting_user=None`: their settings turning synchronization off), never by someone else
(apps/messages/actions/acting.py). Every draft is checked (where it goes, what it says, when it was
edited) before the first write; events go to the owner's queues only.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import transaction
from django.utils import timezone

from apps.core.errors import JsonableError
from apps.drafts.errors import DraftDoesNotExistError, TooManyDraftsError
from apps.drafts.models import Draft
from apps.drafts.selectors import check_drafts_synchronized, drafts_as_dicts
from apps.drafts.serializers import DraftFields
from apps.events.publish import send_event_on_commit
from apps.messages.actions.acting import check_acting_for
from apps.messages.actions.send import normalize_content
from apps.messages.addressing import access_dm_recipients
from apps.messages.models import Recipient
from apps.messages.recipients import direct_message_recipient, get_recipient
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import access_stream_by_id
from apps.subscriptions.topics import truncate_topic
from apps.users.models import User

MAX_ID = 2**63 - 1
# Timestamps from here on have no date (after the year 9999).
TIMESTAMP_LIMIT = 253_402_300_800


@dataclass(frozen=True)
class CheckedDraft:
    """A draft as it is stored: its channel, or the people of its direct message (as the client
    named them), or neither; its topic (channel drafts only), content and last edit time."""

    stream: Stream | None
    people: tuple[User, ...]
    topic: str
    content: str
    last_edit_time: datetime


# --- checking what is sent ------------------------------------------------------------------------


def check_draft(user: User, fields: DraftFields) -> CheckedDraft:
    """A draft of the user's as a client sent it, checked in Zulip's order: its content (cut to
    the longest message), its timestamp (the server's time when absent), then where it goes: one
    channel the user may read (its topic cut to the longest topic), people of their organization
    who are still active, or nobody (an unaddressed draft, or a direct message draft to nobody yet,
    ignores `to` and `topic`)."""
    content = normalize_content(fields.content)
    last_edit_time = _edit_time(fields.timestamp)
    if fields.type == "stream":
        topic = truncate_topic(fields.topic)
        if len(fields.to) != 1:
            raise JsonableError("Must specify exactly 1 stream ID for stream messages")
        return CheckedDraft(_readable_channel(user, fields.to[0]), (), topic, content, last_edit_time)
    if fields.type == "private" and fields.to:
        people = tuple(access_dm_recipients(user, list(fields.to)))
        return CheckedDraft(None, people, "", content, last_edit_time)
    return CheckedDraft(None, (), "", content, last_edit_time)


def _edit_time(timestamp: float | None) -> datetime:
    if timestamp is None:
        return timezone.now()
    timestamp = round(timestamp, 6)
    if timestamp < 0:
        raise JsonableError("Timestamp must not be negative.")
    if not math.isfinite(timestamp) or timestamp >= TIMESTAMP_LIMIT:
        raise JsonableError("Timestamp is too large.")
    return datetime.fromtimestamp(timestamp, tz=UTC)


def _readable_channel(user: User, stream_id: int) -> Stream:
    """The channel, if the user may read it; "Invalid channel ID" otherwise (as for one that does
    not exist, or an id no channel could have)."""
    if not 0 < stream_id <= MAX_ID:
        raise JsonableError("Invalid channel ID")
    stream, _ = access_stream_by_id(user, stream_id)
    return stream


def _recipient(user: User, draft: CheckedDraft) -> Recipient | None:
    """Who the draft is addressed to, as messages are (made on first use)."""
    if draft.stream is not None:
        return get_recipient(Recipient.Type.STREAM, draft.stream.id)
    if draft.people:
        return direct_message_recipient(user.realm, user.id, [person.id for person in draft.people])
    return None


# --- changing drafts ------------------------------------------------------------------------------


def check_create_drafts(user: User, *, drafts: Sequence[DraftFields], acting_user: User | None) -> list[Draft]:
    """POST /drafts: every draft checked (check_draft) before any is stored, then do_create_drafts.
    Refused for a user who turned draft synchronization off."""
    check_acting_for(user, acting_user)
    check_drafts_synchronized(user)
    checked = [check_draft(user, fields) for fields in drafts]
    return do_create_drafts(user, drafts=checked, acting_user=acting_user)


@transaction.atomic
def do_create_drafts(user: User, *, drafts: Sequence[CheckedDraft], acting_user: User | None) -> list[Draft]:
    """Store checked drafts of the user's, in one insert; returned in the given order, with ids.
    Refused past Draft.MAX_PER_USER drafts, counted under a lock on the user (two concurrent
    requests cannot both pass the cap).

    Emits: drafts/add {drafts: [Draft]} to the user (none for no drafts).
    """
    check_acting_for(user, acting_user)
    User.objects.select_for_update().filter(id=user.id).values_list("id", flat=True).first()
    if drafts and Draft.objects.filter(user=user).count() + len(drafts) > Draft.MAX_PER_USER:
        raise TooManyDraftsError(Draft.MAX_PER_USER)
    created = Draft.objects.bulk_create(
        Draft(
            user=user,
            recipient=_recipient(user, draft),
            topic=draft.topic,
            content=draft.content,
            last_edit_time=draft.last_edit_time,
        )
        for draft in drafts
    )
    if created:
        send_event_on_commit(
            user.realm_id, {"type": "drafts", "op": "add", "drafts": drafts_as_dicts(created)}, [user.id]
        )
    return created


def check_edit_draft(draft: Draft, *, fields: DraftFields, acting_user: User | None) -> None:
    """PATCH /drafts/{id}, for a draft the view found (access_draft_by_id): the new draft checked
    (check_draft), then do_edit_draft."""
    check_acting_for(draft.user, acting_user)
    check_drafts_synchronized(draft.user)
    do_edit_draft(draft, new=check_draft(draft.user, fields), acting_user=acting_user)


@transaction.atomic
def do_edit_draft(draft: Draft, *, new: CheckedDraft, acting_user: User | None) -> None:
    """Replace the draft with a checked one; "Draft does not exist" if it was deleted meanwhile.

    Emits: drafts/update {draft: Draft} to the owner.
    """
    check_acting_for(draft.user, acting_user)
    recipient = _recipient(draft.user, new)
    values = {"topic": new.topic, "content": new.content, "last_edit_time": new.last_edit_time}
    if not Draft.objects.filter(id=draft.id, user_id=draft.user_id).update(recipient=recipient, **values):
        raise DraftDoesNotExistError()
    draft.recipient = recipient
    for name, value in values.items():
        setattr(draft, name, value)
    event = {"type": "drafts", "op": "update", "draft": drafts_as_dicts([draft])[0]}
    send_event_on_commit(draft.user.realm_id, event, [draft.user_id])


def check_delete_draft(draft: Draft, *, acting_user: User | None) -> None:
    """DELETE /drafts/{id}, for a draft the view found: do_delete_draft, unless the owner turned
    draft synchronization off."""
    check_acting_for(draft.user, acting_user)
    check_drafts_synchronized(draft.user)
    do_delete_draft(draft, acting_user=acting_user)


@transaction.atomic
def do_delete_draft(draft: Draft, *, acting_user: User | None) -> None:
    """Delete the draft; "Draft does not exist" if it was deleted meanwhile.

    Emits: drafts/remove {draft_id} to the owner.
    """
    check_acting_for(draft.user, acting_user)
    deleted, _ = Draft.objects.filter(id=draft.id, user_id=draft.user_id).delete()
    if not deleted:
        raise DraftDoesNotExistError()
    send_event_on_commit(draft.user.realm_id, {"type": "drafts", "op": "remove", "draft_id": draft.id}, [draft.user_id])


@transaction.atomic(savepoint=False)
def do_delete_all_drafts(user: User, *, acting_user: User | None) -> int:
    """Delete every draft of the user's (their synchronization was turned off); how many.

    Emits nothing: clients keep their local copies, as in Zulip.
    """
    check_acting_for(user, acting_user)
    deleted, _ = Draft.objects.filter(user=user).delete()
    return deleted
