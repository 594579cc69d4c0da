"""Reads of navigation views. A user sees only their own: another's does not exist for them."""

from typing import Any

from apps.core.errors import ResourceNotFoundError
from apps.navigation_views.models import NavigationView
from apps.users.models import User


def navigation_view_to_dict(view: NavigationView) -> dict[str, Any]:
    return {"fragment": view.fragment, "is_pinned": view.is_pinned, "name": view.name}


def navigation_views_for_user(user: User) -> list[dict[str, Any]]:
    """The user's views, in the order they were made."""
    return [navigation_view_to_dict(view) for view in NavigationView.objects.filter(user=user).order_by("id")]


def access_navigation_view(user: User, fragment: str, *, lock: bool = False) -> NavigationView:
    """The user's view of this fragment ("Navigation view does not exist.", 404, for any other)."""
    rows = NavigationView.objects.filter(user=user, fragment=fragment)
    view = (rows.select_for_update() if lock else rows).first()
    if view is None:
        raise ResourceNotFoundError("Navigation view does not exist.")
    return view


def name_in_use(user: User, name: str) -> bool:
    return NavigationView.objects.filter(user=user, name=name).exists()
