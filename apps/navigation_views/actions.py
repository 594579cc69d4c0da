"""Navigation views (Zulip's /navigation_views): how a user arranges their left sidebar. Built-in
views keep their names (clients name them); a user's own views need one, unique among their views.
A user's views are their own: events go to their queues only."""

from typing import Any

from django.db import IntegrityError, transaction

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.navigation_views.models import NavigationView
from apps.navigation_views.selectors import access_navigation_view, name_in_use, navigation_view_to_dict
from apps.users.models import User

# The views clients have of their own (Zulip's BUILT_IN_VIEW_FRAGMENTS): a row only says whether
# the user pinned or hid one.
BUILT_IN_VIEW_FRAGMENTS = frozenset(
    {
        "inbox",
        "recent",
        "feed",
        "drafts",
        "narrow/has/reaction/sender/me",
        "narrow/is/mentioned",
        "narrow/is/starred",
        "scheduled",
        "reminders",
    }
)


class NavigationViewExistsError(JsonableError):
    def __init__(self) -> None:
        super().__init__("Navigation view already exists.")


def _check_name(fragment: str, name: str | None) -> None:
    if fragment in BUILT_IN_VIEW_FRAGMENTS and name is not None:
        raise JsonableError("Built-in views cannot have a custom name.")


def _send(user: User, event: dict[str, Any]) -> None:
    send_event_on_commit(user.realm_id, {"type": "navigation_view", **event}, [user.id])


@transaction.atomic
def do_add_navigation_view(user: User, *, fragment: str, is_pinned: bool, name: str | None) -> NavigationView:
    """POST /navigation_views, with Zulip's checks in its order (`fragment` and `name` stripped and
    not blank: the parameters'). At most NavigationView.MAX_PER_USER, counted under a lock on the user.

    Emits: navigation_view/add {navigation_view} to the user."""
    _check_name(fragment, name)
    if fragment not in BUILT_IN_VIEW_FRAGMENTS and not name:
        raise JsonableError("Custom views must have a valid name.")
    User.objects.select_for_update().filter(id=user.id).first()
    if NavigationView.objects.filter(user=user, fragment=fragment).exists():
        raise NavigationViewExistsError()
    if name is not None and name_in_use(user, name):
        raise NavigationViewExistsError()
    if NavigationView.objects.filter(user=user).count() >= NavigationView.MAX_PER_USER:
        raise JsonableError(f"Too many navigation views (limit: {NavigationView.MAX_PER_USER}).")
    try:
        with transaction.atomic():
            view = NavigationView.objects.create(user=user, fragment=fragment, is_pinned=is_pinned, name=name)
    except IntegrityError:
        raise NavigationViewExistsError() from None
    _send(user, {"op": "add", "navigation_view": navigation_view_to_dict(view)})
    return view


@transaction.atomic
def do_update_navigation_view(user: User, fragment: str, *, is_pinned: bool | None, name: str | None) -> None:
    """PATCH /navigation_views/{fragment}: Zulip's checks in its order (a name any of the user's
    views has, this one's included, is taken).

    Emits: navigation_view/update {fragment, data: what the request gave} to the user."""
    _check_name(fragment, name)
    if name is not None and name_in_use(user, name):
        raise NavigationViewExistsError()
    view = access_navigation_view(user, fragment, lock=True)
    data = {key: value for key, value in (("is_pinned", is_pinned), ("name", name)) if value is not None}
    for key, value in data.items():
        setattr(view, key, value)
    if data:
        view.save(update_fields=list(data))
    _send(user, {"op": "update", "fragment": fragment, "data": data})


@transaction.atomic
def do_remove_navigation_view(user: User, fragment: str) -> None:
    """DELETE /navigation_views/{fragment} (a built-in one goes back to the clients' default).

    Emits: navigation_view/remove {fragment} to the user."""
    access_navigation_view(user, fragment, lock=True).delete()
    _send(user, {"op": "remove", "fragment": fragment})
