"""What the users app does when the apps below it change (registered in UsersConfig.ready)."""

from apps.realms.hooks import realm_created
from apps.users.actions.realm_defaults import do_create_realm_user_default

# A new organization gets its defaults for new users, before its first user is created.
realm_created.register(do_create_realm_user_default)
