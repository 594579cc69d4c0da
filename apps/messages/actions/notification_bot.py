"""The organization's Notification Bot, which posts the server's notices (apps.messages.actions:
moves, resolved topics, reports, a bot's owner told of its mistakes; other apps' reminders and
announcements)."""

from apps.messages.models import NotificationBot
from apps.realms.models import Realm
from apps.users.actions.create_user import do_create_system_bot_once
from apps.users.models import User


def do_create_notification_bot(realm: Realm) -> User:
    """The organization's Notification Bot (a system bot owned by nobody, its address
    notification-bot@ the organization's domain for hidden addresses), created when it has none.

    Audit: USER_CREATED. Emits: realm_user/add (do_create_user) when created.
    """
    return do_create_system_bot_once(
        realm, NotificationBot, full_name=NotificationBot.FULL_NAME, email_local_part=NotificationBot.EMAIL_LOCAL_PART
    )
