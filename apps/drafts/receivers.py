"""What the drafts app does when the apps below it change (registered in DraftsConfig.ready)."""

from typing import Any

from apps.drafts.actions import do_delete_all_drafts
from apps.users.hooks import user_settings_changed
from apps.users.models import User


@user_settings_changed.register
def forget_drafts_when_synchronization_stops(user: User, changed: dict[str, Any]) -> None:
    """Turning enable_drafts_synchronization off deletes the drafts the server kept (clients keep
    their own copies: no event)."""
    if changed.get("enable_drafts_synchronization") is False:
        do_delete_all_drafts(user, acting_user=None)
