"""Presence's timings, in seconds (Zulip's settings of the same meaning)."""

# Clients ping this often (server_presence_ping_interval_seconds in POST /register).
PING_INTERVAL_SECS = 60
# A user with no ping for this long is offline (Zulip's OFFLINE_THRESHOLD_SECS: three pings and 20
# seconds, so that one lost ping, or two slow ones, do not show a user offline).
OFFLINE_THRESHOLD_SECS = 200
# A stored time is moved forward at most this often: pings in between write nothing (Zulip's
# PRESENCE_UPDATE_MIN_FREQ_SECONDS), so a client pinging too often costs one read, not a write.
UPDATE_MIN_FREQ_SECS = 55
# In the legacy format a user is "active" when their last activity is at most this much older than
# their last connection (Zulip's PRESENCE_LEGACY_EVENT_OFFSET_FOR_ACTIVITY_SECONDS), else "idle".
LEGACY_ACTIVE_OFFSET_SECS = 70
# At most one presence event per user in this window: a client flapping between active and idle,
# or reconnecting in a loop, does not flood the organization's queues. Clients catch up on what
# was held back from their next ping's answer.
EVENT_MIN_INTERVAL_SECS = 30
# Without history_limit_days, answers hold the users seen in the last 14 days (as Zulip's).
DEFAULT_HISTORY_DAYS = 14
# Organizations with more active users than this get no presence events (Zulip's
# USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS): users coming online would cost work growing with
# the square of the organization; their clients learn presence from their pings' answers instead.
MAX_USERS_FOR_PRESENCE_EVENTS = 100
