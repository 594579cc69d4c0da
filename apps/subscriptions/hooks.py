"""Hooks the subscriptions app calls (see apps/core/hooks.py); higher apps register with them.

Each runs inside the action's transaction.
"""

from apps.core.hooks import Hooks

# channels_announced(acting_user, streams): the user created these channels and asked that they be
# announced (`announce`) in the organization's new channel announcements channel, which is set
# (apps.messages: the Notification Bot's message there).
channels_announced = Hooks("channels_announced")
