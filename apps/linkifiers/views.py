"""Linkifiers: GET /realm/linkifiers for everyone; POST, PATCH and DELETE /realm/filters[/{id}]
and the reorder (PATCH /realm/linkifiers) for administrators; the legacy GET /realm/filters. Code
playgrounds: POST and DELETE /realm/playgrounds[/{id}], for administrators."""

from rest_framework.request import Request

from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsOrganizationAdministrator
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.linkifiers.actions import (
    check_add_linkifier,
    check_reorder_linkifiers,
    check_update_linkifier,
    do_remove_linkifier,
)
from apps.linkifiers.playgrounds import access_playground_by_id, check_add_playground, do_remove_playground
from apps.linkifiers.selectors import access_linkifier_by_id, legacy_tuples, linkifiers_for_realm
from apps.linkifiers.serializers import LinkifierParams, PlaygroundParams, ReorderLinkifiersParams


class LinkifiersView(ApiView):
    """GET /realm/linkifiers (in the order they apply); PATCH: reorder them."""

    permission_classes = [IsAuthenticatedUser]
    method_permission_classes = {"patch": [IsOrganizationAdministrator]}

    def get(self, request: Request):
        return json_success(request, {"linkifiers": linkifiers_for_realm(request.user.realm_id)})

    @uses_params(ReorderLinkifiersParams)
    def patch(self, request: Request):
        params = parse_params(ReorderLinkifiersParams, request)
        check_reorder_linkifiers(request.user.realm, ordered_ids=params.ordered_linkifier_ids, acting_user=request.user)
        return json_success(request)


class FiltersView(ApiView):
    """POST /realm/filters: add a linkifier; GET: the legacy list of [pattern, URL template, id]."""

    permission_classes = [IsAuthenticatedUser]
    method_permission_classes = {"post": [IsOrganizationAdministrator]}

    def get(self, request: Request):
        return json_success(request, {"filters": legacy_tuples(linkifiers_for_realm(request.user.realm_id))})

    @uses_params(LinkifierParams)
    def post(self, request: Request):
        params = parse_params(LinkifierParams, request)
        linkifier = check_add_linkifier(request.user.realm, fields=params.fields(), acting_user=request.user)
        return json_success(request, {"id": linkifier.id})


class FilterView(ApiView):
    """PATCH and DELETE /realm/filters/{filter_id}."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(LinkifierParams)
    def patch(self, request: Request, filter_id: int):
        params = parse_params(LinkifierParams, request)
        linkifier = access_linkifier_by_id(request.user.realm, filter_id)
        check_update_linkifier(linkifier, fields=params.fields(), acting_user=request.user)
        return json_success(request)

    def delete(self, request: Request, filter_id: int):
        linkifier = access_linkifier_by_id(request.user.realm, filter_id)
        do_remove_linkifier(linkifier, acting_user=request.user)
        return json_success(request)


class PlaygroundsView(ApiView):
    """POST /realm/playgrounds: add a code playground."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(PlaygroundParams)
    def post(self, request: Request):
        params = parse_params(PlaygroundParams, request)
        playground = check_add_playground(
            request.user.realm,
            name=params.name,
            pygments_language=params.pygments_language,
            url_template=params.url_template,
            acting_user=request.user,
        )
        return json_success(request, {"id": playground.id})


class PlaygroundView(ApiView):
    """DELETE /realm/playgrounds/{playground_id}."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    def delete(self, request: Request, playground_id: int):
        playground = access_playground_by_id(request.user.realm, playground_id)
        do_remove_playground(playground, acting_user=request.user)
        return json_success(request)
