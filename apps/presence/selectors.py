"""Reads of presence: an organization's users as its members see them, and one user's.

Only active people (not bots) of the requester's organization appear, and only those with the
`presence_enabled` setting on: the others appear offline, which is having no presence at all.
Everyone in an organization may see everyone's presence, but a guest the organization limits to
some people (apps/users/access.py), who sees theirs."""

import time
from typing import Any

from apps.core.errors import JsonableError
from apps.presence.backends import MAX_UPDATE_ID, PresenceTimes, store
from apps.presence.limits import DEFAULT_HISTORY_DAYS, OFFLINE_THRESHOLD_SECS
from apps.presence.models import UserStatus
from apps.presence.serializers import legacy_presence, modern_presence
from apps.users.access import access_user_by_email, access_user_by_id, accessible_user_ids, check_can_access_user
from apps.users.models import User
from apps.users.selectors import api_email_of_person

# Above this many users, the organization's people are read whole rather than by id.
_MAX_IDS_IN_QUERY = 1000
_DAY = 86_400


def presence_response(
    requester: User, *, slim: bool, last_update_id: int | None = None, history_limit_days: int | None = None
) -> dict[str, Any]:
    """`presences` (by user id when `slim`, else by API email), `server_timestamp`, and
    `presence_last_update_id`: the last change included, for the client's next `last_update_id`
    (its own when nothing changed since, -1 when it sent none and there is nothing)."""
    server_timestamp = time.time()
    now = int(server_timestamp)
    if history_limit_days == 0 or requester.realm.presence_disabled:
        found = []  # (an organization with presence off shows nobody online, as Zulip's)
    else:
        days = DEFAULT_HISTORY_DAYS if history_limit_days is None else history_limit_days
        # A client that already has presence only needs what changed; the first fetch goes back
        # `days` (clamped to times a date can hold).
        since = None if last_update_id is not None and last_update_id > 0 else _clamp(now - days * _DAY, 0, now + _DAY)
        after = None if last_update_id is None else _clamp(last_update_id, -1, MAX_UPDATE_ID)
        found = store().changed_since(requester.realm_id, after_update_id=after, connected_since=since)
        seen = accessible_user_ids(requester)  # (a guest who may see only some people: theirs)
        if seen is not None:
            found = [times for times in found if times.user_id in seen]
    presences = _presences_of(requester.realm, found, slim=slim)
    # Echoed clamped: never a number a client holding it in 64 bits cannot read (the hostile QA pass).
    last_id = -1 if last_update_id is None else _clamp(last_update_id, -1, MAX_UPDATE_ID)
    if found:
        last_id = max(times.update_id for times in found)
    return {"presences": presences, "server_timestamp": server_timestamp, "presence_last_update_id": last_id}


def access_user_for_presence(requester: User, user_id_or_email: str | int) -> User:
    """The active person named by id or email in the requester's organization: "No such user"
    otherwise (another organization's too), "Presence is not supported for bot users." for a bot and,
    as Zulip, "Insufficient permission" for a person hidden from a guest (apps/users/access.py)."""
    access = access_user_by_id if isinstance(user_id_or_email, int) else access_user_by_email
    target = access(requester, user_id_or_email, allow_bots=True, allow_deactivated=True, allow_inaccessible=True)
    if not target.is_active:
        raise JsonableError("No such user")
    if target.is_bot:
        raise JsonableError("Presence is not supported for bot users.")
    if requester.is_guest and not check_can_access_user(requester, target):
        raise JsonableError("Insufficient permission")
    return target


def user_presence(target: User, named: str | int, *, slim: bool) -> dict[str, Any]:
    """GET /users/{user_id_or_email}/presence: the modern shape when `slim`, else the legacy one
    without `client` and `pushable`, `aggregated` saying "offline" after OFFLINE_THRESHOLD_SECS.
    "No presence data for ..." for a user never seen, who turned presence off, or of an
    organization with presence off."""
    shown = target.presence_enabled and not target.realm.presence_disabled
    times = store().of_user(target.realm_id, target.id) if shown else None
    if times is None:
        raise JsonableError(f"No presence data for {named}")
    joined = int(target.date_joined.timestamp())
    if slim:
        return modern_presence(times, joined)
    presence = legacy_presence(times, joined)
    for value in presence.values():
        value.pop("client", None)
        value.pop("pushable", None)
    if int(time.time()) - presence["aggregated"]["timestamp"] > OFFLINE_THRESHOLD_SECS:
        presence["aggregated"]["status"] = "offline"
    return presence


def presence_event_recipients(realm_id: int, limit: int) -> list[int] | None:
    """The organization's active users (who receive its presence events), or None when there are
    more than `limit`: one query reading at most limit + 1 ids, however large the organization."""
    ids = list(User.objects.filter(realm_id=realm_id, is_active=True).values_list("id", flat=True)[: limit + 1])
    return ids if len(ids) <= limit else None


def _presences_of(realm, found: list[PresenceTimes], *, slim: bool) -> dict[str, dict]:
    """The presences of the people among `found` who appear. Read as plain values: an answer may
    hold every user of a large organization (a modern client's, a minute after everyone pinged)."""
    if not found:
        return {}
    people = User.objects.filter(realm=realm, is_active=True, bot_type__isnull=True, presence_enabled=True)
    if len(found) <= _MAX_IDS_IN_QUERY:
        people = people.filter(id__in=[times.user_id for times in found])
    if slim:
        keys = {user_id: str(user_id) for user_id in people.values_list("id", flat=True)}
    else:
        keys = {
            user_id: api_email_of_person(user_id, email, visibility, realm)
            for user_id, email, visibility in people.values_list("id", "delivery_email", "email_address_visibility")
        }
    shown = [times for times in found if times.user_id in keys]
    # Someone never active counts as active when they joined: only they need that date.
    never_active = [times.user_id for times in shown if times.active is None]
    joined = (
        {
            user_id: int(date_joined.timestamp())
            for user_id, date_joined in User.objects.filter(id__in=never_active).values_list("id", "date_joined")
        }
        if never_active
        else {}
    )
    shape = modern_presence if slim else legacy_presence
    return {keys[times.user_id]: shape(times, joined.get(times.user_id, 0)) for times in shown}


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))


def status_to_dict(status: UserStatus | None) -> dict:
    """Zulip's user status: only what is set (away when true, a text, an emoji)."""
    if status is None:
        return {}
    result: dict = {}
    if status.away:
        result["away"] = True
    if status.status_text:
        result["status_text"] = status.status_text
    if status.emoji_name:
        result.update(emoji_name=status.emoji_name, emoji_code=status.emoji_code, reaction_type=status.reaction_type)
    return result


def user_statuses(realm_id: int) -> dict[str, dict]:
    """POST /register's `user_status`: {user id: status} of the organization's active users who set one."""
    statuses = UserStatus.objects.filter(realm_id=realm_id, user__is_active=True)
    return {str(status.user_id): shown for status in statuses if (shown := status_to_dict(status))}


def user_status_of(user: User) -> dict:
    return status_to_dict(UserStatus.objects.filter(user=user).first())


def is_active_now(user: User) -> bool:
    """Whether a presence ping said the user was active in the last OFFLINE_THRESHOLD_SECS (push and
    email notifications reach those who are not)."""
    times = store().of_user(user.realm_id, user.id)
    return times is not None and times.active is not None and time.time() - times.active < OFFLINE_THRESHOLD_SECS
