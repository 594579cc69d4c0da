from django.db import models
from django.db.models.functions import Upper
from django.utils import timezone

from apps.folders.models import ChannelFolder
from apps.groups.models import GROUP_CREATOR, GroupSetting, SystemGroups, UserGroup
from apps.realms.limits import MAX_STREAM_DESCRIPTION_LENGTH, MAX_STREAM_NAME_LENGTH
from apps.realms.models import Realm
from apps.users.models import User


class Stream(models.Model):
    """A channel (Zulip's API still says "stream"). Archived channels are kept (`deactivated`)."""

    MAX_NAME_LENGTH = MAX_STREAM_NAME_LENGTH
    MAX_DESCRIPTION_LENGTH = MAX_STREAM_DESCRIPTION_LENGTH

    class TopicsPolicy(models.TextChoices):
        INHERIT = "inherit"
        ALLOW_EMPTY_TOPIC = "allow_empty_topic"
        DISABLE_EMPTY_TOPIC = "disable_empty_topic"
        EMPTY_TOPIC_ONLY = "empty_topic_only"

    # Group-valued permission settings: name -> how it may be set (Zulip's defaults for a new channel;
    # GROUP_CREATOR is {direct_members: [creator], direct_subgroups: []}).
    SETTINGS = {
        "can_add_subscribers_group": GroupSetting(default=SystemGroups.NOBODY, allow_everyone_group=False),
        "can_administer_channel_group": GroupSetting(default=GROUP_CREATOR, allow_everyone_group=False),
        "can_create_topic_group": GroupSetting(default=SystemGroups.EVERYONE, allow_everyone_group=True),
        "can_delete_any_message_group": GroupSetting(default=SystemGroups.NOBODY, allow_everyone_group=True),
        "can_delete_own_message_group": GroupSetting(default=SystemGroups.NOBODY, allow_everyone_group=True),
        "can_move_messages_out_of_channel_group": GroupSetting(default=SystemGroups.NOBODY, allow_everyone_group=True),
        "can_move_messages_within_channel_group": GroupSetting(default=SystemGroups.NOBODY, allow_everyone_group=True),
        "can_remove_subscribers_group": GroupSetting(default=SystemGroups.ADMINISTRATORS, allow_everyone_group=False),
        "can_resolve_topics_group": GroupSetting(default=SystemGroups.NOBODY, allow_everyone_group=True),
        "can_send_message_group": GroupSetting(default=SystemGroups.EVERYONE, allow_everyone_group=True),
        "can_subscribe_group": GroupSetting(default=SystemGroups.NOBODY, allow_everyone_group=False),
    }

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="streams")
    name = models.CharField(max_length=MAX_NAME_LENGTH)
    description = models.CharField(max_length=MAX_DESCRIPTION_LENGTH, blank=True, default="")
    rendered_description = models.TextField(blank=True, default="")
    date_created = models.DateTimeField(default=timezone.now)
    creator = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    invite_only = models.BooleanField(default=False)
    history_public_to_subscribers = models.BooleanField(default=True)
    is_web_public = models.BooleanField(default=False)
    deactivated = models.BooleanField(default=False)
    # A default channel: people who join the organization join it (Zulip's DefaultStream).
    is_default = models.BooleanField(default=False)
    first_message_id = models.BigIntegerField(null=True, blank=True)
    # How many active users are active subscribers: what `subscriber_count` says, kept by every
    # change of a subscription or of a user's activation (recount_subscribers), so that lists of
    # channels need not read their subscriptions.
    subscriber_count = models.PositiveIntegerField(default=0)
    # None: the organization's default; -1: forever.
    message_retention_days = models.IntegerField(null=True, blank=True)
    topics_policy = models.CharField(max_length=32, choices=TopicsPolicy.choices, default=TopicsPolicy.INHERIT)
    # The folder the clients show it in; an archived folder keeps its channels.
    folder = models.ForeignKey(ChannelFolder, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    can_add_subscribers_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")
    can_administer_channel_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")
    # Who may start a topic (send, or move messages, to a topic the channel has no message in).
    can_create_topic_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")
    # Who may move the channel's messages to other channels, or to other topics of it, besides those
    # the organization's can_move_messages_between_channels_group / _between_topics_group allow.
    # Who may delete any of the channel's messages, or their own, or resolve its topics, besides those
    # the organization's settings of the same names allow (Zulip's feature levels 402 and 407).
    can_delete_any_message_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")
    can_delete_own_message_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")
    can_resolve_topics_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")
    can_move_messages_out_of_channel_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")
    can_move_messages_within_channel_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")
    can_remove_subscribers_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")
    can_send_message_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")
    can_subscribe_group = models.ForeignKey(UserGroup, on_delete=models.PROTECT, related_name="+")

    class Meta:
        verbose_name = "channel"  # as the admin and the README say it
        constraints = [
            models.UniqueConstraint(Upper("name"), "realm", name="subscriptions_stream_unique_name_per_realm"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_public(self) -> bool:
        return not self.invite_only


class Subscription(models.Model):
    """A user's membership of a channel and their settings for it. Unsubscribing keeps the row
    (`active` false): the channel is then in the user's "unsubscribed" list, with its settings."""

    # No index of their own: the unique (user, stream) index serves lookups by user, and
    # subscriptions_by_stream those by channel; each index more is paid by every subscription write.
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="subscriptions", db_index=False)
    stream = models.ForeignKey(Stream, on_delete=models.CASCADE, related_name="subscriptions", db_index=False)
    active = models.BooleanField(default=True)
    color = models.CharField(max_length=10)
    is_muted = models.BooleanField(default=False)
    pin_to_top = models.BooleanField(default=False)
    # None: follow the user's default.
    desktop_notifications = models.BooleanField(null=True, default=None)
    audible_notifications = models.BooleanField(null=True, default=None)
    push_notifications = models.BooleanField(null=True, default=None)
    email_notifications = models.BooleanField(null=True, default=None)
    wildcard_mentions_notify = models.BooleanField(null=True, default=None)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "stream"], name="subscriptions_one_per_user")]
        indexes = [
            models.Index(fields=["stream", "active"], name="subscriptions_by_stream"),
            # The subscribers who asked for an email about every message of the channel.
            models.Index(
                fields=["stream", "user"], condition=models.Q(email_notifications=True), name="subscriptions_email"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.stream}" + ("" if self.active else " (left)")


class UserTopic(models.Model):
    """A user's visibility policy for one topic of a channel (the topic need not have messages)."""

    class VisibilityPolicy(models.IntegerChoices):
        INHERIT = 0
        MUTED = 1
        UNMUTED = 2
        FOLLOWED = 3

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="user_topics")
    stream = models.ForeignKey(Stream, on_delete=models.CASCADE, related_name="+")
    topic_name = models.CharField(max_length=Stream.MAX_NAME_LENGTH)
    last_updated = models.DateTimeField(default=timezone.now)
    visibility_policy = models.PositiveSmallIntegerField(choices=VisibilityPolicy.choices)

    class Meta:
        constraints = [
            # Topics are case-insensitive, as in Zulip.
            models.UniqueConstraint("user", "stream", Upper("topic_name"), name="subscriptions_one_policy_per_topic"),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.stream} > {self.topic_name} ({self.get_visibility_policy_display()})"


class DefaultChannelGroup(models.Model):
    """A named set of channels offered together to people joining the organization (Zulip's
    DefaultStreamGroup); its channels are never the organization's default channels."""

    MAX_NAME_LENGTH = 60
    MAX_DESCRIPTION_LENGTH = 1024

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=MAX_NAME_LENGTH)
    description = models.CharField(max_length=MAX_DESCRIPTION_LENGTH, blank=True, default="")
    streams = models.ManyToManyField(Stream, related_name="+")

    class Meta:
        verbose_name = "default channel group"
        constraints = [models.UniqueConstraint(fields=["realm", "name"], name="subscriptions_unique_channel_group")]

    def __str__(self) -> str:
        return self.name
