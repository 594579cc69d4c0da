"""Every change to messages, by sub-domain: sending (send), flags (flags), muted users
(muted_users) and topic deletion (delete_topic). Import each action from its module."""
