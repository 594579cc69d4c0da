"""Presence: recording a user's pings and telling the organization when they come online or become
active.

A ping is the user's own: only their clients send it (POST /users/me/presence). A user with
`presence_enabled` off is not recorded (they appear offline). Most pings write nothing
(apps/presence/backends.py); an event is sent only when the user's status as others see it
changes (offline to online, idle to active), at most once per EVENT_MIN_INTERVAL_SECS per user, and
only in organizations small enough (apps/presence/limits.py).
"""

import time

from django.db import transaction

from apps.core import ratelimit
from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.messages.actions.reactions import check_emoji, emoji_by_name
from apps.messages.models import Reaction
from apps.presence import limits
from apps.presence.backends import Ping, PresenceTimes, store
from apps.presence.limits import EVENT_MIN_INTERVAL_SECS, LEGACY_ACTIVE_OFFSET_SECS, OFFLINE_THRESHOLD_SECS
from apps.presence.models import UserStatus
from apps.presence.selectors import presence_event_recipients
from apps.presence.serializers import legacy_client_presence, modern_presence
from apps.users.access import audience_seeing
from apps.users.models import User
from apps.users.selectors import api_email


@transaction.atomic(savepoint=False)
def do_update_user_presence(user: User, *, active: bool, now: float | None = None) -> Ping | None:
    """Records a ping of `user` at `now` (default: the server's time), "active" or "idle".
    None when the user turned presence off (nothing recorded).

    Emits: presence to the organization's active users, when the user came online or became
    active, no other presence event of theirs went out in the last EVENT_MIN_INTERVAL_SECS, the
    organization has at most MAX_USERS_FOR_PRESENCE_EVENTS active users and presence is not off
    there (`presence_disabled`: pings are still recorded, shown once it is on again).
    """
    if not user.presence_enabled:
        return None
    now = time.time() if now is None else now
    ping = store().ping(user.realm_id, user.id, int(now), active)
    if not _status_changed(ping) or user.realm.presence_disabled:
        return ping
    recipients = presence_event_recipients(user.realm_id, limits.MAX_USERS_FOR_PRESENCE_EVENTS)
    if recipients is not None and _event_allowed(user):
        send_event_on_commit(user.realm_id, presence_event(user, ping.after, now), audience_seeing(user, recipients))
    return ping


def do_send_presence_setting_changed(user: User, *, enabled: bool) -> None:
    """Turning presence_enabled on or off shows at once, as in Zulip's do_change_user_setting
    (whatever EVENT_MIN_INTERVAL_SECS says: it is the user's choice, not a ping): turned on, the
    user is active now (recorded as a ping); turned off, a presence old enough for every client to
    show them offline (nothing recorded: the user no longer appears in presence reads).

    Emits: presence to the organization's active users (if it has at most
    MAX_USERS_FOR_PRESENCE_EVENTS and presence is not off there)."""
    now = time.time()
    if enabled:
        times = store().ping(user.realm_id, user.id, int(now), True).after
    else:
        offline = int(now) - OFFLINE_THRESHOLD_SECS - 120
        times = PresenceTimes(user.id, offline, offline, -1)
    if user.realm.presence_disabled:
        return
    recipients = presence_event_recipients(user.realm_id, limits.MAX_USERS_FOR_PRESENCE_EVENTS)
    if recipients is not None:
        send_event_on_commit(user.realm_id, presence_event(user, times, now), audience_seeing(user, recipients))


def _status_changed(ping: Ping) -> bool:
    before, after = ping.before, ping.after
    if not ping.written:
        return False
    if before is None or after.connected - before.connected > OFFLINE_THRESHOLD_SECS:
        return True  # came online
    was_idle = before.active is None or before.active + LEGACY_ACTIVE_OFFSET_SECS < before.connected
    return was_idle and after.active != before.active


def _event_allowed(user: User) -> bool:
    return not ratelimit.check(f"presence_event:{user.id}", (1, EVENT_MIN_INTERVAL_SECS)).blocked


def presence_event(user: User, times: PresenceTimes, now: float) -> dict:
    """The presence event: Zulip's legacy form (user_id, email, server_timestamp, presence) and,
    for clients with the simplified_presence_events capability, `presences` by user id (the
    events app's transform gives each queue one of the two)."""
    joined = int(user.date_joined.timestamp())
    return {
        "type": "presence",
        "user_id": user.id,
        "email": api_email(user),
        "server_timestamp": now,
        "presence": {"website": legacy_client_presence(times, joined)},
        "presences": {str(user.id): modern_presence(times, joined)},
    }


def check_update_user_status(
    user: User,
    *,
    away: bool | None,
    status_text: str | None,
    emoji_name: str | None,
    emoji_code: str | None,
    reaction_type: str | None,
) -> None:
    """POST /users/me/status with Zulip's rules: something to change; an emoji named, found from
    its name when its code is left out, and checked as reactions' are ("" clears it)."""
    if status_text is not None:
        status_text = status_text.strip()
    if away is None and status_text is None and emoji_name is None:
        raise JsonableError("Client did not pass any new values.")
    if emoji_name is None and (emoji_code is not None or reaction_type is not None):
        raise JsonableError("Client must pass emoji_name if they pass either emoji_code or reaction_type.")
    if emoji_name == "":
        emoji_code, reaction_type = "", Reaction.Type.UNICODE_EMOJI
    elif emoji_name is not None:
        if emoji_code is None:
            emoji_code, found_type = emoji_by_name(emoji_name, user.realm_id)
            reaction_type = reaction_type or found_type
        reaction_type = reaction_type or Reaction.Type.UNICODE_EMOJI
        check_emoji(emoji_name, emoji_code, reaction_type, user.realm_id)
    changes = {"away": away, "status_text": status_text}
    if emoji_name is not None:
        changes.update(emoji_name=emoji_name, emoji_code=emoji_code, reaction_type=reaction_type)
    do_update_user_status(user, {name: value for name, value in changes.items() if value is not None})


@transaction.atomic(savepoint=False)
def do_update_user_status(user: User, changes: dict) -> None:
    """Emits: user_status {user_id, and what changed} to the organization's active users."""
    status, _ = UserStatus.objects.get_or_create(user=user, defaults={"realm_id": user.realm_id})
    for name, value in changes.items():
        setattr(status, name, value)
    status.save()
    event = {"type": "user_status", "user_id": user.id, **changes}
    send_event_on_commit(user.realm_id, event, audience_seeing(user))
