"""What the messages app does for the apps below it (registered in MessagesConfig.ready)."""

from apps.core.markdown import description_renderer
from apps.linkifiers.selectors import linkifier_rules
from apps.messages.actions.history import add_new_user_history
from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.messages.actions.send import do_send_message
from apps.messages.group_mentions import group_mention_targets
from apps.messages.newest import newest_cache
from apps.messages.recent_conversations import direct_message_partner_ids
from apps.messages.rendering import render_message, silent_mention
from apps.messages.selectors import channel_link_targets, custom_emoji_targets, mention_targets
from apps.realms.hooks import realm_created
from apps.realms.models import Realm
from apps.subscriptions.hooks import channels_announced, subscribed_by_someone
from apps.subscriptions.models import Stream
from apps.users.hooks import Joining, own_user_extras, person_created, user_peers
from apps.users.models import User


@own_user_extras.register
def newest_message(user: User) -> dict[str, int]:
    """GET /users/me's max_message_id: the newest message the user has received (-1 for none)."""
    return {"max_message_id": newest_cache.max_message_id(user)}


@description_renderer.register
def render_description(realm_id: int, text: str, acting_user: User | None) -> str:
    """Descriptions are rendered as messages, as in Zulip: their mentions name people and groups
    (and notify nobody), their channel links link the channels the one writing knows of (the public
    ones when the server's own tools write it)."""
    by_name, user_ids = mention_targets(realm_id, text)
    channels = channel_link_targets(realm_id, acting_user, text)
    emoji = custom_emoji_targets(realm_id, text)
    groups = group_mention_targets(realm_id, text)
    return render_message(text, by_name, user_ids, linkifier_rules(realm_id), channels, emoji, groups).html


# --- the Notification Bot's announcements ----------------------------------------------------------


@realm_created.register
def create_notification_bot(realm: Realm) -> None:
    """A new organization has its Notification Bot from the start, as Zulip's: clients hold it
    (POST /register's cross_realm_bots) before its first notice, which is then no realm_user/add.
    Organizations made before this have theirs made at their first notice."""
    do_create_notification_bot(realm)


@channels_announced.register
def announce_new_channels(acting_user: User, streams: list[Stream]) -> None:
    """Zulip's announcement of channels created with `announce`, in the organization's new channel
    announcements channel, topic "new channels" (read for their creator)."""
    links = ", ".join(f"#**{stream.name}**" for stream in streams)
    if len(streams) > 1:
        content = f"{silent_mention(acting_user)} created the following channels: {links}."
    else:
        content = f"{silent_mention(acting_user)} created a new channel {links}."
    _announce(
        acting_user.realm, acting_user.realm.new_stream_announcements_stream, "new channels", content, acting_user
    )


@subscribed_by_someone.register
def notify_new_subscribers(acting_user: User, streams_by_user: dict[User, list[Stream]]) -> None:
    """Zulip's "@_**Ann|5** subscribed you to #**design**." from Notification Bot, to each person
    someone else subscribed to existing channels (the channels as the one subscribing knows them)."""
    bot = do_create_notification_bot(acting_user.realm)
    for user, streams in streams_by_user.items():
        names = sorted(stream.name for stream in streams)
        if len(names) == 1:
            content = f"{silent_mention(acting_user)} subscribed you to #**{names[0]}**."
        else:
            content = f"{silent_mention(acting_user)} subscribed you to the following channels:\n\n"
            content += "".join(f"* #**{name}**\n" for name in names)
        do_send_message(bot, dm_with=[user], content=content, client="Internal", links_as=acting_user, acting_user=None)


@person_created.register
def give_recent_history(user: User, joining: Joining) -> None:
    """The recent messages of the channels they joined (apps.subscriptions' hook, which joins them,
    runs first: the hooks run in INSTALLED_APPS' order)."""
    add_new_user_history(user)


@person_created.register
def announce_new_person(user: User, joining: Joining) -> None:
    """Zulip's "@_**Ann|5** joined this organization." in the organization's signup announcements
    channel, topic "signups", when it has one."""
    realm = user.realm
    if realm.signup_announcements_stream_id is not None:
        content = f"{silent_mention(user)} joined this organization."
        _announce(realm, realm.signup_announcements_stream, "signups", content, None)


def _announce(realm: Realm, stream: Stream, topic: str, content: str, acting_user: User | None) -> None:
    bot = do_create_notification_bot(realm)
    read_by = [acting_user.id] if acting_user is not None else []
    do_send_message(
        bot, stream=stream, topic=topic, content=content, client="Internal", read_by=read_by, acting_user=None
    )


# Whom a guest sees, where the organization limits it (apps/users/access.py).
user_peers.register(direct_message_partner_ids)
