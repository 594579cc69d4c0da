"""Every change to channels, subscriptions and topic policies, by sub-domain; import each name from
the module that defines it:

- channels: creating (names, descriptions, the organization's creation policy), renaming,
  describing, archiving;
- channel_settings: privacy, message retention, topics policy, group settings (PATCH /streams/{id});
- subscriptions: subscribing and unsubscribing (peer events), the user's settings for a channel;
- user_topics: topic visibility policies;
- access: who is told of a channel: its viewers, and whoever gains or loses sight of it.
"""
