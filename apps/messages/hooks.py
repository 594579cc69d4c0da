"""Hooks the messages app calls (see apps/core/hooks.py); higher apps register with them.

Each runs inside the action's transaction.
"""

from apps.core.hooks import Hooks

# message_sent(message, flags): a message was stored; `flags` maps each of its recipients' user ids
# (the sender's included) to their UserMessage flags (apps.push: notifications to phones;
# apps.webhooks: deliveries to the outgoing-webhook bots it triggers).
message_sent = Hooks("message_sent")

# messages_read(user, message_ids): the user marked these messages read; None: all of their
# messages (apps.push: the notifications of them come off the user's phones).
messages_read = Hooks("messages_read")

# messages_deleting(message_ids): these messages are about to be deleted (apps.push: the same).
messages_deleting = Hooks("messages_deleting")
