"""Every change to messages, by sub-domain: sending (send), flags (flags), muted users
(muted_users), alert words (alert_words) and topic deletion (delete_topic). Import each action from
its module."""
