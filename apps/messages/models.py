from django.db import models
from django.db.models.functions import Upper
from django.utils import timezone

from apps.realms.limits import MAX_TOPIC_LENGTH
from apps.realms.models import Realm
from apps.subscriptions.models import Stream
from apps.users.models import User


class Recipient(models.Model):
    """Who a message is addressed to: a user (one-on-one direct messages), a channel, or a group of
    users (group direct messages). Its id is the API's `recipient_id`."""

    class Type(models.IntegerChoices):
        PERSONAL = 1
        STREAM = 2
        DIRECT_MESSAGE_GROUP = 3

    type = models.PositiveSmallIntegerField(choices=Type.choices)
    type_id = models.BigIntegerField()  # a user, channel or DirectMessageGroup id

    class Meta:
        constraints = [models.UniqueConstraint(fields=["type", "type_id"], name="messages_one_recipient_per_target")]

    def __str__(self) -> str:
        return f"{self.get_type_display()} {self.type_id}"


class DirectMessageGroup(models.Model):
    """The set of users of a group direct message (three or more people)."""

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+")
    user_ids = models.JSONField()  # sorted
    key = models.CharField(max_length=64)  # sha256 of the sorted ids

    class Meta:
        constraints = [models.UniqueConstraint(fields=["realm", "key"], name="messages_one_group_per_user_set")]

    def __str__(self) -> str:
        return f"group of {', '.join(map(str, self.user_ids))}"


class Message(models.Model):
    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+")
    sender = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    recipient = models.ForeignKey(Recipient, on_delete=models.PROTECT, related_name="+")
    # Channel messages only: the channel (also reachable through the recipient) and the topic.
    stream = models.ForeignKey(Stream, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    topic = models.CharField(max_length=MAX_TOPIC_LENGTH, blank=True, default="")
    content = models.TextField()
    rendered_content = models.TextField()
    date_sent = models.DateTimeField(default=timezone.now)
    sending_client = models.CharField(max_length=40, default="API")
    has_link = models.BooleanField(default=False)
    has_image = models.BooleanField(default=False)
    has_attachment = models.BooleanField(default=False)
    last_edit_time = models.DateTimeField(null=True, blank=True)
    last_moved_time = models.DateTimeField(null=True, blank=True)
    # Zulip's edit history, newest first: for each edit {user_id, timestamp} with {prev_content,
    # prev_rendered_content} when the content changed and {prev_topic, topic} when it moved.
    edit_history = models.JSONField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["recipient", "id"], name="messages_by_recipient"),
            models.Index("stream", Upper("topic"), "id", name="messages_by_topic"),
            models.Index(fields=["sender", "id"], name="messages_by_sender"),
        ]

    def __str__(self) -> str:
        return f"message {self.id} from {self.sender_id}"

    @property
    def is_channel_message(self) -> bool:
        return self.stream_id is not None


class UserMessage(models.Model):
    """A message as one user has it: one row per recipient (and the sender), with their flags."""

    # Bits of `flags`, as in Zulip.
    READ = 1
    STARRED = 2
    COLLAPSED = 4
    MENTIONED = 8
    STREAM_WILDCARD_MENTIONED = 16
    TOPIC_WILDCARD_MENTIONED = 32
    HAS_ALERT_WORD = 64
    HISTORICAL = 128
    # Any mention: personal (a group's too) or wildcard.
    MENTION_BITS = MENTIONED | STREAM_WILDCARD_MENTIONED | TOPIC_WILDCARD_MENTIONED
    # Set on every row of a direct message (Zulip's `is_private`, the same bit): a partial index
    # finds a user's direct messages without walking their channel messages (migration 0010).
    # Internal: not one of the flags the API shows.
    IS_PRIVATE = 2048
    # API names, for the flags a message shows, in Zulip's order: wildcard_mentioned (either
    # wildcard bit) last, for clients older than the two (Zulip's feature level 224).
    FLAG_NAMES = {
        "read": READ,
        "starred": STARRED,
        "collapsed": COLLAPSED,
        "mentioned": MENTIONED,
        "stream_wildcard_mentioned": STREAM_WILDCARD_MENTIONED,
        "topic_wildcard_mentioned": TOPIC_WILDCARD_MENTIONED,
        "has_alert_word": HAS_ALERT_WORD,
        "historical": HISTORICAL,
        "wildcard_mentioned": STREAM_WILDCARD_MENTIONED | TOPIC_WILDCARD_MENTIONED,
    }
    EDITABLE_FLAGS = ("read", "starred", "collapsed")

    # A channel message adds a row per recipient, so each row costs only what serves a read: no
    # index of its own for the user (the unique (user, message) index serves lookups by user) and,
    # on PostgreSQL, no foreign key constraints (their checks locked each recipient's user row).
    # The relations stay: Django's cascades delete a message's or a user's rows (migration 0009).
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False)
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="user_messages", db_constraint=False)
    flags = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "message"], name="messages_one_row_per_user")]

    def __str__(self) -> str:
        return f"message {self.message_id} for {self.user_id}"

    @classmethod
    def flag_names(cls, flags: int) -> list[str]:
        return [name for name, bits in cls.FLAG_NAMES.items() if flags & bits]


class MutedUser(models.Model):
    """`user` has muted `muted_user`: their messages arrive read."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    muted_user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    date_muted = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "muted_user"], name="messages_mute_once")]

    def __str__(self) -> str:
        return f"{self.user_id} muted {self.muted_user_id}"


class AlertWord(models.Model):
    """A word or phrase that flags the messages containing it for `user` (`has_alert_word`).

    `word` is as the user wrote it (stripped); `key` is it lower-cased with Python's str.lower,
    as messages are matched (apps.messages.alert_words): a user's words are unique by it, so "Deploy"
    and "deploy" are one word, and they are found and removed by it in one query."""

    MAX_LENGTH = 100  # Zulip's, checked before stripping
    # Parley's cap on a user's words (Zulip has none): a send reads every recipient's words, so it
    # bounds what one recipient adds to a send.
    MAX_PER_USER = 100
    # str.lower makes a string at most twice as long ("İ" becomes two code points).
    MAX_KEY_LENGTH = 2 * MAX_LENGTH

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    word = models.CharField(max_length=MAX_LENGTH)
    key = models.CharField(max_length=MAX_KEY_LENGTH)

    class Meta:
        # Its index, led by the user, is also how a send reads its recipients' words.
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="messages_alert_word_once")]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.word}"


class PublicChannelListener(models.Model):
    """A user who registered an event queue with `all_public_streams`: for as long as such a queue
    can live, messages of every public channel are sent to them too (their other queues hide them)."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, primary_key=True, related_name="+")
    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+")
    last_registered = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["realm", "last_registered"], name="messages_public_listeners")]

    def __str__(self) -> str:
        return f"{self.user_id} listens to every public channel"


class Reaction(models.Model):
    """An emoji reaction of a user to a message (Zulip's Reaction): one per user, message and emoji
    (`emoji_code` and `reaction_type` name the emoji; `emoji_name` is the name it was given)."""

    class Type(models.TextChoices):
        UNICODE_EMOJI = "unicode_emoji"
        REALM_EMOJI = "realm_emoji"
        ZULIP_EXTRA_EMOJI = "zulip_extra_emoji"

    MAX_NAME_LENGTH = 60

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    # Found by the index below (its first column), which needs no other: a page of messages' reactions.
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+", db_index=False)
    emoji_name = models.CharField(max_length=MAX_NAME_LENGTH)
    emoji_code = models.CharField(max_length=MAX_NAME_LENGTH)
    reaction_type = models.CharField(max_length=30, choices=Type.choices, default=Type.UNICODE_EMOJI)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["message", "user", "reaction_type", "emoji_code"], name="messages_reaction_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user_id} reacted :{self.emoji_name}: to {self.message_id}"


class SubMessage(models.Model):
    """Data attached to a message by its readers (Zulip's SubMessage): the widgets of polls and
    to-do lists (`msg_type` "widget"), the first from the message's sender, then each vote, option
    and task as one more row."""

    MAX_MSG_TYPE_LENGTH = 100
    MAX_CONTENT_LENGTH = 10_000

    # Found by the index below (its first column), which needs no other: a page of messages' rows.
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+", db_index=False)
    sender = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    msg_type = models.CharField(max_length=MAX_MSG_TYPE_LENGTH)
    content = models.TextField()

    class Meta:
        indexes = [models.Index(fields=["message", "id"], name="messages_submessages")]

    def __str__(self) -> str:
        return f"{self.msg_type} of {self.message_id} from {self.sender_id}"


class NotificationBot(models.Model):
    """The organization's Notification Bot (Zulip's notification-bot, here one per organization): a
    system bot, owned by nobody, that posts the notices of moved messages. Created with its
    organization (an organization made before that has it made the first time it has something to
    say)."""

    FULL_NAME = "Notification Bot"
    EMAIL_LOCAL_PART = "notification-bot"

    realm = models.OneToOneField(Realm, on_delete=models.CASCADE, related_name="+")
    bot = models.OneToOneField(User, on_delete=models.PROTECT, related_name="+")

    def __str__(self) -> str:
        return f"{self.FULL_NAME} of {self.realm}"
