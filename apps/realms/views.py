"""Server and organization information for clients (/api/v1)."""

from django.conf import settings
from rest_framework.request import Request

from apps.core.auth import realm_for_request
from apps.core.params import Json, Params, parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsOrganizationOwner
from apps.core.responses import json_success
from apps.core.version import PARLEY_VERSION
from apps.core.views import ApiView
from apps.realms.actions import do_add_realm_domain, do_change_realm_domain, do_remove_realm_domain
from apps.realms.models import Realm
from apps.realms.selectors import realm_domains, realm_icon_url, rendered_realm_description

EXTERNAL_AUTH_METHODS = (
    "dev",
    "ldap",
    "remoteuser",
    "github",
    "azuread",
    "gitlab",
    "apple",
    "google",
    "saml",
    "openid connect",
)


class ServerSettingsView(ApiView):
    """GET /server_settings: needs no authentication and ignores credentials that are sent.

    Every Zulip client calls it first; the official Python client requires `zulip_version`.
    """

    # Anyone may ask: credentials sent are not looked at.
    authentication_classes = permission_classes = ()

    def get(self, request: Request):
        realm: Realm = realm_for_request(request._request)
        password = realm.password_auth_enabled
        user_agent = request.META.get("HTTP_USER_AGENT", "")
        return json_success(
            request,
            {
                "authentication_methods": {
                    "password": password,
                    "email": password,
                    **dict.fromkeys(EXTERNAL_AUTH_METHODS, False),
                },
                "external_authentication_methods": [],
                "zulip_feature_level": settings.API_FEATURE_LEVEL,
                "zulip_version": PARLEY_VERSION,
                "zulip_merge_base": PARLEY_VERSION,
                "push_notifications_enabled": settings.PUSH_NOTIFICATIONS_ENABLED,
                "is_incompatible": user_agent.startswith("ZulipInvalid"),
                "email_auth_enabled": password,
                "require_email_format_usernames": True,
                "realm_url": realm.url,
                "realm_uri": realm.url,
                "realm_name": realm.name,
                "realm_icon": realm_icon_url(realm),
                "realm_description": rendered_realm_description(realm),
                "realm_web_public_access_enabled": False,
            },
        )


class AddRealmDomainParams(Params):
    domain: str
    allow_subdomains: Json[bool]


class ChangeRealmDomainParams(Params):
    allow_subdomains: Json[bool]


class RealmDomainsView(ApiView):
    """GET /realm/domains: the organization's allowed domains, for everyone; POST: owners add one."""

    method_permission_classes = {"post": [IsOrganizationOwner]}

    def get(self, request: Request):
        return json_success(request, {"domains": realm_domains(request.user.realm)})

    @uses_params(AddRealmDomainParams)
    def post(self, request: Request):
        params = parse_params(AddRealmDomainParams, request)
        row = do_add_realm_domain(request.user.realm, params.domain, params.allow_subdomains, acting_user=request.user)
        return json_success(request, {"new_domain": [row.id, row.domain]})


class RealmDomainView(ApiView):
    """PATCH and DELETE /realm/domains/{domain}: owners only."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationOwner]

    @uses_params(ChangeRealmDomainParams)
    def patch(self, request: Request, domain: str):
        params = parse_params(ChangeRealmDomainParams, request)
        do_change_realm_domain(request.user.realm, domain, params.allow_subdomains, acting_user=request.user)
        return json_success(request)

    def delete(self, request: Request, domain: str):
        do_remove_realm_domain(request.user.realm, domain, acting_user=request.user)
        return json_success(request)
