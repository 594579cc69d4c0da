"""Reads of drafts. A user sees only their own: another person's draft does not exist for them."""

from collections.abc import Sequence
from typing import Any

from apps.drafts.errors import DraftDoesNotExistError, DraftsNotSynchronizedError
from apps.drafts.models import Draft
from apps.drafts.serializers import draft_to_dict
from apps.messages.models import DirectMessageGroup, Recipient
from apps.users.models import User

# The most drafts POST /register returns (Zulip's MAX_DRAFTS_IN_REGISTER_RESPONSE); GET /drafts has all.
MAX_DRAFTS_IN_REGISTER_RESPONSE = 1000


def check_drafts_synchronized(user: User) -> None:
    """Refuses (DraftsNotSynchronizedError) a user who turned draft synchronization off."""
    if not user.enable_drafts_synchronization:
        raise DraftsNotSynchronizedError()


def access_draft_by_id(user: User, draft_id: int) -> Draft:
    """The user's draft; "Draft does not exist" (404) if there is none of theirs with this id."""
    draft = Draft.objects.filter(id=draft_id, user=user).select_related("recipient").first()
    if draft is None:
        raise DraftDoesNotExistError()
    draft.user = user  # the same person: no query to read them again
    return draft


def drafts_for_user(user: User, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The user's Draft objects, most recently edited first: two queries, however many."""
    drafts = Draft.objects.filter(user=user).select_related("recipient").order_by("-last_edit_time", "-id")
    return drafts_as_dicts(list(drafts[:limit] if limit is not None else drafts))


def drafts_as_dicts(drafts: Sequence[Draft]) -> list[dict[str, Any]]:
    """Draft objects of these drafts (recipients loaded), in their order; one query for the people
    of group direct messages, if any."""
    group_ids = {
        d.recipient.type_id
        for d in drafts
        if d.recipient is not None and d.recipient.type == Recipient.Type.DIRECT_MESSAGE_GROUP
    }
    groups = (
        dict(DirectMessageGroup.objects.filter(id__in=group_ids).values_list("id", "user_ids")) if group_ids else {}
    )
    return [draft_to_dict(d, to=_addressees(d, groups)) for d in drafts]


def _addressees(draft: Draft, groups: dict[int, list[int]]) -> list[int]:
    recipient = draft.recipient
    if recipient is None:
        return []
    if recipient.type == Recipient.Type.DIRECT_MESSAGE_GROUP:
        return sorted(uid for uid in groups.get(recipient.type_id, ()) if uid != draft.user_id)
    return [recipient.type_id]  # the channel, or the other person (the owner, for a draft to themselves)
