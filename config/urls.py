from django.contrib import admin
from django.urls import include, path

from apps.core import views as api_views
from apps.core.docs import ApiDocsView, OpenApiDocumentView
from apps.directory import views as directory_views
from apps.directory.urls import is_directory_path
from apps.messages import views as messages_views
from apps.messages.emoji import EMOJI_DATA_PATH

urlpatterns = [
    # The messaging API's OpenAPI document, and Swagger UI showing it.
    path("api/v1/openapi.json", OpenApiDocumentView.as_view()),
    path("api/docs/", ApiDocsView.as_view()),
    path("api/v1/", include("apps.realms.urls")),
    path("api/v1/", include("apps.users.urls")),
    path("api/v1/", include("apps.groups.urls")),
    path("api/v1/", include("apps.folders.urls")),
    path("api/v1/", include("apps.subscriptions.urls")),
    path("api/v1/", include("apps.linkifiers.urls")),
    path("api/v1/", include("apps.messages.urls")),
    path("api/v1/", include("apps.presence.urls")),
    path("api/v1/", include("apps.drafts.urls")),
    path("api/v1/", include("apps.snippets.urls")),
    path("api/v1/", include("apps.bot_storage.urls")),
    path("api/v1/", include("apps.push.urls")),
    path("api/v1/", include("apps.uploads.urls")),
    path("api/v1/", include("apps.invites.urls")),
    path("api/v1/", include("apps.events.urls")),
    path("admin/", admin.site.urls),
    # The server's emoji names (server_emoji_data_url), for clients' emoji pickers: no authentication.
    path(EMOJI_DATA_PATH.lstrip("/"), messages_views.EmojiDataView.as_view()),
    # Uploaded files (/user_uploads/...) and custom emoji images (/user_avatars/...).
    path("", include("apps.uploads.page_urls")),
    # HTML pages: confirming a new email address.
    path("accounts/", include("apps.users.page_urls")),
    # The sign-in pages: /join/<key>/ (an invitation link), /login/, /account/.
    path("", include("apps.web.page_urls")),
    # The directory API: /users, /users/{userId}, /version, /openapi.json.
    path("", include("apps.directory.urls")),
]


def by_url_space(api_handler, directory_handler):
    """Django's own error answer in the error shape of the API whose URL space the path is in."""

    def handler(request, *args, **kwargs):
        chosen = directory_handler if is_directory_path(request.path_info) else api_handler
        return chosen(request, *args, **kwargs)

    return handler


handler400 = by_url_space(api_views.bad_request, directory_views.bad_request)
handler403 = by_url_space(api_views.permission_denied, directory_views.permission_denied)
handler404 = by_url_space(api_views.not_found, directory_views.not_found)
handler500 = by_url_space(api_views.server_error, directory_views.server_error)
