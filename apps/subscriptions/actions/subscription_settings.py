"""A user's settings for a channel they are subscribed to (color, muting, notifications, ...)."""

from collections.abc import Sequence

from django.db import transaction

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.subscriptions.models import Subscription
from apps.subscriptions.selectors import access_stream_by_id
from apps.subscriptions.serializers import BOOLEAN_PROPERTIES, COLOR_RE, normalize_color
from apps.users.models import User


@transaction.atomic(savepoint=False)
def do_change_subscription_property(sub: Subscription, prop: str, value: bool | str, *, acting_user: User) -> None:
    """Set one of the user's settings for the channel (validated by the caller; the user acts).

    Emits: subscription/update {stream_id, property, value} to the user; for is_muted and its
    legacy inverse in_home_view, two events: in_home_view first, then is_muted.
    """
    if prop in ("is_muted", "in_home_view"):
        muted = value if prop == "is_muted" else not value
        sub.is_muted = muted
        sub.save(update_fields=["is_muted"])
        updates = [("in_home_view", not muted), ("is_muted", muted)]
    else:
        setattr(sub, prop, value)
        sub.save(update_fields=[prop])
        updates = [(prop, value)]
    for name, new_value in updates:
        event = {
            "type": "subscription",
            "op": "update",
            "stream_id": sub.stream_id,
            "property": name,
            "value": new_value,
        }
        send_event_on_commit(acting_user.realm_id, event, [sub.user_id])


@transaction.atomic
def check_change_subscription_properties(changes: Sequence[tuple[int, str, bool | str]], *, acting_user: User) -> None:
    """PATCH /users/me/subscriptions/{stream_id} and POST /users/me/subscriptions/properties: the
    acting user's settings (channel id, property, value), each checked (its value, then the
    channel: one the user can read and is subscribed to), then all applied; all or nothing.

    Plain values, not a parameter class: only parse_params builds those, turning what they refuse
    into a 400 (a class built here would raise pydantic's ValidationError, a 500).

    A channel is looked up once, and a property set several times takes its last value, once (the
    expensive-request QA pass: 10,000 changes of one channel took 49 s, a lookup and a save each).

    Emits: see do_change_subscription_property, for each change in order."""
    subs: dict[int, Subscription] = {}
    checked: dict[tuple[int, str], tuple[Subscription, str, bool | str]] = {}
    for stream_id, name, value in changes:
        if name == "color":
            if not isinstance(value, str):
                raise JsonableError("color is not a string")
            if not COLOR_RE.fullmatch(value):  # check_color's error is for parameter validators only
                raise JsonableError("color is not a valid hex color code")
            value = normalize_color(value)
        elif name in BOOLEAN_PROPERTIES:
            if not isinstance(value, bool):
                raise JsonableError(f"{name} is not a boolean")
        else:
            raise JsonableError(f"Unknown subscription property: {name}")
        if stream_id not in subs:
            _, sub = access_stream_by_id(acting_user, stream_id)
            if sub is None:
                raise JsonableError(f"Not subscribed to channel ID {stream_id}")
            subs[stream_id] = sub
        checked.pop((stream_id, name), None)  # in the order of its last change
        checked[(stream_id, name)] = (subs[stream_id], name, value)
    for sub, name, value in checked.values():
        do_change_subscription_property(sub, name, value, acting_user=acting_user)
