"""Request parameter classes of /navigation_views."""

from typing import Annotated

from pydantic import StringConstraints

from apps.core.params import Json, Params
from apps.navigation_views.models import NavigationView

Fragment = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=NavigationView.MAX_FRAGMENT_LENGTH)
]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=NavigationView.MAX_NAME_LENGTH)]


class AddNavigationViewParams(Params):
    fragment: Fragment
    is_pinned: Json[bool]
    name: Name | None = None


class UpdateNavigationViewParams(Params):
    is_pinned: Json[bool] | None = None
    name: Name | None = None
