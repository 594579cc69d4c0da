"""Channels: their names and descriptions (Zulip's rules), who may create them, creating, renaming,
describing, archiving and unarchiving them. Each change writes its audit log entry (STREAM_CREATED,
STREAM_NAME_CHANGED, STREAM_PROPERTY_CHANGED, STREAM_DEACTIVATED, STREAM_REACTIVATED) in its
transaction."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Case, Count, OuterRef, Subquery, Value, When
from django.db.models.functions import Coalesce

from apps.core import ratelimit
from apps.core.errors import InvalidArgumentError, JsonableError, OrganizationOwnerRequiredError, RateLimitedError
from apps.core.markdown import render_description
from apps.core.text import unprintable_position
from apps.events.publish import Everyone, send_event_on_commit
from apps.folders.models import ChannelFolder
from apps.folders.selectors import access_channel_folder_by_id
from apps.groups.actions.settings import check_group_setting_value, normalize_group_setting_value
from apps.groups.models import GROUP_CREATOR, SystemGroups, UserGroup
from apps.groups.selectors import system_groups
from apps.groups.serializers import AnonymousGroupValue, GroupSettingValue
from apps.realms.actions import do_change_realm_settings
from apps.realms.audit import audit, changed
from apps.realms.models import AuditLogEventType, Realm
from apps.realms.serializers import CHANNEL_SETTINGS
from apps.subscriptions.actions.access import (
    send_stream_access_changes,
    send_stream_creation,
    send_stream_delete,
    send_stream_update,
    send_subscription_adds,
)
from apps.subscriptions.default_groups import do_remove_channel_from_groups
from apps.subscriptions.hooks import channels_announced
from apps.subscriptions.models import Stream, Subscription
from apps.subscriptions.realm_channels import DEFAULT_CHANNEL_MUST_BE_PUBLIC, default_channels
from apps.subscriptions.selectors import (
    Membership,
    can_create_channels,
    get_stream_by_name,
    has_realm_setting,
    metadata_access_user_ids,
)
from apps.users.models import Role, User

# --- names and descriptions -----------------------------------------------------------------------


def check_stream_name(name: str) -> str:
    """Zulip's rules (zerver/lib/streams.py); returns the name stripped."""
    name = name.strip()
    if not name:
        raise JsonableError("Channel name can't be empty.")
    if len(name) > Stream.MAX_NAME_LENGTH:
        raise JsonableError(f"Channel name too long (limit: {Stream.MAX_NAME_LENGTH} characters).")
    position = unprintable_position(name)
    if position is not None:
        raise JsonableError(f"Invalid character in channel name, at position {position}.")
    return name


def check_description(description: str) -> str:
    # Descriptions are one line, as in Zulip. (The API's parameters cap the length first; this
    # guards the operator command, whose text would otherwise overflow the column.)
    if len(description) > Stream.MAX_DESCRIPTION_LENGTH:
        raise JsonableError(f"Channel description too long (limit: {Stream.MAX_DESCRIPTION_LENGTH} characters).")
    return description.replace("\n", " ")


# --- who may create channels ----------------------------------------------------------------------


def check_channel_creation(membership: Membership, count: int, *, invite_only: bool) -> None:
    """Whether the user may create `count` channels at once: at most RATE_LIMIT_CHANNEL_CREATION
    (the most the rate limit could ever allow), and the organization's policy for the kind (Zulip's
    "Insufficient permission")."""
    limit, _ = settings.RATE_LIMIT_CHANNEL_CREATION
    if count > limit:
        raise InvalidArgumentError("subscriptions", f"Too many new channels in one request: {count} (limit: {limit})")
    if not can_create_channels(membership, invite_only=invite_only):
        raise JsonableError("Insufficient permission")


def count_channel_creation(user: User, count: int) -> None:
    """Count `count` new channels against the user's RATE_LIMIT_CHANNEL_CREATION (per hour); 429
    RATE_LIMIT_HIT past it. Called after the other checks, before the channels are created: a
    request they refuse costs nothing. Fails closed (503) when Redis is unreachable, as the
    password-login limit does."""
    if not settings.RATE_LIMITING_ENABLED:
        return
    state = ratelimit.check(f"create_channels_by_user:{user.id}", settings.RATE_LIMIT_CHANNEL_CREATION, cost=count)
    if state.blocked:
        raise RateLimitedError(state.retry_after, state=state)


# --- creating -------------------------------------------------------------------------------------


class ChannelNameTakenError(JsonableError):
    """Another request created a channel of this name after it was looked up (the unique constraint)."""


@dataclass(frozen=True)
class NewChannel:
    """A channel asked for: its name and description as given, and (when subscribing) the color
    of the subscription."""

    name: str
    description: str = ""
    color: str | None = None


@dataclass(frozen=True)
class NewChannelOptions:
    """How the channels a request creates are set up: the settings POST /users/me/subscriptions and
    POST /channels/create take (Zulip's defaults). `history_public_to_subscribers` None: public
    history unless private."""

    invite_only: bool = False
    is_web_public: bool = False
    is_default_stream: bool = False
    history_public_to_subscribers: bool | None = None
    message_retention_days: int | None = None  # None: the organization's default
    topics_policy: str = Stream.TopicsPolicy.INHERIT
    group_settings: dict[str, GroupSettingValue] = field(default_factory=dict)
    folder_id: int | None = None
    # Announce them in the organization's new channel announcements channel, if it has one.
    announce: bool = False


# Channel settings that only those in the organization's can_set_delete_message_policy_group set
# (to anything but nobody, when creating a channel), as Zulip's.
DELETE_POLICY_SETTINGS = ("can_delete_any_message_group", "can_delete_own_message_group")


def check_may_set_channel_policies(
    membership: Membership, *, topics_policy: bool, group_values: dict[str, GroupSettingValue]
) -> None:
    """Zulip's can_set_topics_policy (a channel's own `topics_policy`, but `inherit`: anyone who
    administers the channel gives the decision back to the organization) and
    can_set_delete_message_policy (its DELETE_POLICY_SETTINGS set to anyone but nobody):
    "Insufficient permission" without the organization's setting."""
    if topics_policy and not has_realm_setting(membership, "can_set_topics_policy_group"):
        raise JsonableError("Insufficient permission")
    asked = [value for name, value in group_values.items() if name in DELETE_POLICY_SETTINGS]
    if not asked or has_realm_setting(membership, "can_set_delete_message_policy_group"):
        return
    nobody = system_groups(membership.user.realm_id)[SystemGroups.NOBODY].id
    if any(value != nobody for value in asked):
        raise JsonableError("Insufficient permission")


def check_topics_open_to_all_with_protected_history(
    realm_id: int, *, history_public: bool, can_create_topic_group: GroupSettingValue | None
) -> None:
    """Zulip's rule for a channel whose history its subscribers do not all see: everyone starts
    topics there (can_create_topic_group is role:everyone alone; None: that default), since nobody
    can tell which topics exist. Refused otherwise as Zulip's IncompatibleParametersError."""
    if history_public or can_create_topic_group is None:
        return
    everyone = system_groups(realm_id)[SystemGroups.EVERYONE].id
    if normalize_group_setting_value(can_create_topic_group, realm_id) != everyone:
        parameters = "history_public_to_subscribers, can_create_topic_group"
        raise JsonableError(f"Unsupported parameter combination: {parameters}", parameters=parameters)


def check_new_channel_options(acting_user: User, options: NewChannelOptions) -> ChannelFolder | None:
    """Whether the user may ask for these settings (Zulip's checks and words), before anything is
    looked up or changed; returns the folder asked for ("Invalid channel folder ID" unless the
    organization's)."""
    if options.is_web_public:
        raise JsonableError("Web-public channels are not enabled.")
    check_may_set_channel_policies(
        Membership(acting_user),
        topics_policy=options.topics_policy != Stream.TopicsPolicy.INHERIT,
        group_values=options.group_settings,
    )
    check_topics_open_to_all_with_protected_history(
        acting_user.realm_id,
        history_public=not options.invite_only or bool(options.history_public_to_subscribers),
        can_create_topic_group=options.group_settings.get("can_create_topic_group"),
    )
    if options.is_default_stream and not acting_user.is_admin:
        raise JsonableError("Insufficient permission")
    if options.is_default_stream and options.invite_only:
        raise JsonableError(DEFAULT_CHANNEL_MUST_BE_PUBLIC)
    if options.folder_id is None:
        return None
    return access_channel_folder_by_id(acting_user.realm, options.folder_id)


def check_create_streams(
    membership: Membership,
    channels: Sequence[NewChannel],
    options: NewChannelOptions,
    *,
    folder: ChannelFolder | None,
) -> list[Stream]:
    """Create these channels (names checked and free; options checked by check_new_channel_options)
    for the member, after the checks of creating: the organization's policy for the kind, an owner
    for a retention period, the rate limit. Default channels are made default. Sends nothing (see
    create_streams and announce_streams).

    Audit: STREAM_CREATED for each (and STREAM_PROPERTY_CHANGED {is_default})."""
    if not channels:
        return []
    acting_user = membership.user
    check_channel_creation(membership, len(channels), invite_only=options.invite_only)
    if options.message_retention_days is not None and not acting_user.is_owner:
        raise OrganizationOwnerRequiredError()
    count_channel_creation(acting_user, len(channels))
    created = create_streams(
        acting_user.realm,
        [NewChannel(channel.name, check_description(channel.description)) for channel in channels],
        invite_only=options.invite_only,
        # A public channel's history is public to its subscribers whatever was asked (as in Zulip).
        history_public_to_subscribers=options.history_public_to_subscribers if options.invite_only else True,
        message_retention_days=options.message_retention_days,
        topics_policy=options.topics_policy,
        group_settings=options.group_settings,
        folder=folder,
        acting_user=acting_user,
    )
    for stream in created if options.is_default_stream else ():
        do_set_default_channel(stream, True, acting_user=acting_user)
    return created


def announce_streams(created: Sequence[Stream], options: NewChannelOptions, *, acting_user: User) -> None:
    """With `announce`, the channels_announced hooks' message about the channels created, in the
    organization's new channel announcements channel if it has one; called once the channels are
    announced to their viewers (their stream/create events come first, as in Zulip)."""
    if options.announce and created and acting_user.realm.new_stream_announcements_stream_id is not None:
        channels_announced.call(acting_user, list(created))


def resolve_channel_settings(
    realm: Realm, given: dict[str, GroupSettingValue], *, creator: User | None
) -> dict[str, UserGroup]:
    """The group of every setting of a new channel: the given values, else Zulip's defaults."""
    groups = system_groups(realm.id)
    nobody = groups[SystemGroups.NOBODY]
    result = {}
    for name, setting in Stream.SETTINGS.items():
        if name in given:
            value = normalize_group_setting_value(given[name], realm.id)
        elif setting.default == GROUP_CREATOR:
            value = AnonymousGroupValue((creator.id,), ()) if creator is not None else nobody.id
        else:
            result[name] = groups[setting.default]
            continue
        result[name] = check_group_setting_value(realm, name, value, setting=setting)
    return result


@transaction.atomic(savepoint=False)
def create_streams(
    realm: Realm,
    channels: Sequence[NewChannel],
    *,
    invite_only: bool = False,
    history_public_to_subscribers: bool | None = None,
    message_retention_days: int | None = None,
    topics_policy: str = Stream.TopicsPolicy.INHERIT,
    group_settings: dict[str, GroupSettingValue] | None = None,
    folder: ChannelFolder | None = None,
    acting_user: User | None,
) -> list[Stream]:
    """Create these channels (names checked and free), `acting_user` their creator. Raises
    "Channel '...' already exists" when another request took a name meanwhile. Sends nothing: the
    caller announces them (send_stream_creation) once their first subscribers are in.

    Audit: STREAM_CREATED for each."""
    if history_public_to_subscribers is None:
        history_public_to_subscribers = not invite_only
    streams = []
    for channel in channels:
        # Each channel gets its own anonymous setting groups.
        settings = resolve_channel_settings(realm, group_settings or {}, creator=acting_user)
        try:
            with transaction.atomic():
                stream = Stream.objects.create(
                    realm=realm,
                    name=channel.name,
                    description=channel.description,
                    rendered_description=render_description(realm.id, channel.description, acting_user=acting_user),
                    creator=acting_user,
                    invite_only=invite_only,
                    history_public_to_subscribers=history_public_to_subscribers,
                    message_retention_days=message_retention_days,
                    topics_policy=topics_policy,
                    folder=folder,
                    **settings,
                )
        except IntegrityError:
            raise ChannelNameTakenError(f"Channel '{channel.name}' already exists") from None
        audit(realm, AuditLogEventType.STREAM_CREATED, modified_stream=stream, acting_user=acting_user)
        streams.append(stream)
    return streams


@transaction.atomic
def do_create_stream(
    realm: Realm, name: str, *, description: str = "", invite_only: bool = False, acting_user: User | None
) -> Stream:
    """Create one channel with no subscribers (manage.py create_stream): the name and description
    checked, the name free. Not bound by the organization's creation policy or rate limit.

    Emits: stream/create to everyone who can see it. Audit: STREAM_CREATED."""
    name = check_stream_name(name)
    if get_stream_by_name(realm, name) is not None:
        raise JsonableError(f"Channel '{name}' already exists")
    description = check_description(description)
    [stream] = create_streams(realm, [NewChannel(name, description)], invite_only=invite_only, acting_user=acting_user)
    send_stream_creation(realm, [stream])
    return stream


def lock_streams(streams: Iterable[Stream | int]) -> dict[int, int]:
    """Lock the channels' rows (or channel ids'), in id order (concurrent changes of the same channels
    run one after the other and never deadlock); returns their subscriber_count as locked."""
    ids = sorted({s.id if isinstance(s, Stream) else s for s in streams})
    locked = Stream.objects.select_for_update().filter(id__in=ids).order_by("id")
    return dict(locked.values_list("id", "subscriber_count"))


def recount_subscribers(streams: Iterable[Stream | int], *, counts: dict[int, int] | None = None) -> None:
    """Set these channels' (or channel ids') subscriber_count from their rows (active subscriptions
    of active users), in the transaction of the change that moved it, under lock_streams (an UPDATE
    locks the rows in the order it finds them, and would deadlock with a change locking them in id
    order): a subscribe or unsubscribe, a user's deactivation or reactivation. The database counts
    (one query); the Stream instances given learn their new count (one more). With `counts` (each
    channel's as the caller knows it under the lock: from the subscribers it read, or the count
    lock_streams read plus those it added) they are set as given: one query, no count of a big
    channel's rows."""
    streams = list(streams)
    instances = [s for s in streams if isinstance(s, Stream)]
    ids = sorted({s.id if isinstance(s, Stream) else s for s in streams})
    if not ids:
        return
    if counts is not None:
        Stream.objects.filter(id__in=ids).update(
            subscriber_count=Case(*(When(id=stream_id, then=Value(counts[stream_id])) for stream_id in ids))
        )
        for stream in instances:
            stream.subscriber_count = counts[stream.id]
        return
    counts_of = (
        Subscription.objects.filter(stream=OuterRef("pk"), active=True, user__is_active=True)
        .order_by()
        .values("stream")
        .annotate(n=Count("*"))
        .values("n")
    )
    Stream.objects.filter(id__in=ids).update(subscriber_count=Coalesce(Subquery(counts_of), 0))
    if instances:
        fresh = dict(Stream.objects.filter(id__in=ids).values_list("id", "subscriber_count"))
        for stream in instances:
            stream.subscriber_count = fresh[stream.id]


# --- renaming, describing, archiving --------------------------------------------------------------


@transaction.atomic
def do_rename_stream(stream: Stream, new_name: str, *, acting_user: User | None) -> None:
    """Rename (the name checked). Raises "Channel '...' already exists" if another channel has it.

    Emits: stream/update {name}. Audit: STREAM_NAME_CHANGED {old_value, new_value}."""
    old_name = stream.name
    stream.name = new_name
    try:
        with transaction.atomic():
            stream.save(update_fields=["name"])
    except IntegrityError:
        stream.name = old_name
        raise JsonableError(f"Channel '{new_name}' already exists") from None
    extra_data = {"old_value": old_name, "new_value": new_name}
    audit(
        stream.realm_id,
        AuditLogEventType.STREAM_NAME_CHANGED,
        modified_stream=stream,
        extra_data=extra_data,
        acting_user=acting_user,
    )
    audience = metadata_access_user_ids(stream.realm_id, [stream])[stream.id]
    event = {"type": "stream", "op": "update", "stream_id": stream.id, "name": old_name, "property": "name"}
    send_event_on_commit(stream.realm_id, {**event, "value": new_name}, audience)


@transaction.atomic
def do_change_stream_description(stream: Stream, description: str, *, acting_user: User | None) -> None:
    """Set the description (checked) and its rendering; the same description changes nothing.

    Emits: stream/update {description, rendered_description}. Audit: STREAM_PROPERTY_CHANGED."""
    old = stream.description
    if description == old:
        return
    stream.description = description
    stream.rendered_description = render_description(stream.realm_id, description, acting_user=acting_user)
    stream.save(update_fields=["description", "rendered_description"])
    audit(
        stream.realm_id,
        AuditLogEventType.STREAM_PROPERTY_CHANGED,
        modified_stream=stream,
        extra_data=changed("description", old, description),
        acting_user=acting_user,
    )
    send_stream_update(stream, "description", description, rendered_description=stream.rendered_description)


def _locked_deactivated(stream: Stream) -> bool:
    """Whether the channel is archived, read again under its row's lock (a request that archived or
    unarchived it meanwhile has committed: concurrent requests change it once)."""
    lock_streams([stream])
    stream.deactivated = Stream.objects.filter(id=stream.id).values_list("deactivated", flat=True).get()
    return stream.deactivated


@transaction.atomic
def do_deactivate_stream(stream: Stream, *, acting_user: User | None) -> None:
    """Archive the channel: it keeps its subscriptions but is gone from lists and cannot be joined.
    Raises "Channel is already deactivated" (as Zulip), before any change.

    Emits, to everyone who could see it, as Zulip's: stream/update {is_archived: true} for clients
    with the archived_channels capability, stream/delete {for_archiving} for the others (each
    queue shows its own: apps.subscriptions.events). Audit: STREAM_DEACTIVATED."""
    if _locked_deactivated(stream):
        raise JsonableError("Channel is already deactivated")
    audience = metadata_access_user_ids(stream.realm_id, [stream])[stream.id]
    do_set_default_channel(stream, False, acting_user=acting_user)  # an archived channel is no default
    do_remove_channel_from_groups(stream)  # nor in a default channel group
    stream.deactivated = True
    stream.save(update_fields=["deactivated"])
    audit(stream.realm_id, AuditLogEventType.STREAM_DEACTIVATED, modified_stream=stream, acting_user=acting_user)
    send_stream_update(stream, "is_archived", True, to=audience)
    send_stream_delete(stream, audience, for_archiving=True)
    # An archived channel takes no more reports nor announcements (as in Zulip): they are off until
    # another is set.
    naming_it = {name: None for name in CHANNEL_SETTINGS if getattr(stream.realm, f"{name}_id") == stream.id}
    if naming_it:
        do_change_realm_settings(stream.realm, naming_it, acting_user=acting_user)


@transaction.atomic
def do_unarchive_stream(stream: Stream, *, acting_user: User | None) -> None:
    """Unarchive the channel (Zulip's do_unarchive_stream): it is back, with the subscriptions and
    settings it kept. Raises "Channel is not currently deactivated", and Zulip's "Channel is private
    and have no subscribers" (nobody could read it), before any change.

    Emits, as Zulip's, stream/update {is_archived: false} for clients with the archived_channels
    capability; for the others, which its archiving told to forget it, (marked for_unarchiving):
    stream/create to everyone who can see it, then subscription/add to its subscribers and
    subscription/peer_add {its subscribers} to the others. Audit: STREAM_REACTIVATED."""
    if not _locked_deactivated(stream):
        raise JsonableError("Channel is not currently deactivated")
    subs = list(Subscription.objects.filter(stream=stream, active=True).select_related("user"))
    if stream.invite_only and not subs:
        raise JsonableError("Channel is private and have no subscribers")
    stream.deactivated = False
    stream.save(update_fields=["deactivated"])
    audit(stream.realm_id, AuditLogEventType.STREAM_REACTIVATED, modified_stream=stream, acting_user=acting_user)
    send_stream_update(stream, "is_archived", False)
    subs = [sub for sub in subs if sub.user.is_active]
    subscriber_ids = {sub.user_id for sub in subs}
    send_stream_creation(stream.realm, [stream], only_to=subscriber_ids, for_unarchiving=True)
    send_subscription_adds(stream.realm_id, [stream], subs, for_unarchiving=True)
    # Everyone else who sees it: stream/create and its subscribers (peer_add), as on gaining sight.
    send_stream_access_changes(stream.realm_id, [stream], before={stream.id: subscriber_ids}, for_unarchiving=True)


@transaction.atomic
def do_set_default_channel(stream: Stream, is_default: bool, *, acting_user: User | None) -> None:
    """Make the channel one of the organization's default channels (people who join it join them),
    or not; nothing when it already is as asked. The caller checked that it is public.

    Audit: STREAM_PROPERTY_CHANGED {is_default}. Emits: default_streams {default_streams: the
    default channels' ids} to the organization's active members but guests, as Zulip does."""
    if stream.is_default == is_default:
        return
    stream.is_default = is_default
    stream.save(update_fields=["is_default"])
    audit(
        stream.realm_id,
        AuditLogEventType.STREAM_PROPERTY_CHANGED,
        modified_stream=stream,
        extra_data=changed("is_default", not is_default, is_default),
        acting_user=acting_user,
    )
    event = {
        "type": "default_streams",
        "default_streams": [channel.id for channel in default_channels(stream.realm_id)],
    }
    guests = User.objects.filter(realm_id=stream.realm_id, is_active=True, role=Role.GUEST).values_list("id", flat=True)
    send_event_on_commit(stream.realm_id, event, Everyone(tuple(guests)))
