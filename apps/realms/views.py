"""Server and organization information for clients (/api/v1)."""

from django.conf import settings
from rest_framework.request import Request

from apps.core.auth import realm_for_request
from apps.core.markdown import render_markdown
from apps.core.responses import json_success
from apps.core.version import PARLEY_VERSION
from apps.core.views import ApiView
from apps.realms.models import Realm
from apps.realms.selectors import realm_icon_url

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
                "realm_description": render_markdown(realm.description),
                "realm_web_public_access_enabled": False,
            },
        )
