"""What the messages app does for the apps below it (registered in MessagesConfig.ready)."""

from apps.core.markdown import description_renderer
from apps.linkifiers.selectors import linkifier_rules
from apps.messages.group_mentions import group_mention_targets
from apps.messages.newest import max_message_id
from apps.messages.rendering import render_message
from apps.messages.selectors import channel_link_targets, custom_emoji_targets, mention_targets
from apps.users.hooks import own_user_extras
from apps.users.models import User


@own_user_extras.register
def newest_message(user: User) -> dict[str, int]:
    """GET /users/me's max_message_id: the newest message the user has received (-1 for none)."""
    return {"max_message_id": max_message_id(user)}


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
