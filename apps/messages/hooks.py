"""Hooks the messages app calls (see apps/core/hooks.py); higher apps register with them.

Each runs inside the caller's transaction.
"""

from apps.core.hooks import Hooks

# message_content_saved(message) -> dict: `message` was stored with new content (sent, or its
# content edited; for an edit the row itself is written after the call). What the functions return
# is merged; `has_attachment` and `has_image` true set the message's fields, a `rendered_content`
# replaces its HTML, `detached_uploads` lists the sender's files (Attachment objects) nothing links
# any more (apps.uploads: the uploaded files its content links are claimed, those it no longer
# links released; the previews of the images it links added to its HTML).
message_content_saved = Hooks("message_content_saved")

# contents_to_send() -> list[(realm_id, content)]: the texts of messages still to be sent, whose
# uploaded files must be kept though no message links them yet (apps.scheduled_messages: those not
# sent yet; apps.uploads keeps their files when deleting unclaimed ones, as Zulip does).
contents_to_send = Hooks("contents_to_send")

# custom_emoji(realm_id) -> dict: the organization's custom emoji, active or not, by emoji code:
# {code: {"name": str, "deactivated": bool, "source_url": str}}, merged (apps.uploads: the
# organization's emoji).
custom_emoji = Hooks("custom_emoji")

# message_sent(message, flags, external_notifications): a message was stored; `flags` maps each of
# its recipients' user ids (the sender's included) to their UserMessage flags; `external_notifications`
# False: no email or phone notification of it (apps.push: notifications to phones;
# apps.email_notifications: emails to people offline; apps.webhooks: deliveries to the
# outgoing-webhook bots it triggers).
message_sent = Hooks("message_sent")

# mentions_added(message, user_ids): an edit of a channel message's content mentions these recipients
# (personally, through a group or a wildcard), who were not mentioned before and have it unread
# (apps.push, apps.email_notifications: they are notified as of a mention, unless the message
# notified them already; Zulip's maybe_enqueue_notifications_for_message_update).
mentions_added = Hooks("mentions_added")

# messages_read(user, message_ids): the user marked these messages read; None: all of their
# messages (apps.push: the notifications of them come off the user's phones).
messages_read = Hooks("messages_read")

# messages_deleting(message_ids): these messages are about to be deleted (apps.push: the same).
messages_deleting = Hooks("messages_deleting")

# messages_withdrawn(user_ids, message_ids): these users' rows of these messages are being removed
# (moved into a channel they may not read), the messages stay (apps.push: the notifications of
# them come off those users' phones).
messages_withdrawn = Hooks("messages_withdrawn")
