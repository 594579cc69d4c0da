"""A new person's first messages: the recent conversation of the channels they joined (Zulip's
add_new_user_history), so that their combined feed starts with it rather than empty."""

from datetime import timedelta

from django.utils import timezone

from apps.messages.models import Message, Recipient, UserMessage
from apps.messages.newest import newest_changed_on_commit
from apps.subscriptions.models import Subscription
from apps.users.models import User

# As Zulip's: the newest messages of the last twelve weeks, at most a thousand, the newest twenty
# of them unread (older ones unread would look like a fault; in a quiet organization the last
# twenty may well be weeks old and still the place to start).
NEW_USER_HISTORY_MESSAGES = 1000
NEW_USER_UNREAD_MESSAGES = 20
NEW_USER_HISTORY_SPAN = timedelta(weeks=12)


def add_new_user_history(user: User) -> None:
    """Gives `user`, who just joined the organization and its channels, rows of those channels'
    recent messages (where the history is theirs to read: not a channel whose history is protected
    from new subscribers). A message that reached them meanwhile keeps its own row. Emits nothing:
    their clients have not registered yet, or read these with the state they register with."""
    stream_ids = Subscription.objects.filter(
        user=user, active=True, stream__history_public_to_subscribers=True, stream__deactivated=False
    ).values_list("stream_id", flat=True)
    recipient_ids = list(
        Recipient.objects.filter(type=Recipient.Type.STREAM, type_id__in=list(stream_ids)).values_list("id", flat=True)
    )
    if not recipient_ids:
        return
    recent = Message.objects.filter(
        realm_id=user.realm_id,
        recipient_id__in=recipient_ids,
        date_sent__gt=timezone.now() - NEW_USER_HISTORY_SPAN,
    ).order_by("-id")
    message_ids = set(recent.values_list("id", flat=True)[:NEW_USER_HISTORY_MESSAGES])
    message_ids -= set(
        UserMessage.objects.filter(user=user, message_id__in=message_ids).values_list("message_id", flat=True)
    )
    unread = set(sorted(message_ids)[-NEW_USER_UNREAD_MESSAGES:])
    newest_changed_on_commit(user.realm_id)
    UserMessage.objects.bulk_create(
        [UserMessage(user=user, message_id=mid, flags=0 if mid in unread else UserMessage.READ) for mid in message_ids],
        batch_size=1000,
    )
