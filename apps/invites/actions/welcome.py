"""The Welcome Bot: each organization's system bot (created with it; for organizations older than it,
by the migration invites 0003) greets every new person with one direct message: a greeting naming
the organization, then the custom text of their invitation or, without one, the organization's own
(`welcome_message_custom_text`). As in Zulip, every person is greeted however they were created
(an invitation, `create_user`, the demo); bots are not.

Administrators try a text out with POST /realm/test_welcome_bot_custom_message: the bot sends them
the message a newcomer would get with it.
"""

from apps.core.errors import JsonableError
from apps.invites.models import WelcomeBot
from apps.invites.selectors import get_welcome_bot
from apps.messages.actions.send import do_send_message, normalize_content
from apps.messages.models import Message
from apps.realms.models import Realm
from apps.users.actions.create_user import do_create_system_bot_once
from apps.users.models import User

# The client name the bot's messages are sent with (Zulip's internal messages use "Internal").
CLIENT = "Internal"

GREETING = (
    "Hello, and welcome to **{name}**!\n\n"
    "I'm the Welcome Bot. You can take part from any Zulip app (mobile, desktop or terminal) or "
    "script: the server is {url}, and you sign in with your email address and password.\n\n"
    "Conversations in channels each have a topic: reply in the topic of the conversation you join, "
    "and start a new topic for anything new."
)
CUSTOM_TEXT_HEADING = "**A message from the administrators of {name}:**"


def welcome_message_content(realm: Realm, custom_text: str) -> str:
    """The Welcome Bot's message: the greeting, then `custom_text` under its heading (none when empty)."""
    content = GREETING.format(name=realm.name, url=realm.url)
    if custom_text.strip():
        content += "\n\n" + CUSTOM_TEXT_HEADING.format(name=realm.name) + "\n\n" + custom_text
    return normalize_content(content)


def do_create_welcome_bot(realm: Realm) -> User:
    """The organization's Welcome Bot (a system bot, member, owned by nobody, its address
    welcome-bot@ the organization's domain for hidden addresses), created when it has none.

    Audit: USER_CREATED. Emits: realm_user/add (do_create_user) when created.
    """
    return do_create_system_bot_once(
        realm, WelcomeBot, full_name=WelcomeBot.FULL_NAME, email_local_part=WelcomeBot.EMAIL_LOCAL_PART
    )


def do_send_welcome_message(user: User, *, custom_text: str | None, acting_user: User | None) -> Message | None:
    """The Welcome Bot greets a new person: `custom_text` from their invitation (None: the
    organization's default; "": none). Nothing is sent when the organization has no active
    Welcome Bot (an operator deactivated it).

    Emits: message to the person and the bot (do_send_message).
    """
    bot = get_welcome_bot(user.realm_id)
    if bot is None or not bot.is_active:
        return None
    text = user.realm.welcome_message_custom_text if custom_text is None else custom_text
    content = welcome_message_content(user.realm, text)
    return do_send_message(
        bot, dm_with=[user], content=content, client=CLIENT, external_notifications=False, acting_user=None
    )


def check_send_test_welcome_message(custom_text: str, *, acting_user: User) -> Message:
    """POST /realm/test_welcome_bot_custom_message: the message a newcomer would get with this
    custom text, sent to the administrator asking. "Message must not be empty" for no text (Zulip's
    error); the organization's Welcome Bot is created first if it has none.

    Emits: message to the administrator and the bot.
    """
    if not custom_text:
        raise JsonableError("Message must not be empty")
    bot = do_create_welcome_bot(acting_user.realm)
    if not bot.is_active:
        raise JsonableError("The Welcome Bot is deactivated.")
    content = welcome_message_content(acting_user.realm, custom_text)
    return do_send_message(
        bot, dm_with=[acting_user], content=content, client=CLIENT, external_notifications=False, acting_user=None
    )
