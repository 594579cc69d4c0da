"""Hooks the realms app calls (see apps/core/hooks.py); higher apps register with them."""

from apps.core.hooks import Hooks

# realm_created(realm): an organization was created, in its transaction, before its first user
# (apps.users: its defaults for new users; apps.groups: its system groups, and its group settings at
# their defaults).
realm_created = Hooks("realm_created")

# realm_settings_changed(realm, changes): settings of the organization changed (do_change_realm_settings),
# in its transaction; `changes` maps each changed setting to its new value, a channel as its id
# (apps.users: the `realm` events to the organization's active users).
realm_settings_changed = Hooks("realm_settings_changed")
