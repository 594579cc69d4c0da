"""The server's limits and names that clients are told at registration (Zulip's values): one source
for the apps that enforce them and for the "realm" state of POST /register."""

MAX_TOPIC_LENGTH = 60
MAX_MESSAGE_LENGTH = 10000
# A reminder's note: a tenth of a message, the rest is for the message it quotes.
MAX_REMINDER_NOTE_LENGTH = 1000
MAX_STREAM_NAME_LENGTH = 60
MAX_STREAM_DESCRIPTION_LENGTH = 1024
# People one request may subscribe to channels and still have Notification Bot tell each of them.
MAX_BULK_NEW_SUBSCRIPTION_MESSAGES = 100
MAX_CHANNEL_FOLDER_NAME_LENGTH = 60
MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH = 1024
# Zulip's limits of an organization's icon and logo files; told only (Parley takes no such uploads).
MAX_ICON_FILE_SIZE_MIB = 5
MAX_LOGO_FILE_SIZE_MIB = 5
# What clients show for the empty topic, and what they may send to mean it.
EMPTY_TOPIC_DISPLAY_NAME = "general chat"

# Days a new member waits to become a full member (waiting_period_threshold): at most about 2,700
# years, so that the date it ends stays computable.
MAX_WAITING_PERIOD_DAYS = 1_000_000
