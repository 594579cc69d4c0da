"""What the subscriptions app does when the apps below it change (registered in
SubscriptionsConfig.ready)."""

from collections.abc import Callable, Sequence
from typing import Any

from apps.folders.hooks import folder_in_use
from apps.folders.models import ChannelFolder
from apps.groups.hooks import group_deactivation_objections, group_membership_changing
from apps.groups.models import UserGroup
from apps.realms.hooks import realm_created
from apps.subscriptions.actions.access import GroupChannelAccess, send_stream_events_for_role_change
from apps.subscriptions.actions.channel_settings import send_setting_updates_for_user
from apps.subscriptions.actions.new_realm import create_initial_channels
from apps.subscriptions.actions.subscriptions import (
    bulk_remove_subscriptions,
    join_new_person_channels,
    send_peer_events_for_activation,
)
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import channel_peer_ids, settings_using_groups, subscribed_stream_ids, visible_streams
from apps.users.hooks import (
    Joining,
    bot_owner_changed,
    person_created,
    user_peers,
    user_reactivated,
    user_role_changing,
    users_deactivated,
)
from apps.users.models import User


@user_role_changing.register
def channels_seen(user: User, old_role: int, new_role: int) -> Callable[[], None]:
    """A guest no longer sees the public channels they are not in, an administrator sees every
    private channel, and back: the channels seen before, then the events for the difference."""
    before = visible_streams(user)
    return lambda: send_stream_events_for_role_change(user, before)


realm_created.register(create_initial_channels)


@person_created.register
def join_their_channels(user: User, joining: Joining) -> None:
    join_new_person_channels(user, join_default=joining.default_channels, channel_ids=joining.channel_ids)


@users_deactivated.register
def leave_subscriber_lists(users: Sequence[User]) -> None:
    send_peer_events_for_activation(users[0].realm_id, users, op="peer_remove")
    for user in users:
        send_setting_updates_for_user(user)


@user_reactivated.register
def rejoin_subscriber_lists(user: User) -> None:
    send_peer_events_for_activation(user.realm_id, [user], op="peer_add")
    send_setting_updates_for_user(user)


@bot_owner_changed.register
def leave_channels_hidden_from_the_owner(bot: User, acting_user: User | None) -> None:
    """A bot given to someone leaves the private channels they are not subscribed to (its API key
    would show them those channels), as Zulip's remove_bot_from_inaccessible_private_streams."""
    hidden = Stream.objects.filter(id__in=subscribed_stream_ids(bot), invite_only=True).exclude(
        id__in=subscribed_stream_ids(bot.bot_owner_id)
    )
    if streams := list(hidden):
        bulk_remove_subscriptions(bot.realm, [bot], streams, acting_user=acting_user)


@folder_in_use.register
def channels_in_folder(folder: ChannelFolder) -> bool:
    return Stream.objects.filter(folder=folder).exists()


@group_deactivation_objections.register
def channels_using_group(group: UserGroup, users_of_group: set[int]) -> list[dict[str, Any]]:
    return [
        {"type": "channel", "channel_id": stream.id, "settings": settings}
        for stream, settings in settings_using_groups(group.realm_id, users_of_group)
    ]


@group_membership_changing.register
def private_channel_access(group: UserGroup) -> Callable[[], None]:
    return GroupChannelAccess(group.realm_id, [group.id]).send_changes


# Whom a guest sees, where the organization limits it (apps/users/access.py).
user_peers.register(channel_peer_ids)
