"""The messages app's views, by sub-domain; import each from the module that defines it:

- messages: reading (GET /messages, one message, its history and read receipts, narrows' matches),
  sending, editing, deleting, reporting and previewing (rendering) messages;
- conversation: reactions and the server's emoji names, widgets' submessages, typing
  notifications, a channel's topics, deleting a topic;
- flags: the user's own reading state: flags, marking as read, muted users, alert words.
"""
