"""The project's URLs plus directory views that fail on purpose (the failures of tests/core/urls.py)."""

from django.urls import path

from apps.directory.views import DirectoryView
from config import urls as project_urls
from tests.core import urls as core_test_urls


class CrashView(DirectoryView):
    # Anyone may ask: credentials sent are not looked at.
    authentication_classes = permission_classes = ()
    get = core_test_urls.CrashView.get


class DatabaseDownView(DirectoryView):
    # Anyone may ask: credentials sent are not looked at.
    authentication_classes = permission_classes = ()
    get = core_test_urls.DatabaseDownView.get


urlpatterns = [
    path("users/test/crash", CrashView.as_view()),
    path("users/test/database-down", DatabaseDownView.as_view()),
    path("users/test/plain-crash", core_test_urls.plain_crash),
    *project_urls.urlpatterns,
]

handler400 = project_urls.handler400
handler403 = project_urls.handler403
handler404 = project_urls.handler404
handler500 = project_urls.handler500
