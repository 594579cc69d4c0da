"""What the messages app does for the apps below it (registered in MessagesConfig.ready)."""

from apps.messages.newest import max_message_id
from apps.users.hooks import own_user_extras
from apps.users.models import User


@own_user_extras.register
def newest_message(user: User) -> dict[str, int]:
    """GET /users/me's max_message_id: the newest message the user has received (-1 for none)."""
    return {"max_message_id": max_message_id(user)}
