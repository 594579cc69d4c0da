"""A channel's settings (PATCH /streams/{stream_id}): privacy, message retention, topics policy and
the group-valued permissions, checked together and applied all or nothing. Each change writes its
audit log entry (STREAM_PROPERTY_CHANGED, STREAM_GROUP_BASED_SETTING_CHANGED) in its transaction."""

from django.db import transaction
from django.db.models import Q

from apps.core.errors import JsonableError, OrganizationOwnerRequiredError
from apps.folders.models import ChannelFolder
from apps.folders.selectors import access_channel_folder_by_id
from apps.groups.actions.settings import (
    check_group_setting_change,
    check_group_setting_value,
    delete_unused_setting_group,
)
from apps.groups.selectors import anonymous_group_ids_of, setting_values_for_api
from apps.groups.serializers import GroupSettingChange
from apps.realms.audit import audit, changed
from apps.realms.models import AuditLogEventType
from apps.subscriptions.actions.access import send_stream_access_changes, send_stream_update
from apps.subscriptions.actions.channels import (
    check_description,
    check_may_set_channel_policies,
    check_stream_name,
    check_topics_open_to_all_with_protected_history,
    do_change_stream_description,
    do_rename_stream,
    do_set_default_channel,
    lock_streams,
)
from apps.subscriptions.models import Stream
from apps.subscriptions.realm_channels import DEFAULT_CHANNEL_MUST_BE_PUBLIC, MODERATION_CHANNEL_MUST_BE_PRIVATE
from apps.subscriptions.selectors import (
    Membership,
    can_create_channels,
    has_content_access,
    is_subscribed,
    metadata_access_user_ids,
)
from apps.subscriptions.serializers import POST_POLICY_BY_GROUP, UNCHANGED, Unchanged
from apps.users.models import User

# Settings that let their members read a private channel: setting them needs content access.
CONTENT_ACCESS_SETTINGS = ("can_add_subscribers_group", "can_subscribe_group")


def _audit_property(
    stream: Stream,
    prop: str,
    old: object,
    new: object,
    *,
    event_type: AuditLogEventType = AuditLogEventType.STREAM_PROPERTY_CHANGED,
    acting_user: User | None,
) -> None:
    extra_data = changed(prop, old, new)
    audit(stream.realm_id, event_type, modified_stream=stream, extra_data=extra_data, acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_change_stream_permission(
    stream: Stream,
    *,
    invite_only: bool,
    history_public_to_subscribers: bool,
    is_web_public: bool,
    acting_user: User | None,
) -> None:
    """Change who can see the channel. Users who could see it and no longer can get
    stream/delete; users who now can get stream/create.

    Emits: stream/update {invite_only, history_public_to_subscribers, is_web_public} to those who
    can see it afterwards, whichever of the three changed (Zulip's one form of it).
    Audit: STREAM_PROPERTY_CHANGED for each of the three that changed.
    """
    old = (stream.invite_only, stream.history_public_to_subscribers, stream.is_web_public)
    new = (invite_only, history_public_to_subscribers, is_web_public)
    if old == new:
        return
    before = {stream.id: _metadata_audience(stream)}
    stream.invite_only, stream.history_public_to_subscribers, stream.is_web_public = new
    stream.save(update_fields=["invite_only", "history_public_to_subscribers", "is_web_public"])
    for prop, old_value, new_value in zip(
        ("invite_only", "history_public_to_subscribers", "is_web_public"), old, new, strict=True
    ):
        if old_value != new_value:
            _audit_property(stream, prop, old_value, new_value, acting_user=acting_user)
    send_stream_access_changes(stream.realm_id, [stream], before)
    extra = {"history_public_to_subscribers": history_public_to_subscribers, "is_web_public": is_web_public}
    send_stream_update(stream, "invite_only", invite_only, **extra)


def _metadata_audience(stream: Stream) -> set[int]:
    return metadata_access_user_ids(stream.realm_id, [stream])[stream.id]


def _change_property(stream: Stream, prop: str, value: object, *, acting_user: User | None) -> None:
    old = getattr(stream, prop)
    if value == old:
        return
    setattr(stream, prop, value)
    stream.save(update_fields=[prop])
    _audit_property(stream, prop, old, value, acting_user=acting_user)
    send_stream_update(stream, prop, value)


@transaction.atomic(savepoint=False)
def do_change_stream_message_retention_days(stream: Stream, days: int | None, *, acting_user: User | None) -> None:
    """Set how long the channel keeps messages (None: the organization's default; -1: forever).

    Emits: stream/update {message_retention_days}. Audit: STREAM_PROPERTY_CHANGED."""
    _change_property(stream, "message_retention_days", days, acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_change_stream_topics_policy(stream: Stream, topics_policy: str, *, acting_user: User | None) -> None:
    """Set the channel's topics policy (a Stream.TopicsPolicy value).

    Emits: stream/update {topics_policy}. Audit: STREAM_PROPERTY_CHANGED."""
    _change_property(stream, "topics_policy", topics_policy, acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_change_stream_folder(stream: Stream, folder: ChannelFolder | None, *, acting_user: User | None) -> None:
    """Put the channel in this folder of its organization, or in none.

    Emits: stream/update {property: folder_id, value: the id or null}. Audit: STREAM_PROPERTY_CHANGED."""
    _change_property(stream, "folder_id", folder.id if folder is not None else None, acting_user=acting_user)


@transaction.atomic
def do_change_stream_group_setting(
    stream: Stream, name: str, change: GroupSettingChange, *, acting_user: User | None
) -> bool:
    """Set a group setting (Zulip's {new, old} form: `old`, when given, must be the current value,
    else EXPECTATION_MISMATCH; the new value must be one the setting allows). Returns whether it
    changed.

    Emits: stream/update {property: name, value: the API value}; and, when the change makes the
    channel visible or invisible to some users, stream/create or stream/delete to them.
    Audit: STREAM_GROUP_BASED_SETTING_CHANGED {property, old_value, new_value} (API values: a group
    id or {direct_members, direct_subgroups}).
    """
    current = getattr(stream, name)
    new_value = check_group_setting_change(change, current=current)
    if new_value is None:
        return False
    old_api_value = setting_values_for_api(stream.realm_id, [current.id])[current.id]
    before = {stream.id: _metadata_audience(stream)}
    group = check_group_setting_value(stream.realm, name, new_value, setting=Stream.SETTINGS[name], current=current)
    setattr(stream, name, group)
    stream.save(update_fields=[name])
    delete_unused_setting_group(current, group)
    new_api_value = setting_values_for_api(stream.realm_id, [group.id])[group.id]
    event_type = AuditLogEventType.STREAM_GROUP_BASED_SETTING_CHANGED
    _audit_property(stream, name, old_api_value, new_api_value, event_type=event_type, acting_user=acting_user)
    send_stream_access_changes(stream.realm_id, [stream], before)
    send_stream_update(stream, name, new_api_value)
    if name == "can_send_message_group":
        # Its older forms (stream_post_policy, is_announcement_only), for older clients, as Zulip's.
        old_policy, new_policy = (POST_POLICY_BY_GROUP.get(g.name or "", 1) for g in (current, group))
        if old_policy != new_policy:
            send_stream_update(stream, "stream_post_policy", new_policy)
            send_stream_update(stream, "is_announcement_only", new_policy == 2)
    return True


def send_setting_updates_for_user(user: User) -> None:
    """A user's (de)activation changes the value of every channel setting whose anonymous group
    lists them (values list active users only; a channel's creator administers it through one).
    Emits: stream/update {property: setting, value} for each, to those who see the channel."""
    group_ids = anonymous_group_ids_of(user)
    if not group_ids:
        return
    listing = Q()
    for name in Stream.SETTINGS:
        listing |= Q(**{f"{name}_id__in": group_ids})
    streams = list(Stream.objects.filter(listing, realm_id=user.realm_id).order_by("id"))
    values = setting_values_for_api(user.realm_id, group_ids)
    for stream in streams:
        for name in Stream.SETTINGS:
            if (group_id := getattr(stream, f"{name}_id")) in values:
                send_stream_update(stream, name, values[group_id])


@transaction.atomic
def check_update_stream(
    stream: Stream,
    *,
    description: str | None = None,
    new_name: str | None = None,
    is_private: bool | None = None,
    is_web_public: bool | None = None,
    history_public_to_subscribers: bool | None = None,
    is_default_stream: bool | None = None,
    message_retention_days: int | Unchanged | None = UNCHANGED,
    topics_policy: str | None = None,
    folder_id: int | Unchanged | None = UNCHANGED,
    group_settings: dict[str, GroupSettingChange] | None = None,
    acting_user: User,
) -> None:
    """PATCH /streams/{stream_id}, for a channel the user may administer (access_stream_to_administer):
    every change checked (Zulip's rules and messages), then applied; all or nothing. None (and
    UNCHANGED for message_retention_days, where None is the organization's default) leaves a
    setting as it is; `topics_policy` is a Stream.TopicsPolicy value; `folder_id` a folder of the
    organization ("Invalid channel folder ID" otherwise), None for none, UNCHANGED to leave it."""
    lock_streams([stream])
    # Checked and changed as the change before left it (the fuzzing QA pass: two requests read the
    # same anonymous group, the first deleted it, the second answered 500).
    stream.refresh_from_db()
    membership = Membership(acting_user)
    content_access = has_content_access(membership, stream, is_subscribed=is_subscribed(acting_user, stream))
    private = stream.invite_only if is_private is None else is_private
    web_public = stream.is_web_public if is_web_public is None else is_web_public
    if history_public_to_subscribers is not None:
        history_public = history_public_to_subscribers
    elif is_private is not None:
        history_public = not is_private
    else:
        history_public = stream.history_public_to_subscribers
    if (web_public and (not history_public or private)) or (not private and not history_public):
        raise JsonableError("Invalid parameters")
    if not private and stream.realm.moderation_request_channel_id == stream.id:
        raise JsonableError(MODERATION_CHANNEL_MUST_BE_PRIVATE)
    if is_private is not None and not content_access:
        raise JsonableError("Channel content access is required.")
    # Making a channel private or public needs the permission to create such channels (as in Zulip).
    if is_private is not None and not can_create_channels(membership, invite_only=is_private):
        raise JsonableError("Insufficient permission")
    if is_web_public:
        raise JsonableError("Web-public channels are not enabled.")
    if private and (stream.is_default if is_default_stream is None else is_default_stream):
        raise JsonableError(DEFAULT_CHANNEL_MUST_BE_PUBLIC)
    if is_default_stream is not None and not acting_user.is_admin:
        raise JsonableError("Insufficient permission")
    if message_retention_days is not UNCHANGED and not acting_user.is_owner:
        raise OrganizationOwnerRequiredError()
    group_settings = group_settings or {}
    check_may_set_channel_policies(
        membership,
        topics_policy=topics_policy not in (None, Stream.TopicsPolicy.INHERIT),
        group_values={name: change.new for name, change in group_settings.items()},
    )
    if new_name is not None:
        new_name = check_stream_name(new_name)
        if new_name == stream.name:
            raise JsonableError("Channel already has that name.")
    topic_starters = group_settings.get("can_create_topic_group")
    check_topics_open_to_all_with_protected_history(
        stream.realm_id,
        history_public=history_public,
        can_create_topic_group=stream.can_create_topic_group_id if topic_starters is None else topic_starters.new,
    )
    if any(name in CONTENT_ACCESS_SETTINGS for name in group_settings) and not content_access:
        raise JsonableError("Channel content access is required.")
    if description is not None:
        description = check_description(description)
    folder = None
    if folder_id is not UNCHANGED and folder_id is not None:
        folder = access_channel_folder_by_id(stream.realm_id, folder_id)

    do_change_stream_permission(
        stream,
        invite_only=private,
        history_public_to_subscribers=history_public,
        is_web_public=web_public,
        acting_user=acting_user,
    )
    if is_default_stream is not None:
        do_set_default_channel(stream, is_default_stream, acting_user=acting_user)
    if message_retention_days is not UNCHANGED:
        do_change_stream_message_retention_days(stream, message_retention_days, acting_user=acting_user)
    if topics_policy is not None:
        do_change_stream_topics_policy(stream, topics_policy, acting_user=acting_user)
    if description is not None:
        do_change_stream_description(stream, description, acting_user=acting_user)
    if new_name is not None:
        do_rename_stream(stream, new_name, acting_user=acting_user)
    if folder_id is not UNCHANGED:
        do_change_stream_folder(stream, folder, acting_user=acting_user)
    for name, change in group_settings.items():
        do_change_stream_group_setting(stream, name, change, acting_user=acting_user)
