"""Parley's URLs plus the benchmark's bare views, and the query-counting middleware (see
scale_bench_settings)."""

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.urls import path

from apps.core import ratelimit
from apps.messages.models import UserMessage
from config.urls import *  # noqa: F403
from config.urls import urlpatterns as parley_urlpatterns


def bare(request):
    """The floor: a Django JSON view with nothing behind it, through the same middleware."""
    return JsonResponse({"result": "success", "msg": ""})


_NEWEST = (
    f"SELECT message_id FROM {UserMessage._meta.db_table} WHERE user_id = %s"  # noqa: S608
    " ORDER BY message_id DESC LIMIT 1"
)


def round_trips(request):
    """The bare view plus the two round trips GET /users/me makes for `?user=`: its rate limit's
    (one EVALSHA to Redis, as every API request's) and its newest message's (one index probe in
    PostgreSQL). Nothing else of Parley: no authentication, no serializer."""
    user_id = int(request.GET["user"])
    state = ratelimit.check(f"api_by_user:{user_id}", settings.RATE_LIMIT_API_BY_USER)
    with connection.cursor() as cursor:
        cursor.execute(_NEWEST, [user_id])
        row = cursor.fetchone()
    return JsonResponse({"result": "success", "msg": "", "max_message_id": row[0], "remaining": state.remaining})


urlpatterns = [path("bench/bare", bare), path("bench/round-trips", round_trips), *parley_urlpatterns]


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
