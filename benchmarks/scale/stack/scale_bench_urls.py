"""Parley's URLs plus the benchmark's bare view, and the query-counting middleware (see
scale_bench_settings)."""

from django.db import connection
from django.http import JsonResponse
from django.urls import path

from config.urls import *  # noqa: F403
from config.urls import urlpatterns as parley_urlpatterns


def bare(request):
    """The floor: a Django JSON view with nothing behind it, through the same middleware."""
    return JsonResponse({"result": "success", "msg": ""})


urlpatterns = [path("bench/bare", bare), *parley_urlpatterns]


def count_queries_middleware(get_response):
    def middleware(request):
        if "HTTP_X_BENCH_COUNT" not in request.META:  # wrk's requests are not counted
            return get_response(request)
        count = [0]

        def counter(execute, sql, params, many, context):
            count[0] += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counter):
            response = get_response(request)
        response["X-Bench-Queries"] = str(count[0])
        return response

    return middleware
