"""Reads of a user's topic policies (Zulip's user topics: muted, unmuted, followed topics)."""

from apps.subscriptions.models import Stream, UserTopic
from apps.subscriptions.topics import same_topic
from apps.users.models import User


def user_topics_of_user(user: User) -> list[UserTopic]:
    """The user's topic policies in channels they can still see exist (one query)."""
    return list(UserTopic.objects.filter(user=user, stream__deactivated=False).select_related("stream").order_by("id"))


def user_topic_policy(user: User, stream: Stream, topic_name: str) -> int:
    """The user's visibility policy for the topic (INHERIT without one). One query."""
    policy = (
        UserTopic.objects.filter(same_topic("topic_name", topic_name), user=user, stream=stream)
        .values_list("visibility_policy", flat=True)
        .first()
    )
    return UserTopic.VisibilityPolicy.INHERIT if policy is None else policy


def muted_topics_of(user: User) -> list[list]:
    """The legacy muted_topics list: [[channel name, topic, timestamp], ...]."""
    rows = UserTopic.objects.filter(
        user=user, visibility_policy=UserTopic.VisibilityPolicy.MUTED, stream__deactivated=False
    ).select_related("stream")
    return [[row.stream.name, row.topic_name, int(row.last_updated.timestamp())] for row in rows.order_by("id")]
