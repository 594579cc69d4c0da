"""The directory API's URLs, at the root next to /api/v1. A trailing slash is tolerated, not redirected."""

from django.urls import re_path

from apps.directory import views

UUID_RE = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

urlpatterns = [
    re_path(r"^users/?$", views.UsersView.as_view()),
    re_path(rf"^users/(?P<user_id>{UUID_RE})/?$", views.UserView.as_view()),
    re_path(r"^version/?$", views.VersionView.as_view()),
    re_path(r"^openapi\.json/?$", views.OpenApiView.as_view()),
]

# The directory's URL space: every path under these first segments, known or not, answers errors
# in the directory's shape.
URL_ROOTS = frozenset({"users", "version", "openapi.json"})


def is_directory_path(path: str) -> bool:
    return path.lstrip("/").split("/", 1)[0] in URL_ROOTS
