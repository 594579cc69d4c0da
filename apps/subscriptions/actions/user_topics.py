"""Topic visibility policies (user topics): a user's muted, unmuted and followed topics.

Topic names are given in their stored form (apps.subscriptions.topics.topic_from_client) and
compared as topics are (same_topic). Zulip's audit log has no entry for them: they are each user's
own choice, not a change to the organization.
"""

from django.db import transaction
from django.utils import timezone

from apps.core.conflicts import retried_on_conflict
from apps.events.publish import send_event_on_commit
from apps.subscriptions.models import Stream, UserTopic
from apps.subscriptions.serializers import user_topic_to_dict
from apps.subscriptions.topics import same_topic
from apps.subscriptions.user_topic_policies import muted_topics_of, user_topic_policy
from apps.users.models import User


@transaction.atomic(savepoint=False)
def do_set_user_topic_visibility_policy(
    user: User, stream: Stream, topic_name: str, *, visibility_policy: int, acting_user: User | None
) -> None:
    """Set (or, with INHERIT, remove) `user`'s policy for the topic: the user themself acts, or an
    administrator deleting the topic (`acting_user`). Setting what is already set changes nothing
    and sends nothing; the stored name of an existing policy is kept.

    Emits: muted_topics (legacy; queues that also asked for user_topic do not get it), then
    user_topic {stream_id, topic_name, last_updated, visibility_policy}, to the user.
    """
    policies = UserTopic.objects.select_for_update().filter(
        same_topic("topic_name", topic_name), user=user, stream=stream
    )
    now = timezone.now()
    if visibility_policy == UserTopic.VisibilityPolicy.INHERIT:
        current = policies.first()
        if current is None:
            return
        current.delete()
        shape = {**user_topic_to_dict(current), "last_updated": int(now.timestamp()), "visibility_policy": 0}
    else:
        # A concurrent request for the same topic (a retry) may create the row first: get_or_create
        # then reads it, and this request updates it. Another may delete it between the two (the
        # race QA pass: set, set and cleared at once, a 500): tried again, it is created.
        defaults = {
            "user": user,
            "stream": stream,
            "topic_name": topic_name,
            "visibility_policy": visibility_policy,
            "last_updated": now,
        }
        current, created = retried_on_conflict(lambda: policies.get_or_create(defaults=defaults))
        if not created:
            if current.visibility_policy == visibility_policy:
                return
            current.visibility_policy, current.last_updated = visibility_policy, now
            current.save()
        shape = user_topic_to_dict(current)
    send_event_on_commit(user.realm_id, {"type": "muted_topics", "muted_topics": muted_topics_of(user)}, [user.id])
    send_event_on_commit(user.realm_id, {"type": "user_topic", **shape}, [user.id])


@transaction.atomic
def check_mute_topic(stream: Stream, topic_name: str, *, mute: bool, acting_user: User) -> None:
    """PATCH /users/me/subscriptions/muted_topics (the legacy form): the acting user mutes the topic,
    or unmutes it. Muting a muted topic, or unmuting one that is not muted (a followed or unmuted
    topic keeps its policy), succeeds and changes nothing (Zulip's feature level 169; before, they
    were errors).

    Emits: see do_set_user_topic_visibility_policy."""
    muted = user_topic_policy(acting_user, stream, topic_name) == UserTopic.VisibilityPolicy.MUTED
    if mute == muted:
        return
    policy = UserTopic.VisibilityPolicy.MUTED if mute else UserTopic.VisibilityPolicy.INHERIT
    do_set_user_topic_visibility_policy(
        acting_user, stream, topic_name, visibility_policy=policy, acting_user=acting_user
    )
