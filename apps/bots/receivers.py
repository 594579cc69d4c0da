"""What the bots app does when the apps below it act (registered in BotsConfig.ready)."""

from apps.bots.selectors import allowed_bot_types
from apps.core.errors import JsonableError
from apps.users.hooks import bot_reactivating
from apps.users.models import User


@bot_reactivating.register
def check_may_still_make_the_kind(bot: User, acting_user: User) -> None:
    """Reactivating a bot takes the permission to make one of its kind (Zulip's check_bot_creation_policy)."""
    if bot.bot_type not in allowed_bot_types(acting_user):
        raise JsonableError("Insufficient permission")
