"""Channels, subscriptions and topic visibility (/api/v1/streams..., /users/me/subscriptions...,
/user_topics)."""

from rest_framework.request import Request

from apps.core.errors import JsonableError
from apps.core.params import parse_params
from apps.core.permissions import IsNotGuest
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.realms.limits import EMPTY_TOPIC_DISPLAY_NAME, MAX_TOPIC_LENGTH
from apps.subscriptions import actions
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.subscriptions.selectors import (
    access_stream_by_id,
    access_stream_by_name,
    subscriber_ids_by_stream,
    subscriptions_of_user,
    visible_streams,
)
from apps.subscriptions.serializers import (
    BOOLEAN_PROPERTIES,
    COLOR_RE,
    BulkSubscriptionPropertiesParams,
    GetStreamIdParams,
    GetStreamsParams,
    LegacyMuteTopicParams,
    ListSubscriptionsParams,
    SubscribeParams,
    UnsubscribeParams,
    UpdateStreamParams,
    UpdateSubscriptionPropertyParams,
    UserTopicParams,
    subscription_to_dict,
)
from apps.users.models import User
from apps.users.selectors import access_user_by_id


class SubscriptionsView(ApiView):
    method_permission_classes = {"post": [IsNotGuest]}

    """GET (list), POST (subscribe, creating channels) and DELETE (unsubscribe) /users/me/subscriptions."""

    def get(self, request: Request):
        params = parse_params(ListSubscriptionsParams, request)
        subs = [s for s in subscriptions_of_user(request.user) if s.active and not s.stream.deactivated]
        streams = [s.stream for s in subs]
        subscribers = subscriber_ids_by_stream([s.id for s in streams])
        shapes = actions.stream_dicts(streams, subscriber_ids=subscribers)
        result = [
            subscription_to_dict(
                sub,
                shapes[sub.stream_id],
                subscribers=sorted(subscribers[sub.stream_id]) if params.include_subscribers else None,
            )
            for sub in subs
        ]
        return json_success(request, {"subscriptions": result})

    def post(self, request: Request):
        user = request.user
        params = parse_params(SubscribeParams, request)
        return json_success(request, actions.check_add_subscriptions(user, params))

    def delete(self, request: Request):
        user = request.user
        params = parse_params(UnsubscribeParams, request)
        return json_success(request, actions.check_remove_subscriptions(user, params.subscriptions, params.principals))


class SubscriptionPropertiesView(ApiView):
    """POST /users/me/subscriptions/properties: several settings at once (the official client's form)."""

    def post(self, request: Request):
        params = parse_params(BulkSubscriptionPropertiesParams, request)
        apply_property_changes(request.user, [(c.stream_id, c.property, c.value) for c in params.subscription_data])
        return json_success(request)


class SubscriptionView(ApiView):
    """GET (is subscribed) and PATCH (one setting) /users/me/subscriptions/{stream_id}."""

    def get(self, request: Request, stream_id: int):
        return json_success(request, {"is_subscribed": is_subscribed(request.user, request.user, stream_id)})

    def patch(self, request: Request, stream_id: int):
        params = parse_params(UpdateSubscriptionPropertyParams, request)
        apply_property_changes(request.user, [(stream_id, params.property, params.value)])
        return json_success(request)


class UserSubscriptionView(ApiView):
    """GET /users/{user_id}/subscriptions/{stream_id}: whether that user is subscribed."""

    def get(self, request: Request, user_id: int, stream_id: int):
        target = access_user_by_id(request.user, user_id, allow_deactivated=True, allow_bots=True)
        return json_success(request, {"is_subscribed": is_subscribed(request.user, target, stream_id)})


def is_subscribed(user: User, target: User, stream_id: int) -> bool:
    stream, _ = access_stream_by_id(user, stream_id, require_content_access=False)
    return Subscription.objects.filter(user=target, stream=stream, active=True).exists()


def apply_property_changes(user: User, changes: list[tuple[int, str, bool | str]]) -> None:
    """Validate every change (channel id, property, value), then apply them all (all or nothing).

    Plain values, not a parameter class: only parse_params builds those, turning what they refuse into
    a 400 (a class built here would raise pydantic's ValidationError, a 500).
    """
    checked = []
    for stream_id, name, value in changes:
        if name == "color":
            if not isinstance(value, str):
                raise JsonableError("color is not a string")
            if not COLOR_RE.fullmatch(value):  # check_color's error is for parameter validators only
                raise JsonableError("color is not a valid hex color code")
        elif name in BOOLEAN_PROPERTIES:
            if not isinstance(value, bool):
                raise JsonableError(f"{name} is not a boolean")
        else:
            raise JsonableError(f"Unknown subscription property: {name}")
        _, sub = access_stream_by_id(user, stream_id)
        if sub is None:
            raise JsonableError(f"Not subscribed to channel ID {stream_id}")
        checked.append((sub, name, value))
    actions.do_change_subscription_properties(checked, acting_user=user)


class UserTopicsView(ApiView):
    """POST /user_topics: the user's visibility policy for a topic."""

    def post(self, request: Request):
        params = parse_params(UserTopicParams, request)
        user = request.user
        topic = params.topic.strip()
        if len(topic) > MAX_TOPIC_LENGTH:
            raise JsonableError(f"topic is too long (limit: {MAX_TOPIC_LENGTH} characters)")
        if topic == EMPTY_TOPIC_DISPLAY_NAME:
            topic = ""
        if params.visibility_policy == UserTopic.VisibilityPolicy.INHERIT:
            # Removing a policy needs no access to the channel any more, only a policy to remove;
            # without one, the channel must be one the user could set a policy in (a no-op there).
            stream = Stream.objects.filter(realm_id=user.realm_id, id=params.stream_id).first()
            if stream is None or not UserTopic.objects.filter(user=user, stream=stream).exists():
                stream, _ = access_stream_by_id(user, params.stream_id)
        else:
            stream, _ = access_stream_by_id(user, params.stream_id)
        actions.do_set_user_topic_visibility_policy(user, stream, topic, params.visibility_policy)
        return json_success(request)


class StreamsView(ApiView):
    """GET /streams: the channels the user can see, filtered as asked."""

    def get(self, request: Request):
        params = parse_params(GetStreamsParams, request)
        user = request.user
        include_all = params.include_all or params.include_all_active
        streams = visible_streams(user, include_archived=not params.exclude_archived)
        subscribed = set(Subscription.objects.filter(user=user, active=True).values_list("stream_id", flat=True))

        def wanted(stream: Stream) -> bool:
            if include_all:  # every channel the user has metadata access to (Zulip's rule)
                return True
            if params.include_subscribed and stream.id in subscribed:
                return True
            if params.include_public and stream.is_public and not user.is_guest:
                return True
            return params.include_web_public and stream.is_web_public

        shapes = actions.stream_dicts([s for s in streams if wanted(s)])
        result = list(shapes.values())
        if params.include_default:
            for shape in result:
                shape["is_default"] = False
        return json_success(request, {"streams": result})


class StreamView(ApiView):
    """GET, PATCH and DELETE (archive) /streams/{stream_id}."""

    def get(self, request: Request, stream_id: int):
        stream, _ = access_stream_by_id(request.user, stream_id, require_content_access=False)
        return json_success(request, {"stream": actions.stream_dicts([stream])[stream.id]})

    def patch(self, request: Request, stream_id: int):
        params = parse_params(UpdateStreamParams, request)
        actions.check_update_stream(request.user, stream_id, params)
        return json_success(request)

    def delete(self, request: Request, stream_id: int):
        stream = actions.access_stream_to_administer(request.user, stream_id)
        if stream.deactivated:
            raise JsonableError("Channel is already deactivated")
        actions.do_deactivate_stream(stream, acting_user=request.user)
        return json_success(request)


class StreamMembersView(ApiView):
    """GET /streams/{stream_id}/members: the ids of its subscribers."""

    def get(self, request: Request, stream_id: int):
        stream, _ = access_stream_by_id(request.user, stream_id, require_content_access=False)
        return json_success(request, {"subscribers": sorted(subscriber_ids_by_stream([stream.id])[stream.id])})


class StreamIdView(ApiView):
    """GET /get_stream_id?stream=name."""

    def get(self, request: Request):
        params = parse_params(GetStreamIdParams, request)
        stream, _ = access_stream_by_name(request.user, params.stream)
        return json_success(request, {"stream_id": stream.id})


class LegacyMutedTopicsView(ApiView):
    """PATCH /users/me/subscriptions/muted_topics (the official client's mute_topic)."""

    def patch(self, request: Request):
        params = parse_params(LegacyMuteTopicParams, request)
        user = request.user
        if len(params.topic.strip()) > MAX_TOPIC_LENGTH:
            raise JsonableError(f"topic is too long (limit: {MAX_TOPIC_LENGTH} characters)")
        if (params.stream_id is None) == (params.stream is None):
            raise JsonableError("Please choose one: 'stream' or 'stream_id'.")
        if params.stream_id is not None:
            stream, _ = access_stream_by_id(user, params.stream_id)
        else:
            stream, _ = access_stream_by_name(user, params.stream)
        topic = params.topic.strip()
        muted = UserTopic.objects.filter(
            user=user, stream=stream, topic_name__iexact=topic, visibility_policy=UserTopic.VisibilityPolicy.MUTED
        ).exists()
        if params.op == "add":
            if muted:
                raise JsonableError("Topic already muted")
            policy = UserTopic.VisibilityPolicy.MUTED
        else:
            if not muted:
                raise JsonableError("Topic is not muted")
            policy = UserTopic.VisibilityPolicy.INHERIT
        actions.do_set_user_topic_visibility_policy(user, stream, topic, policy)
        return json_success(request)
