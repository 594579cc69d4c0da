"""The project's URLs plus test views: some fail on purpose (error handling), some report where
they run (the ASGI handler)."""

import asyncio
import threading

from django.db import OperationalError
from django.http import JsonResponse
from django.urls import path

from apps.core.responses import json_success
from apps.core.views import ApiView
from config import urls as project_urls


class CrashView(ApiView):
    # Anyone may ask: credentials sent are not looked at.
    authentication_classes = permission_classes = ()

    def get(self, request):
        raise RuntimeError("boom: DATABASES=secret-settings-value")


class DatabaseDownView(ApiView):
    # Anyone may ask: credentials sent are not looked at.
    authentication_classes = permission_classes = ()

    def get(self, request):
        raise OperationalError("connection to server at 127.0.0.1 failed")


class EchoView(ApiView):
    # Anyone may ask: credentials sent are not looked at.
    authentication_classes = permission_classes = ()

    def get(self, request):
        return json_success(request)

    post = get


def plain_crash(request):
    raise RuntimeError("boom outside REST framework")


def thread_name(request):
    return JsonResponse({"thread": threading.current_thread().name})


class Gate:
    """Async views wait here until a test opens it; `entered` counts the views waiting."""

    entered = 0
    opened: asyncio.Event | None = None


async def wait_at_gate(request):
    Gate.entered += 1
    await Gate.opened.wait()
    return JsonResponse({"thread": threading.current_thread().name})


urlpatterns = [
    path("api/v1/test/crash", CrashView.as_view()),
    path("api/v1/test/database-down", DatabaseDownView.as_view()),
    path("api/v1/test/echo", EchoView.as_view()),
    path("plain-crash", plain_crash),
    path("test/thread", thread_name),
    path("test/gate", wait_at_gate),
    *project_urls.urlpatterns,
]

handler400 = project_urls.handler400
handler403 = project_urls.handler403
handler404 = project_urls.handler404
handler500 = project_urls.handler500
