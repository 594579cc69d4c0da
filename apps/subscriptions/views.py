"""Channels, subscriptions and topic visibility (/api/v1/streams..., /users/me/subscriptions...,
/user_topics): parse, find what is acted on with an access selector, call one action."""

from django.db import transaction
from rest_framework.request import Request

from apps.core.errors import JsonableError
from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsNotGuest, IsOrganizationAdministrator
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.groups.actions.realm import check_update_realm
from apps.realms.models import Realm
from apps.subscriptions.actions.channel_settings import check_update_stream
from apps.subscriptions.actions.channels import (
    NewChannel,
    NewChannelOptions,
    do_deactivate_stream,
    do_set_default_channel,
    do_unarchive_stream,
)
from apps.subscriptions.actions.subscription_settings import check_change_subscription_properties
from apps.subscriptions.actions.subscriptions import (
    check_add_subscriptions,
    check_create_channel,
    check_remove_subscriptions,
)
from apps.subscriptions.actions.user_topics import check_mute_topic, do_set_user_topic_visibility_policy
from apps.subscriptions.default_groups import (
    access_channels_by_names,
    access_default_channel_group,
    do_change_default_channel_group,
    do_change_default_channel_group_channels,
    do_create_default_channel_group,
    do_remove_default_channel_group,
)
from apps.subscriptions.email_gateway import channel_email_address
from apps.subscriptions.models import UserTopic
from apps.subscriptions.principals import access_principals
from apps.subscriptions.realm_channels import (
    access_announcement_channel,
    access_channel_to_make_default,
    access_moderation_request_channel,
)
from apps.subscriptions.selectors import (
    access_stream_by_id,
    access_stream_by_name,
    access_stream_for_user_topic,
    access_stream_to_administer,
    access_streams_by_names,
    is_subscribed,
    stream_dicts,
    streams_for_list,
    subscriber_ids_by_stream,
    subscriptions_for_list,
)
from apps.subscriptions.serializers import (
    ANNOUNCEMENT_CHANNELS,
    BulkSubscriptionPropertiesParams,
    CreateChannelAnswer,
    CreateChannelParams,
    CreateDefaultChannelGroupParams,
    DefaultChannelGroupChannelsParams,
    DefaultStreamParams,
    GetStreamIdParams,
    GetStreamsParams,
    LegacyMuteTopicParams,
    ListSubscriptionsParams,
    NewChannelParams,
    StreamEmailAddressAnswer,
    StreamEmailAddressParams,
    SubscribeParams,
    SubscriptionsAnswer,
    UnsubscribeParams,
    UpdateDefaultChannelGroupParams,
    UpdateRealmWithChannelParams,
    UpdateStreamParams,
    UpdateSubscriptionPropertyParams,
    UpdateSubscriptionsParams,
    UserTopicParams,
)
from apps.users.access import access_user_by_id


def new_channel_options(params: NewChannelParams) -> NewChannelOptions:
    return NewChannelOptions(
        invite_only=params.invite_only,
        is_web_public=params.is_web_public,
        is_default_stream=params.is_default_stream,
        history_public_to_subscribers=params.history_public_to_subscribers,
        message_retention_days=params.retention_days(),
        topics_policy=params.topics_policy,
        group_settings=params.group_settings(),
        folder_id=params.folder_id,
        announce=params.announce,
    )


class SubscriptionsView(ApiView):
    """GET (list), POST (subscribe, creating channels), DELETE (unsubscribe) and PATCH (both)
    /users/me/subscriptions."""

    method_permission_classes = {"post": [IsNotGuest]}

    @uses_params(ListSubscriptionsParams, returns=SubscriptionsAnswer)
    def get(self, request: Request):
        params = parse_params(ListSubscriptionsParams, request)
        subscriptions = subscriptions_for_list(request.user, include_subscribers=params.include_subscribers != "false")
        return json_success(request, {"subscriptions": subscriptions})

    @uses_params(SubscribeParams)
    def post(self, request: Request):
        params = parse_params(SubscribeParams, request)
        users = access_principals(request.user, params.principals)
        result = check_add_subscriptions(
            [NewChannel(item.name, item.description or "", item.color) for item in params.subscriptions],
            users=users,
            authorization_errors_fatal=params.authorization_errors_fatal,
            options=new_channel_options(params),
            send_new_subscription_messages=params.send_new_subscription_messages,
            acting_user=request.user,
        )
        return json_success(request, result)

    @uses_params(UnsubscribeParams)
    def delete(self, request: Request):
        params = parse_params(UnsubscribeParams, request)
        users = access_principals(request.user, params.principals)
        streams = access_streams_by_names(request.user, params.subscriptions)
        return json_success(request, check_remove_subscriptions(streams, users=users, acting_user=request.user))

    @uses_params(UpdateSubscriptionsParams)
    def patch(self, request: Request):
        """Zulip's update_subscriptions: the user subscribed to `add` (created as POST creates
        them; not by guests) and unsubscribed from `delete`, all or nothing; both answers in one."""
        params = parse_params(UpdateSubscriptionsParams, request)
        if not params.add and not params.delete:
            raise JsonableError('Nothing to do. Specify at least one of "add" or "delete".')
        user = request.user
        if params.add and user.is_guest:
            raise IsNotGuest().error()
        answer: dict = {"subscribed": {}, "already_subscribed": {}}
        with transaction.atomic():
            if params.add:
                channels = [NewChannel(item.name, item.description or "", item.color) for item in params.add]
                answer = check_add_subscriptions(channels, users=[user], acting_user=user)
            streams = access_streams_by_names(user, params.delete)
            answer |= check_remove_subscriptions(streams, users=[user], acting_user=user)
        return json_success(request, answer)


class CreateChannelView(ApiView):
    """POST /channels/create: one new channel and its first subscribers (Zulip 11)."""

    permission_classes = [IsAuthenticatedUser, IsNotGuest]

    @uses_params(CreateChannelParams, returns=CreateChannelAnswer)
    def post(self, request: Request):
        params = parse_params(CreateChannelParams, request)
        subscribers = access_principals(request.user, params.subscribers) if params.subscribers else []
        stream = check_create_channel(
            NewChannel(params.name, params.description),
            subscribers=subscribers,
            options=new_channel_options(params),
            acting_user=request.user,
        )
        return json_success(request, {"id": stream.id})


class SubscriptionPropertiesView(ApiView):
    """POST /users/me/subscriptions/properties: several settings at once (the official client's form)."""

    @uses_params(BulkSubscriptionPropertiesParams)
    def post(self, request: Request):
        params = parse_params(BulkSubscriptionPropertiesParams, request)
        changes = [(change.stream_id, change.property, change.value) for change in params.subscription_data]
        check_change_subscription_properties(changes, acting_user=request.user)
        return json_success(request)


class SubscriptionView(ApiView):
    """GET (is subscribed) and PATCH (one setting) /users/me/subscriptions/{stream_id}."""

    def get(self, request: Request, stream_id: int):
        _, sub = access_stream_by_id(request.user, stream_id, require_content_access=False)
        return json_success(request, {"is_subscribed": sub is not None})

    @uses_params(UpdateSubscriptionPropertyParams)
    def patch(self, request: Request, stream_id: int):
        params = parse_params(UpdateSubscriptionPropertyParams, request)
        check_change_subscription_properties([(stream_id, params.property, params.value)], acting_user=request.user)
        return json_success(request)


class UserSubscriptionView(ApiView):
    """GET /users/{user_id}/subscriptions/{stream_id}: whether that user is subscribed."""

    def get(self, request: Request, user_id: int, stream_id: int):
        target = access_user_by_id(request.user, user_id, allow_deactivated=True, allow_bots=True)
        stream, _ = access_stream_by_id(request.user, stream_id, require_content_access=False)
        return json_success(request, {"is_subscribed": is_subscribed(target, stream)})


class UserTopicsView(ApiView):
    """POST /user_topics: the user's visibility policy for a topic."""

    @uses_params(UserTopicParams)
    def post(self, request: Request):
        params = parse_params(UserTopicParams, request)
        removing = params.visibility_policy == UserTopic.VisibilityPolicy.INHERIT
        stream = access_stream_for_user_topic(request.user, params.stream_id, removing=removing)
        do_set_user_topic_visibility_policy(
            request.user, stream, params.topic, visibility_policy=params.visibility_policy, acting_user=request.user
        )
        return json_success(request)


class StreamsView(ApiView):
    """GET /streams: the channels the user can see, filtered as asked."""

    @uses_params(GetStreamsParams)
    def get(self, request: Request):
        params = parse_params(GetStreamsParams, request)
        streams = streams_for_list(
            request.user,
            include_public=params.include_public,
            include_web_public=params.include_web_public,
            include_subscribed=params.include_subscribed,
            include_all=params.include_all or params.include_all_active,
            include_archived=not params.exclude_archived,
            include_default=params.include_default,
            include_owner_subscribed=params.include_owner_subscribed,
        )
        return json_success(request, {"streams": streams})


class StreamView(ApiView):
    """GET, PATCH and DELETE (archive) /streams/{stream_id}."""

    def get(self, request: Request, stream_id: int):
        stream, _ = access_stream_by_id(request.user, stream_id, require_content_access=False)
        return json_success(request, {"stream": stream_dicts([stream])[stream.id]})

    @uses_params(UpdateStreamParams)
    def patch(self, request: Request, stream_id: int):
        params = parse_params(UpdateStreamParams, request)
        # is_archived false unarchives the channel (Zulip's only use of it) before the other
        # changes; true archives it after them, as DELETE does. All or nothing.
        stream = access_stream_to_administer(request.user, stream_id, allow_archived=params.is_archived is not None)
        with transaction.atomic():
            if params.is_archived is False:
                do_unarchive_stream(stream, acting_user=request.user)
            check_update_stream(
                stream,
                description=params.description,
                new_name=params.new_name,
                is_private=params.is_private,
                is_web_public=params.is_web_public,
                history_public_to_subscribers=params.history_public_to_subscribers,
                is_default_stream=params.is_default_stream,
                message_retention_days=params.retention_days(),
                topics_policy=params.topics_policy,
                folder_id=params.folder_change(),
                group_settings=params.group_setting_changes(),
                acting_user=request.user,
            )
            if params.is_archived:
                do_deactivate_stream(stream, acting_user=request.user)
        return json_success(request)

    def delete(self, request: Request, stream_id: int):
        stream = access_stream_to_administer(request.user, stream_id, allow_archived=True)
        do_deactivate_stream(stream, acting_user=request.user)
        return json_success(request)


class StreamEmailAddressView(ApiView):
    """GET /streams/{stream_id}/email_address (apps.subscriptions.email_gateway)."""

    @uses_params(StreamEmailAddressParams, returns=StreamEmailAddressAnswer)
    def get(self, request: Request, stream_id: int):
        params = parse_params(StreamEmailAddressParams, request)
        return json_success(request, {"email": channel_email_address(request.user, stream_id, params.sender_id)})


class StreamMembersView(ApiView):
    """GET /streams/{stream_id}/members: the ids of its subscribers."""

    def get(self, request: Request, stream_id: int):
        stream, _ = access_stream_by_id(request.user, stream_id, require_content_access=False)
        return json_success(request, {"subscribers": sorted(subscriber_ids_by_stream([stream.id])[stream.id])})


class StreamIdView(ApiView):
    """GET /get_stream_id?stream=name."""

    @uses_params(GetStreamIdParams)
    def get(self, request: Request):
        params = parse_params(GetStreamIdParams, request)
        stream, _ = access_stream_by_name(request.user, params.stream)
        return json_success(request, {"stream_id": stream.id})


class LegacyMutedTopicsView(ApiView):
    """PATCH /users/me/subscriptions/muted_topics (the official client's mute_topic)."""

    @uses_params(LegacyMuteTopicParams)
    def patch(self, request: Request):
        params = parse_params(LegacyMuteTopicParams, request)
        if params.stream_id is not None:
            stream, _ = access_stream_by_id(request.user, params.stream_id)
        else:
            stream, _ = access_stream_by_name(request.user, params.stream)
        check_mute_topic(stream, params.topic, mute=params.op == "add", acting_user=request.user)
        return json_success(request)


class DefaultStreamsView(ApiView):
    """POST and DELETE /default_streams: administrators make a public channel one of the
    organization's default channels (people who join the organization join it), or not."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(DefaultStreamParams)
    def post(self, request: Request):
        params = parse_params(DefaultStreamParams, request)
        stream = access_channel_to_make_default(request.user, params.stream_id)
        do_set_default_channel(stream, True, acting_user=request.user)
        return json_success(request)

    @uses_params(DefaultStreamParams)
    def delete(self, request: Request):
        params = parse_params(DefaultStreamParams, request)
        stream, _ = access_stream_by_id(request.user, params.stream_id, require_content_access=False)
        do_set_default_channel(stream, False, acting_user=request.user)
        return json_success(request)


class RealmView(ApiView):
    """PATCH /realm: the organization's settings, by its administrators (here, above apps.groups
    which checks the group-valued ones, because some settings are channels)."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(UpdateRealmWithChannelParams)
    def patch(self, request: Request):
        params = parse_params(UpdateRealmWithChannelParams, request)
        settings = params.settings()
        if params.moderation_request_channel_id is not None:
            channel = access_moderation_request_channel(request.user, params.moderation_request_channel_id)
            settings["moderation_request_channel"] = channel
        for name in ANNOUNCEMENT_CHANNELS:
            channel_id = getattr(params, f"{name}_id")
            if channel_id is not None:
                settings[name] = access_announcement_channel(request.user, channel_id)
        realm = Realm.objects.get(id=request.user.realm_id)
        changed = check_update_realm(realm, settings, params.group_settings(), acting_user=request.user)
        return json_success(request, changed)


class DefaultChannelGroupsView(ApiView):
    """POST /default_stream_groups/create: a default channel group (administrators)."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(CreateDefaultChannelGroupParams)
    def post(self, request: Request):
        params = parse_params(CreateDefaultChannelGroupParams, request)
        streams = access_channels_by_names(request.user, params.stream_names)
        do_create_default_channel_group(request.user.realm, params.group_name, params.description, streams)
        return json_success(request)


class DefaultChannelGroupView(ApiView):
    """PATCH (its name, its description) and DELETE /default_stream_groups/{group_id}."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(UpdateDefaultChannelGroupParams)
    def patch(self, request: Request, group_id: int):
        params = parse_params(UpdateDefaultChannelGroupParams, request)
        if not params.new_group_name and not params.new_description:
            raise JsonableError('You must pass "new_description" or "new_group_name".')
        group = access_default_channel_group(request.user.realm, group_id)
        do_change_default_channel_group(group, name=params.new_group_name, description=params.new_description)
        return json_success(request)

    def delete(self, request: Request, group_id: int):
        do_remove_default_channel_group(access_default_channel_group(request.user.realm, group_id))
        return json_success(request)


class DefaultChannelGroupChannelsView(ApiView):
    """PATCH /default_stream_groups/{group_id}/streams: add or remove channels."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(DefaultChannelGroupChannelsParams)
    def patch(self, request: Request, group_id: int):
        params = parse_params(DefaultChannelGroupChannelsParams, request)
        group = access_default_channel_group(request.user.realm, group_id)
        streams = access_channels_by_names(request.user, params.stream_names)
        do_change_default_channel_group_channels(group, params.op, streams)
        return json_success(request)
