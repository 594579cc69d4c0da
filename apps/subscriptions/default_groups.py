"""Default channel groups (Zulip's default stream groups): named sets of channels an organization
offers people who join it. Administrators create, rename, describe, fill and remove them
(/default_stream_groups/...); people of the organization (not guests) get them in
`realm_default_stream_groups` (POST /register) and, whole again after each change, in a
`default_stream_groups` event. Zulip's checks and words; a default channel is in no group, and an
archived channel leaves its groups."""

from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.realms.models import Realm
from apps.subscriptions.models import DefaultChannelGroup, Stream
from apps.subscriptions.selectors import access_stream_by_name
from apps.users.models import Role, User
from apps.users.selectors import active_users_and_roles


def group_to_dict(group: DefaultChannelGroup, stream_ids: list[int]) -> dict[str, Any]:
    """Zulip's DefaultStreamGroup object (its channels by id, as since feature level 283)."""
    return {"id": group.id, "name": group.name, "description": group.description, "streams": stream_ids}


def default_channel_groups(realm_id: int) -> list[dict[str, Any]]:
    """The organization's groups, by name, each with its active channels' ids. Two queries."""
    groups = list(DefaultChannelGroup.objects.filter(realm_id=realm_id).order_by("name", "id"))
    members: dict[int, list[int]] = {group.id: [] for group in groups}
    links = DefaultChannelGroup.streams.through.objects.filter(
        defaultchannelgroup_id__in=members, stream__deactivated=False
    )
    for group_id, stream_id in links.order_by("stream_id").values_list("defaultchannelgroup_id", "stream_id"):
        members[group_id].append(stream_id)
    return [group_to_dict(group, members[group.id]) for group in groups]


def access_default_channel_group(realm: Realm, group_id: int) -> DefaultChannelGroup:
    group = DefaultChannelGroup.objects.filter(realm=realm, id=group_id).first()
    if group is None:
        raise JsonableError(f"Default channel group with id '{group_id}' does not exist.")
    return group


def access_channels_by_names(user: User, names: Sequence[str]) -> list[Stream]:
    """Each named channel, the user may read (Zulip's access_stream_by_name, one at a time)."""
    streams = []
    for name in dict.fromkeys(names):
        stream, _ = access_stream_by_name(user, name)
        streams.append(stream)
    return streams


def check_group_name(name: str) -> str:
    if not name.strip():
        raise JsonableError(f"Invalid default channel group name '{name}'")
    if len(name) > DefaultChannelGroup.MAX_NAME_LENGTH:
        raise JsonableError(
            f"Default channel group name too long (limit: {DefaultChannelGroup.MAX_NAME_LENGTH} characters)"
        )
    if "\x00" in name:
        raise JsonableError(f"Default channel group name '{name}' contains NULL (0x00) characters.")
    return name


def check_group_description(description: str) -> str:
    if len(description) > DefaultChannelGroup.MAX_DESCRIPTION_LENGTH:
        raise JsonableError(
            "Default channel group description too long "
            f"(limit: {DefaultChannelGroup.MAX_DESCRIPTION_LENGTH} characters)"
        )
    return description


def _refuse_default_channels(streams: Sequence[Stream], group_name: str) -> None:
    for stream in streams:
        if stream.is_default:
            raise JsonableError(f"'{stream.name}' is a default channel and cannot be added to '{group_name}'")


def _already_exists(name: str) -> JsonableError:
    return JsonableError(f"Default channel group '{name}' already exists")


@transaction.atomic
def do_create_default_channel_group(
    realm: Realm, name: str, description: str, streams: Sequence[Stream]
) -> DefaultChannelGroup:
    """POST /default_stream_groups/create. Emits: default_stream_groups to the organization."""
    _refuse_default_channels(streams, name)
    name, description = check_group_name(name), check_group_description(description)
    try:
        with transaction.atomic():
            group = DefaultChannelGroup.objects.create(realm=realm, name=name, description=description)
    except IntegrityError:
        raise _already_exists(name) from None
    group.streams.set(streams)
    notify_default_channel_groups(realm.id)
    return group


@transaction.atomic
def do_change_default_channel_group(
    group: DefaultChannelGroup, *, name: str | None = None, description: str | None = None
) -> None:
    """PATCH /default_stream_groups/{id}: a new name (Zulip's words when it is the same, or taken)
    and/or description. Emits: default_stream_groups."""
    if name is not None:
        if name == group.name:
            raise JsonableError(f"This default channel group is already named '{name}'")
        group.name = check_group_name(name)
    if description is not None:
        group.description = check_group_description(description)
    try:
        with transaction.atomic():
            group.save(update_fields=["name", "description"])
    except IntegrityError:
        raise _already_exists(group.name) from None
    notify_default_channel_groups(group.realm_id)


@transaction.atomic
def do_change_default_channel_group_channels(group: DefaultChannelGroup, op: str, streams: Sequence[Stream]) -> None:
    """PATCH /default_stream_groups/{id}/streams: `op` "add" or "remove" these channels, all or
    none (Zulip's words for a default channel, one already in, one not in). Emits:
    default_stream_groups."""
    present = set(group.streams.values_list("id", flat=True))
    if op == "add":
        _refuse_default_channels(streams, group.name)
        for stream in streams:
            if stream.id in present:
                raise JsonableError(
                    f"Channel '{stream.name}' is already present in default channel group '{group.name}'"
                )
        group.streams.add(*streams)
    elif op == "remove":
        for stream in streams:
            if stream.id not in present:
                raise JsonableError(f"Channel '{stream.name}' is not present in default channel group '{group.name}'")
        group.streams.remove(*streams)
    else:
        raise JsonableError('Invalid value for "op". Specify one of "add" or "remove".')
    notify_default_channel_groups(group.realm_id)


@transaction.atomic
def do_remove_default_channel_group(group: DefaultChannelGroup) -> None:
    """DELETE /default_stream_groups/{id}. Emits: default_stream_groups."""
    DefaultChannelGroup.objects.filter(id=group.id).delete()
    notify_default_channel_groups(group.realm_id)


def do_remove_channel_from_groups(stream: Stream) -> None:
    """The channel leaves every group (it was archived). Emits: default_stream_groups when it was
    in one."""
    links = DefaultChannelGroup.streams.through.objects.filter(stream=stream)
    if links.delete()[0]:
        notify_default_channel_groups(stream.realm_id)


def notify_default_channel_groups(realm_id: int) -> None:
    """Emits: default_stream_groups (the whole list) to the organization's active people but guests."""
    audience = [user_id for user_id, role in active_users_and_roles(realm_id) if role != Role.GUEST]
    event = {"type": "default_stream_groups", "default_stream_groups": default_channel_groups(realm_id)}
    send_event_on_commit(realm_id, event, audience)
