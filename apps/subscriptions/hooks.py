"""Hooks the subscriptions app calls (see apps/core/hooks.py); higher apps register with them.

Each runs inside the action's transaction.
"""

from apps.core.hooks import Hooks

# channels_announced(acting_user, streams): the user created these channels and asked that they be
# announced (`announce`) in the organization's new channel announcements channel, which is set
# (apps.messages: the Notification Bot's message there).
channels_announced = Hooks("channels_announced")

# subscribed_by_someone(acting_user, {user: [stream, ...]}): the user subscribed these people to these
# existing channels, and asked that they be told (`send_new_subscription_messages`; apps.messages:
# a Notification Bot direct message to each).
subscribed_by_someone = Hooks("subscribed_by_someone")
