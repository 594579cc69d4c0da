"""Who a subscription change is for (`principals`), and whom a user controls (themself, their bots)."""

from apps.core.errors import JsonableError
from apps.users.access import access_user_by_email
from apps.users.models import User


def access_principals(acting_user: User, principals: list[int] | list[str] | None) -> list[User]:
    """The users a subscription change is for: the acting user when `principals` is empty (Zulip's
    `if principals:`), else the active users (bots too) named by ids (one query) or emails; "No such
    user" or "User is deactivated" (BAD_REQUEST) for any other, another organization's included,
    and for the system bots (in Zulip they are no users of the organization)."""
    if not principals:
        return [acting_user]
    wanted = list(dict.fromkeys(principals))
    if isinstance(wanted[0], str):
        # One user however many spellings of their email (emails are case-insensitive).
        found = (access_user_by_email(acting_user, email, allow_bots=True) for email in wanted)
        chosen = list({user.id: user for user in found}.values())
    else:
        users = {u.id: u for u in User.objects.filter(realm_id=acting_user.realm_id, id__in=wanted)}
        for user_id in wanted:
            if user_id not in users:
                raise JsonableError("No such user")
            if not users[user_id].is_active:
                raise JsonableError("User is deactivated")
        chosen = [users[user_id] for user_id in wanted]
    if any(user.is_system_bot for user in chosen):
        raise JsonableError("No such user")
    return chosen


def controls(acting_user: User, target: User) -> bool:
    """The user themself, or a bot they own."""
    return target.id == acting_user.id or (target.is_bot and target.bot_owner_id == acting_user.id)
