"""The project's URLs plus directory views that fail on purpose."""

from django.db import OperationalError
from django.urls import path

from apps.directory.views import DirectoryView
from config import urls as project_urls


class CrashView(DirectoryView):
    authenticated = False

    def get(self, request):
        raise RuntimeError("boom: DATABASES=secret-settings-value")


class DatabaseDownView(DirectoryView):
    authenticated = False

    def get(self, request):
        raise OperationalError("connection to server at 127.0.0.1 failed")


def plain_crash(request):
    raise RuntimeError("boom outside REST framework")


urlpatterns = [
    path("users/test/crash", CrashView.as_view()),
    path("users/test/database-down", DatabaseDownView.as_view()),
    path("users/test/plain-crash", plain_crash),
    *project_urls.urlpatterns,
]

handler400 = project_urls.handler400
handler403 = project_urls.handler403
handler404 = project_urls.handler404
handler500 = project_urls.handler500
