"""The organization's part of POST /register: the "realm" state, with its settings and the server's
limits, and the "realm_domains" state (its allowed domains)."""

from django.conf import settings

from apps.events.registry import StateContext, initial_state
from apps.realms.limits import (
    EMPTY_TOPIC_DISPLAY_NAME,
    MAX_BULK_NEW_SUBSCRIPTION_MESSAGES,
    MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
    MAX_CHANNEL_FOLDER_NAME_LENGTH,
    MAX_ICON_FILE_SIZE_MIB,
    MAX_LOGO_FILE_SIZE_MIB,
    MAX_MESSAGE_LENGTH,
    MAX_REMINDER_NOTE_LENGTH,
    MAX_STREAM_DESCRIPTION_LENGTH,
    MAX_STREAM_NAME_LENGTH,
    MAX_TOPIC_LENGTH,
)
from apps.realms.models import Realm
from apps.realms.selectors import realm_domains, realm_icon_url
from apps.realms.serializers import CHANNEL_SETTINGS


@initial_state("realm")
def realm_state(context: StateContext) -> dict:
    realm = context.user.realm
    icon = realm_icon_url(realm)
    return {
        "realm_name": realm.name,
        # Markdown, as PATCH /realm sets it and realm/update events carry it (GET /server_settings: HTML).
        "realm_description": realm.description,
        "realm_url": realm.url,
        "realm_uri": realm.url,
        "realm_icon_url": icon,
        "realm_icon_source": "G",
        # No logo uploads: the logos are the icon, from the default source ("D"), as Zulip's
        # get_realm_logo_data without an uploaded logo.
        "realm_logo_url": icon,
        "realm_logo_source": "D",
        "realm_night_logo_url": icon,
        "realm_night_logo_source": "D",
        "max_icon_file_size_mib": MAX_ICON_FILE_SIZE_MIB,
        "max_logo_file_size_mib": MAX_LOGO_FILE_SIZE_MIB,
        # Joining takes an invitation (by email or a reusable link): there is no open sign-up.
        "realm_invite_required": True,
        "realm_date_created": int(realm.date_created.timestamp()),
        "realm_password_auth_enabled": realm.password_auth_enabled,
        "realm_welcome_message_custom_text": realm.welcome_message_custom_text,
        "realm_web_public_access_enabled": False,
        "realm_push_notifications_enabled": settings.PUSH_NOTIFICATIONS_ENABLED,
        "realm_is_zephyr_mirror_realm": False,
        "realm_message_retention_days": -1,
        "realm_allow_message_editing": realm.allow_message_editing,
        "realm_message_content_edit_limit_seconds": realm.message_content_edit_limit_seconds,
        "realm_move_messages_within_stream_limit_seconds": realm.move_messages_within_stream_limit_seconds,
        "realm_move_messages_between_streams_limit_seconds": realm.move_messages_between_streams_limit_seconds,
        "realm_message_edit_history_visibility_policy": realm.message_edit_history_visibility_policy,
        "realm_allow_edit_history": realm.message_edit_history_visibility_policy != Realm.EditHistoryVisibility.NONE,
        "realm_message_content_delete_limit_seconds": realm.message_content_delete_limit_seconds,
        "realm_empty_topic_display_name": EMPTY_TOPIC_DISPLAY_NAME,
        "realm_topics_policy": realm.topics_policy,
        # Zulip's setting before topics_policy (feature level 392), for older clients.
        "realm_mandatory_topics": realm.topics_policy == Realm.TopicsPolicy.DISABLE_EMPTY_TOPIC,
        **{f"realm_{name}_id": getattr(realm, f"{name}_id") or -1 for name in CHANNEL_SETTINGS},
        "realm_waiting_period_threshold": realm.waiting_period_threshold,
        # (realm_wildcard_mention_policy: apps.groups; max_file_upload_size_mib and
        # max_avatar_file_size_mib: apps.uploads.)
        "realm_enable_read_receipts": realm.enable_read_receipts,
        "realm_emails_restricted_to_domains": realm.emails_restricted_to_domains,
        "realm_disallow_disposable_email_addresses": realm.disallow_disposable_email_addresses,
        "realm_avatar_changes_disabled": realm.avatar_changes_disabled,
        # What Parley does not do, said as Zulip's settings say it: no Notification Bot messages about
        # channel changes (feature level 434), push notifications not limited to encrypting devices (409).
        "realm_send_channel_events_messages": False,
        "realm_require_e2ee_push_notifications": False,
        "max_topic_length": MAX_TOPIC_LENGTH,
        "max_message_length": MAX_MESSAGE_LENGTH,
        "max_reminder_note_length": MAX_REMINDER_NOTE_LENGTH,
        "max_stream_name_length": MAX_STREAM_NAME_LENGTH,
        "max_stream_description_length": MAX_STREAM_DESCRIPTION_LENGTH,
        "max_bulk_new_subscription_messages": MAX_BULK_NEW_SUBSCRIPTION_MESSAGES,
        "max_channel_folder_name_length": MAX_CHANNEL_FOLDER_NAME_LENGTH,
        "max_channel_folder_description_length": MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
        "event_queue_longpoll_timeout_seconds": settings.EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS,
        "server_typing_started_expiry_period_milliseconds": 45000,
        "server_typing_stopped_wait_period_milliseconds": 12000,
        "server_typing_started_wait_period_milliseconds": 30000,
        "zulip_plan_is_not_limited": True,
    }


@initial_state("realm_domains")
def realm_domains_state(context: StateContext) -> dict:
    return {"realm_domains": realm_domains(context.user.realm)}
