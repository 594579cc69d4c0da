"""Hooks the realms app calls (see apps/core/hooks.py); higher apps register with them."""

from apps.core.hooks import Hooks

# realm_created(realm): an organization was created, in its transaction, before its first user
# (apps.users: its defaults for new users; apps.groups: its system groups, and its group settings at
# their defaults).
realm_created = Hooks("realm_created")
