"""The project's URLs plus views that fail on purpose, for the error-handling tests."""

from django.db import OperationalError
from django.urls import path

from apps.core.responses import json_success
from apps.core.views import ApiView
from config import urls as project_urls


class CrashView(ApiView):
    authenticated = False

    def get(self, request):
        raise RuntimeError("boom: DATABASES=secret-settings-value")


class DatabaseDownView(ApiView):
    authenticated = False

    def get(self, request):
        raise OperationalError("connection to server at 127.0.0.1 failed")


class EchoView(ApiView):
    authenticated = False

    def get(self, request):
        return json_success(request)

    post = get


def plain_crash(request):
    raise RuntimeError("boom outside REST framework")


urlpatterns = [
    path("api/v1/test/crash", CrashView.as_view()),
    path("api/v1/test/database-down", DatabaseDownView.as_view()),
    path("api/v1/test/echo", EchoView.as_view()),
    path("plain-crash", plain_crash),
    *project_urls.urlpatterns,
]

handler400 = project_urls.handler400
handler403 = project_urls.handler403
handler404 = project_urls.handler404
handler500 = project_urls.handler500
