"""The directory API's URLs, at the root next to /api/v1. As in Dropshot, empty path segments are
ignored (`/users//` is `/users`: a trailing slash is tolerated, not redirected), and the user id is
any one segment: one that is no UUID is a 400 (views.UserView), not a 404."""

from django.urls import re_path

from apps.directory import views

urlpatterns = [
    re_path(r"^/*users/*$", views.UsersView.as_view()),
    re_path(r"^/*users/+(?P<user_id>[^/]+)/*$", views.UserView.as_view()),
    re_path(r"^/*version/*$", views.VersionView.as_view()),
    re_path(r"^/*openapi\.json/*$", views.OpenApiView.as_view()),
]

# The directory's URL space: every path under these first segments, known or not, answers errors
# in the directory's shape.
URL_ROOTS = frozenset({"users", "version", "openapi.json"})


def is_directory_path(path: str) -> bool:
    return path.lstrip("/").split("/", 1)[0] in URL_ROOTS
