from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from apps.core import views as api_views
from apps.core.docs import ApiDocsView, OpenApiDocumentView
from apps.directory import views as directory_views
from apps.directory.urls import is_directory_path
from apps.messages.emoji import EMOJI_DATA_PATH
from apps.messages.views.conversation import EmojiDataView

# The API's endpoints, served twice with the same views: /api/v1/ with API keys (every client),
# /json/ with the browser's session and CSRF token (the web app: apps/core/sessions.py).
API_URLCONFS = [
    "apps.realms.urls",
    "apps.users.urls",
    "apps.groups.urls",
    "apps.folders.urls",
    "apps.subscriptions.urls",
    "apps.linkifiers.urls",
    "apps.messages.urls",
    "apps.presence.urls",
    "apps.drafts.urls",
    "apps.scheduled_messages.urls",
    "apps.snippets.urls",
    "apps.bot_storage.urls",
    "apps.bots.urls",
    "apps.navigation_views.urls",
    "apps.push.urls",
    "apps.uploads.urls",
    "apps.invites.urls",
    "apps.events.urls",
]

urlpatterns = [
    # The messaging API's OpenAPI document, and Swagger UI showing it.
    path("api/v1/openapi.json", OpenApiDocumentView.as_view()),
    path("api/docs/", ApiDocsView.as_view()),
    *[path(prefix, include(urlconf)) for prefix in ("api/v1/", "json/") for urlconf in API_URLCONFS],
    # Staff change their password where everyone does (the web app's settings: the old one checked
    # under the sign-in limit, audited), not on the admin's page, which has neither.
    path("admin/password_change/", RedirectView.as_view(url="/", permanent=False)),
    path("admin/", admin.site.urls),
    # The server's emoji names (server_emoji_data_url), for clients' emoji pickers: no authentication.
    path(EMOJI_DATA_PATH.lstrip("/"), EmojiDataView.as_view()),
    # Uploaded files (/user_uploads/...) and custom emoji images (/user_avatars/...).
    path("", include("apps.uploads.page_urls")),
    # HTML pages: confirming a new email address.
    path("accounts/", include("apps.users.page_urls")),
    # A person's picture by id or email (a redirect to it).
    path("avatar/", include("apps.users.avatar_urls")),
    # The sign-in pages: /join/<key>/ (an invitation link), /login/, /account/.
    path("", include("apps.web.page_urls")),
    # The directory API: /users, /users/{userId}, /version, /openapi.json.
    path("", include("apps.directory.urls")),
]


def by_url_space(api_handler, directory_handler):
    """Django's own error answer in the error shape of the API whose URL space the path is in, or
    as a page for a browser opening one (a sign-in page while the database is down, a mistyped
    address)."""

    def handler(request, *args, **kwargs):
        if is_directory_path(request.path_info):
            return directory_handler(request, *args, **kwargs)
        if api_views.wants_page(request):
            return api_handler(request, *args, render=api_views.page, **kwargs)
        return api_handler(request, *args, **kwargs)

    return handler


handler400 = by_url_space(api_views.bad_request, directory_views.bad_request)
handler403 = by_url_space(api_views.permission_denied, directory_views.permission_denied)
handler404 = by_url_space(api_views.not_found, directory_views.not_found)
handler500 = by_url_space(api_views.server_error, directory_views.server_error)
