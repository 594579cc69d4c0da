"""What the presence app does when the apps below it change (registered in PresenceConfig.ready)."""

from typing import Any

from apps.presence.actions import do_send_presence_setting_changed
from apps.users.hooks import user_settings_changed
from apps.users.models import User


@user_settings_changed.register
def show_presence_setting_at_once(user: User, changed: dict[str, Any]) -> None:
    if "presence_enabled" in changed:
        do_send_presence_setting_changed(user, enabled=changed["presence_enabled"])
