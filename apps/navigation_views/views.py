"""Navigation views (/api/v1/navigation_views...): a user's own, for every user."""

from rest_framework.request import Request

from apps.core.params import parse_params, uses_params
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.navigation_views.actions import do_add_navigation_view, do_remove_navigation_view, do_update_navigation_view
from apps.navigation_views.selectors import navigation_views_for_user
from apps.navigation_views.serializers import AddNavigationViewParams, UpdateNavigationViewParams


class NavigationViewsView(ApiView):
    """GET /navigation_views: the user's views; POST: add one."""

    def get(self, request: Request):
        return json_success(request, {"navigation_views": navigation_views_for_user(request.user)})

    @uses_params(AddNavigationViewParams)
    def post(self, request: Request):
        params = parse_params(AddNavigationViewParams, request)
        do_add_navigation_view(request.user, fragment=params.fragment, is_pinned=params.is_pinned, name=params.name)
        return json_success(request)


class NavigationViewView(ApiView):
    """PATCH and DELETE /navigation_views/{fragment}."""

    @uses_params(UpdateNavigationViewParams)
    def patch(self, request: Request, fragment: str):
        params = parse_params(UpdateNavigationViewParams, request)
        do_update_navigation_view(request.user, fragment.strip(), is_pinned=params.is_pinned, name=params.name)
        return json_success(request)

    def delete(self, request: Request, fragment: str):
        do_remove_navigation_view(request.user, fragment.strip())
        return json_success(request)
