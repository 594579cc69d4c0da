"""What the users app does when the apps below it change (registered in UsersConfig.ready)."""

from apps.realms.hooks import realm_created, realm_settings_changed
from apps.users.actions.notify import send_realm_update_events
from apps.users.actions.realm_defaults import do_create_realm_user_default

# A new organization gets its defaults for new users, before its first user is created.
realm_created.register(do_create_realm_user_default)
# Its people's clients learn of changed settings.
realm_settings_changed.register(send_realm_update_events)
