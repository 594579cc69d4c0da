"""POST /register, and the Django entry point of GET /events and DELETE /events."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from rest_framework.request import Request

from apps.core.errors import MethodNotAllowedError, error_response
from apps.core.params import parse_params, uses_params
from apps.core.responses import json_success
from apps.core.version import PARLEY_VERSION
from apps.core.views import ApiView
from apps.events import longpoll
from apps.events.actions import do_register_queue, queue_options
from apps.events.serializers import DeleteQueueParams, EventsAnswer, GetEventsParams, RegisterAnswer, RegisterParams


class RegisterView(ApiView):
    @uses_params(RegisterParams, returns=RegisterAnswer)
    def post(self, request: Request):
        params = parse_params(RegisterParams, request)
        options = queue_options(params, lifespan_secs=params.requested_lifespan_secs(), user=request.user)
        # fetch_event_types defaults to event_types; sent as null it means everything.
        fetch_types = params.fetch_event_types if "fetch_event_types" in params.model_fields_set else params.event_types
        queue_id, state = do_register_queue(request.user, options, fetch_types)
        return json_success(
            request,
            {
                "queue_id": queue_id,
                # Events already in the state are kept out of the queue, so the client starts at -1.
                "last_event_id": -1,
                "idle_queue_timeout_secs": options.lifespan_secs,
                "zulip_feature_level": settings.API_FEATURE_LEVEL,
                "zulip_version": PARLEY_VERSION,
                "zulip_merge_base": PARLEY_VERSION,
                **state,
            },
        )


@method_decorator(csrf_exempt, name="dispatch")
class EventsView(View):
    """GET and DELETE /events. In production GET /api/v1/events is served by the thin route in
    config/asgi.py; the browser's GET /json/events, which its session authenticates, always here
    (the thin route has no sessions, and a browser polls far less often than the API's clients)."""

    # Not Django's OPTIONS answer (an empty text/html 200): a 405 like every other endpoint's.
    http_method_names = ["get", "head", "delete"]

    @uses_params(GetEventsParams, returns=EventsAnswer)
    async def get(self, request: HttpRequest) -> HttpResponse:
        poll = longpoll.PollRequest.from_django(request)
        response = await longpoll.get_events(poll)
        return response.to_django()

    @uses_params(DeleteQueueParams)
    async def delete(self, request: HttpRequest) -> HttpResponse:
        return await longpoll.delete_queue(request)

    async def http_method_not_allowed(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return error_response(MethodNotAllowedError(["GET", "HEAD", "DELETE"]))
