"""Who may see whom: the organization's `can_access_all_users_group` (Zulip's).

At role:everyone (the default) everyone sees everyone. At role:members, guests see only themselves,
bots, and the people they share a channel or a direct message conversation with (the `user_peers`
hook: apps.subscriptions and apps.messages know those); everyone else is to them an unknown user
(`inaccessible_user_dict`): listed as "Unknown user" without a name, address or avatar of theirs,
never found by GET /users/{id}, never a direct message recipient; their changes, presence and status
do not reach the guest. Members and above always see everyone.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from django.contrib.staticfiles.storage import staticfiles_storage

from apps.core.errors import JsonableError
from apps.events.publish import Everyone, send_event_on_commit
from apps.realms.models import Realm
from apps.users.hooks import user_peers
from apps.users.models import Role, User
from apps.users.selectors import (
    FAKE_EMAIL_RE,
    can_access_delivery_email,
    custom_profile_data,
    email_key,
    fake_email_domain,
    user_with_delivery_email,
    users_in_realm,
)
from apps.users.serializers import user_to_dict

INACCESSIBLE_USER_NAME = "Unknown user"
# apps.groups' SystemGroups.MEMBERS (an app above this one): the setting's one value that limits
# guests (the other it may have is role:everyone).
MEMBERS_GROUP = "role:members"


def user_access_restricted(realm: Realm) -> bool:
    """Whether the organization limits what its guests see (a query the first time this process
    meets its setting's value: a system group's name never changes)."""
    return realm.can_access_all_users_group_id is not None and _is_members_group(realm.can_access_all_users_group_id)


@lru_cache(maxsize=4096)
def _is_members_group(group_id: int) -> bool:
    # The setting's group model (apps.groups', an app above this one), through the setting itself.
    groups = Realm._meta.get_field("can_access_all_users_group").related_model.objects
    return groups.filter(id=group_id, name=MEMBERS_GROUP).exists()


def can_access_all_users(viewer: User) -> bool:
    """Whether `viewer` sees everyone in their organization (no query unless they are a guest)."""
    return not viewer.is_guest or not user_access_restricted(viewer.realm)


def peer_ids(user_ids: Iterable[int]) -> dict[int, set[int]]:
    """The people each of `user_ids` shares a channel or a direct message conversation with."""
    user_ids = list(user_ids)
    merged: dict[int, set[int]] = defaultdict(set)
    for found in user_peers.call(user_ids):
        for user_id, peers in found.items():
            merged[user_id] |= peers
    return merged


def accessible_user_ids(viewer: User) -> set[int] | None:
    """The people (not bots: every bot is seen) `viewer` sees, or None when they see everyone."""
    if can_access_all_users(viewer):
        return None
    return {viewer.id} | peer_ids([viewer.id])[viewer.id]


def inaccessible_user_ids(viewer: User, user_ids: Iterable[int]) -> set[int]:
    """Those of `user_ids` (people of the viewer's organization) the viewer may not see."""
    seen = accessible_user_ids(viewer)
    if seen is None:
        return set()
    wanted = set(user_ids) - seen
    if not wanted:
        return set()
    bots = set(User.objects.filter(id__in=wanted, bot_type__isnull=False).values_list("id", flat=True))
    return wanted - bots


def as_seen_by(viewer: User, people: list[dict[str, Any]], *, omit_inaccessible: bool = False) -> list[dict[str, Any]]:
    """User objects (the API's) as `viewer` may see them: those they may not see replaced by
    inaccessible_user_dict, or left out with `omit_inaccessible` (a client with Zulip's
    user_list_incomplete capability)."""
    seen = accessible_user_ids(viewer)
    if seen is None:
        return people
    shown = []
    for person in people:
        if person["is_bot"] or person["user_id"] in seen:
            shown.append(person)
        elif not omit_inaccessible:
            shown.append(inaccessible_user_dict(viewer.realm, person["user_id"]))
    return shown


def check_can_access_user(viewer: User, target: User) -> bool:
    return target.is_bot or target.id == viewer.id or not inaccessible_user_ids(viewer, [target.id])


def guests_without_access(target: User) -> tuple[int, ...]:
    """The active guests of the target's organization who may not see `target`: those events about
    the target must not reach (sorted; none where the organization does not limit guests)."""
    if target.is_bot or not user_access_restricted(target.realm):
        return ()
    guests = list(
        User.objects.filter(realm_id=target.realm_id, role=Role.GUEST, is_active=True).values_list("id", flat=True)
    )
    if not guests:
        return ()
    peers = peer_ids(guests)
    return tuple(sorted(guest for guest in guests if guest != target.id and target.id not in peers[guest]))


def audience_seeing(target: User, user_ids: Iterable[int] | None = None) -> Everyone | list[int]:
    """Those of `user_ids` (None: everyone of the organization) who may see `target`: the audience
    of an event about them."""
    if user_ids is None:
        return Everyone(guests_without_access(target))
    return split_by_access(target, user_ids)[0]


@contextmanager
def access_changes_announced(realm: Realm, candidate_ids: Callable[[], Iterable[int]]) -> Iterator[Callable[[], None]]:
    """Around a change of who shares a channel or a conversation with whom: the guests among
    `candidate_ids()` (the people whose channels or conversations change, read only where the
    organization limits guests) who may then see people they could not see before get
    realm_user/add for each (the whole user); those who no longer may see someone, Zulip's
    realm_user/remove {user_id, full_name: "Unknown user"}. Told at the end, or when the block
    calls what it is given (once the change is written: before events naming the people)."""
    guests = _limited_guests(realm, candidate_ids) if user_access_restricted(realm) else {}
    before = peer_ids(guests) if guests else {}
    told = []

    def announce() -> None:
        if guests and not told:
            told.append(True)
            _announce_access_changes(realm, guests, before)

    yield announce
    announce()


def _announce_access_changes(realm: Realm, guests: dict[int, User], before: dict[int, set[int]]) -> None:
    after = peer_ids(guests)
    changed = {guest: (after[guest] - before[guest], before[guest] - after[guest]) for guest in guests}
    involved = {user_id for gained, lost in changed.values() for user_id in gained | lost}
    people = {user.id: user for user in User.objects.filter(id__in=involved, bot_type__isnull=True)}
    for guest, (gained, lost) in changed.items():
        _send_user_adds(guests[guest], [people[user_id] for user_id in sorted(gained & people.keys() - {guest})])
        for user_id in sorted(lost & people.keys() - {guest}):
            person = {"user_id": user_id, "full_name": INACCESSIBLE_USER_NAME}
            send_event_on_commit(realm, {"type": "realm_user", "op": "remove", "person": person}, [guest])


def announce_conversation(people: Sequence[User]) -> None:
    """Before the first direct message among `people` is stored: each guest among them who may not
    see some of the others yet (the organization limiting guests) gets realm_user/add for them, so
    the message's people are known when it arrives (Zulip's get_recipients_for_user_creation_events)."""
    guests = [person for person in people if person.is_guest]
    if not guests or not user_access_restricted(guests[0].realm):
        return
    by_id = {person.id: person for person in people}
    for guest in guests:
        _send_user_adds(guest, [by_id[user_id] for user_id in sorted(inaccessible_user_ids(guest, by_id))])


def without_unknown_senders(viewer: User, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Message objects (the API's) as `viewer` may see them: a sender they may not see (someone who
    left the channel, or wrote to it from outside) is an unknown user (Zulip's), and so is such a
    person among those who reacted."""
    people = {m["sender_id"] for m in messages} | {r["user_id"] for m in messages for r in m.get("reactions", ())}
    unknown = inaccessible_user_ids(viewer, people)
    if not unknown:
        return messages
    shown = []
    for message in messages:
        if message["sender_id"] in unknown:
            message = as_from_unknown_sender(viewer.realm, message)
        if any(reaction["user_id"] in unknown for reaction in message.get("reactions", ())):
            message = {**message, "reactions": [_reaction_seen(viewer.realm, r, unknown) for r in message["reactions"]]}
        shown.append(message)
    return shown


def as_from_unknown_sender(realm: Realm, message: dict[str, Any]) -> dict[str, Any]:
    """A Message object as a reader who may not see its sender gets it."""
    sender_id = message["sender_id"]
    return {
        **message,
        "sender_full_name": INACCESSIBLE_USER_NAME,
        "sender_email": unknown_user_email(realm, sender_id),
        "avatar_url": inaccessible_avatar_url(),
    }


def _reaction_seen(realm: Realm, reaction: dict[str, Any], unknown: set[int]) -> dict[str, Any]:
    user_id = reaction["user_id"]
    if user_id not in unknown:
        return reaction
    return {**reaction, "user": {**reaction["user"], **unknown_user_brief(realm, user_id, key="id")}}


def unknown_user_brief(realm: Realm, user_id: int, *, key: str = "user_id") -> dict[str, Any]:
    """The {user_id, email, full_name} of someone the reader may not see (reactions' `user`: `key` id)."""
    return {key: user_id, "email": unknown_user_email(realm, user_id), "full_name": INACCESSIBLE_USER_NAME}


def unknown_user_email(realm: Realm, user_id: int) -> str:
    return f"user{user_id}@{fake_email_domain(realm.host)}"


def split_by_access(target: User, user_ids: Iterable[int]) -> tuple[list[int], list[int]]:
    """`user_ids` as (those who may see `target`, the guests who may not): who gets an event about
    what the target did as it is, and who gets it from an unknown user."""
    lacking = set(guests_without_access(target))
    user_ids = list(user_ids)
    return [uid for uid in user_ids if uid not in lacking], [uid for uid in user_ids if uid in lacking]


def _send_user_adds(guest: User, people: list[User]) -> None:
    """realm_user/add for each of `people` (whole, as `guest` may now see them), to `guest`."""
    if not people:
        return
    profiles = custom_profile_data(people)
    for person in people:
        shape = user_to_dict(person, acting_user=guest, client_gravatar=True, profile_data=profiles.get(person.id, {}))
        send_event_on_commit(guest.realm_id, {"type": "realm_user", "op": "add", "person": shape}, [guest.id])


def _limited_guests(realm: Realm, candidate_ids: Callable[[], Iterable[int]]) -> dict[int, User]:
    guests = User.objects.filter(realm=realm, id__in=set(candidate_ids()), role=Role.GUEST, is_active=True)
    return {guest.id: guest for guest in guests.select_related("realm")}


def inaccessible_user_dict(realm: Realm, user_id: int) -> dict[str, Any]:
    """How a person the viewer may not see is shown to them (Zulip's get_data_for_inaccessible_user)."""
    return {
        "email": unknown_user_email(realm, user_id),
        "user_id": user_id,
        "avatar_version": 1,
        "is_admin": False,
        "is_owner": False,
        "is_guest": False,
        "role": Role.MEMBER,
        "is_bot": False,
        "bot_type": None,
        "bot_owner_id": None,
        "is_imported_stub": False,
        "full_name": INACCESSIBLE_USER_NAME,
        "timezone": "",
        "is_active": True,
        "date_joined": "1970-01-01T00:00:00+00:00",
        "delivery_email": None,
        "avatar_url": inaccessible_avatar_url(),
        "profile_data": {},
    }


def inaccessible_avatar_url() -> str:
    """The picture of an unknown user (Zulip's is a grey silhouette too): a static file."""
    return staticfiles_storage.url("users/unknown-user-avatar.png")


# --- looking a user up for someone ---------------------------------------------------------------


def access_user_by_id(
    acting_user: User,
    user_id: int,
    *,
    allow_deactivated: bool = False,
    allow_bots: bool = False,
    for_admin: bool = False,
    allow_system_bots: bool = True,
    allow_inaccessible: bool = False,
) -> User:
    """The user `user_id` of the acting user's organization, or "No such user".

    Users of other organizations answer exactly like ids that never existed. The server's own bots
    (Zulip's cross-realm bots, in no organization there) may be looked at, never administered
    (`for_admin`), nor acted on where `allow_system_bots` is False. A guest who may not see the
    user (apps/users/access.py) is answered "Insufficient permission", unless `allow_inaccessible`
    (the caller refuses them in its own words).
    """
    target = users_in_realm(acting_user.realm).filter(id=user_id).first()
    return _check_access(
        acting_user,
        target,
        allow_deactivated=allow_deactivated,
        allow_bots=allow_bots,
        for_admin=for_admin,
        allow_system_bots=allow_system_bots,
        allow_inaccessible=allow_inaccessible,
    )


def access_user_by_email(
    acting_user: User,
    email: str,
    *,
    allow_deactivated: bool = False,
    allow_bots: bool = False,
    for_admin: bool = False,
    allow_inaccessible: bool = False,
) -> User:
    """By real email (only when the acting user may see it), else by the `user{id}@domain` address."""
    target = user_with_delivery_email(users_in_realm(acting_user.realm), email)
    if target is not None and not can_access_delivery_email(acting_user, target):
        target = None
    match = FAKE_EMAIL_RE.fullmatch(email_key(email))
    if target is None and match and match.group(2) == fake_email_domain(acting_user.realm.host):
        target = users_in_realm(acting_user.realm).filter(id=int(match.group(1))).first()
    return _check_access(
        acting_user,
        target,
        allow_deactivated=allow_deactivated,
        allow_bots=allow_bots,
        for_admin=for_admin,
        allow_system_bots=True,
        allow_inaccessible=allow_inaccessible,
    )


def _check_access(
    acting_user: User,
    target: User | None,
    *,
    allow_deactivated: bool,
    allow_bots: bool,
    for_admin: bool,
    allow_system_bots: bool,
    allow_inaccessible: bool,
) -> User:
    if target is None or (target.is_bot and not allow_bots):
        raise JsonableError("No such user")
    if target.is_system_bot and (for_admin or not allow_system_bots):
        raise JsonableError("No such user")
    if not target.is_active and not allow_deactivated:
        raise JsonableError("User is deactivated")
    # Zulip's can_admin_user: administrators, and a bot's owner for their bot.
    if for_admin and not (acting_user.is_admin or (target.is_bot and target.bot_owner_id == acting_user.id)):
        raise JsonableError("Insufficient permission")
    if not allow_inaccessible and acting_user.is_guest and not check_can_access_user(acting_user, target):
        raise JsonableError("Insufficient permission")
    return target
