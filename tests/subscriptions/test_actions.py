"""The rules of channels, called on the actions and selectors directly: who sees, may join and may
administer a channel (roles, subscription, group settings through nested groups), who may create
channels, and topic policies (a user's, and a channel's topics_policy)."""

import pytest

from apps.core.errors import InvalidArgumentError, JsonableError
from apps.core.params import parse_param_source
from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.models import SystemGroups
from apps.groups.selectors import system_groups
from apps.groups.serializers import AnonymousGroupValue, GroupSettingChange
from apps.subscriptions.actions.channel_settings import check_update_stream, do_change_stream_group_setting
from apps.subscriptions.actions.channels import (
    NewChannel,
    NewChannelOptions,
    do_deactivate_stream,
    do_unarchive_stream,
)
from apps.subscriptions.actions.subscriptions import bulk_remove_subscriptions, check_add_subscriptions
from apps.subscriptions.actions.user_topics import check_mute_topic, do_set_user_topic_visibility_policy
from apps.subscriptions.errors import CannotAdministerChannelError
from apps.subscriptions.models import Stream, UserTopic
from apps.subscriptions.selectors import (
    access_stream_for_user_topic,
    access_stream_to_administer,
    is_subscribed,
    visible_streams,
)
from apps.subscriptions.serializers import LegacyMuteTopicParams, UserTopicParams

INSUFFICIENT = r"^Insufficient permission$"
MUTED, UNMUTED, FOLLOWED, INHERIT = (
    UserTopic.VisibilityPolicy.MUTED,
    UserTopic.VisibilityPolicy.UNMUTED,
    UserTopic.VisibilityPolicy.FOLLOWED,
    UserTopic.VisibilityPolicy.INHERIT,
)


def join(user, stream) -> str:
    """What subscribing themself to the channel does: "joined", "already" or "unauthorized"."""
    body = check_add_subscriptions(
        [NewChannel(stream.name)], users=[user], authorization_errors_fatal=False, acting_user=user
    )
    if body["unauthorized"]:
        return "unauthorized"
    return "joined" if body["subscribed"] else "already"


def administer(user, stream) -> str:
    """What access_stream_to_administer answers: "yes", "no" (sees it, may not) or "hidden"."""
    try:
        access_stream_to_administer(user, stream.id, allow_archived=False)
    except CannotAdministerChannelError:
        return "no"
    except JsonableError as error:
        return "hidden" if error.msg == "Invalid channel ID" else error.msg
    return "yes"


def rights(user, stream) -> tuple[bool, str, str]:
    """(sees it, administering, joining), read in that order (joining changes what follows)."""
    sees = stream.id in {s.id for s in visible_streams(user)}
    return sees, administer(user, stream), join(user, stream)


# --- who sees, may join and may administer a channel --------------------------------------------

# (role, private, subscribed) -> (sees, administer, join). Administrators see every channel and
# administer it, but read a private one only when subscribed; guests see only their own channels.
MATRIX = {
    ("owner", False, False): (True, "yes", "joined"),
    ("admin", False, False): (True, "yes", "joined"),
    ("moderator", False, False): (True, "no", "joined"),
    ("member", False, False): (True, "no", "joined"),
    ("guest", False, False): (False, "hidden", "unauthorized"),
    ("owner", True, False): (True, "yes", "unauthorized"),
    ("admin", True, False): (True, "yes", "unauthorized"),
    ("moderator", True, False): (False, "hidden", "unauthorized"),
    ("member", True, False): (False, "hidden", "unauthorized"),
    ("guest", True, False): (False, "hidden", "unauthorized"),
    **{(role, private, True): (True, "yes" if role in ("owner", "admin") else "no", "already")
       for role in ("owner", "admin", "moderator", "member", "guest") for private in (False, True)},
}  # fmt: skip


@pytest.mark.parametrize(("role", "private", "subscribed"), sorted(MATRIX))
def test_who_sees_joins_and_administers_a_channel(request, make_stream, role, private, subscribed):
    user = request.getfixturevalue(role)
    stream = make_stream("design", *([user] if subscribed else []), private=private)
    assert rights(user, stream) == MATRIX[(role, private, subscribed)]


# A private channel's group settings, each held through a group two levels down: what its members get.
GRANTS = {
    "can_subscribe_group": (True, "no", "joined"),
    "can_add_subscribers_group": (True, "no", "joined"),
    "can_administer_channel_group": (True, "yes", "unauthorized"),
    "can_remove_subscribers_group": (False, "hidden", "unauthorized"),
    "can_send_message_group": (False, "hidden", "unauthorized"),
}


@pytest.mark.parametrize("setting", sorted(GRANTS))
def test_private_channel_group_settings_through_nested_groups(
    owner, member, moderator, make_group, make_stream, setting
):
    inner = make_group(owner, "inner", members=[member])
    middle = make_group(owner, "middle", subgroup_ids=[inner.id])
    outer = make_group(owner, "outer", subgroup_ids=[middle.id])
    stream = make_stream("secret", owner, private=True)
    do_change_stream_group_setting(stream, setting, GroupSettingChange(new=outer.id, old=None), acting_user=owner)
    assert rights(member, stream) == GRANTS[setting]
    assert rights(moderator, stream) == (False, "hidden", "unauthorized")  # not in the groups


@pytest.mark.parametrize("setting", sorted(GRANTS))
def test_guests_hold_no_channel_setting(owner, guest, make_group, make_stream, setting):
    # Zulip's rule: settings that cannot be role:everyone are never held by guests.
    team = make_group(owner, "team", members=[guest])
    stream = make_stream("secret", owner, private=True)
    do_change_stream_group_setting(stream, setting, GroupSettingChange(new=team.id, old=None), acting_user=owner)
    assert rights(guest, stream) == (False, "hidden", "unauthorized")


def test_an_anonymous_setting_value_holds_its_members_and_subgroups(owner, member, moderator, make_group, make_stream):
    team = make_group(owner, "team", members=[moderator])
    stream = make_stream("secret", owner, private=True)
    value = AnonymousGroupValue((member.id,), (team.id,))
    do_change_stream_group_setting(stream, "can_subscribe_group", GroupSettingChange(value, None), acting_user=owner)
    assert rights(member, stream) == (True, "no", "joined")
    assert rights(moderator, stream) == (True, "no", "joined")


def test_a_channels_creator_administers_it(member, moderator):
    check_add_subscriptions([NewChannel("mine")], users=[member], acting_user=member)
    stream = Stream.objects.get(name="mine")
    assert administer(member, stream) == "yes"
    assert administer(moderator, stream) == "no"


def test_an_archived_channel_is_gone_for_changes_but_can_be_archived_once(admin, make_stream):
    stream = make_stream("old", admin)
    do_deactivate_stream(stream, acting_user=admin)
    assert administer(admin, stream) == "hidden"
    assert access_stream_to_administer(admin, stream.id, allow_archived=True) == stream
    with pytest.raises(JsonableError, match="Channel is already deactivated"):
        do_deactivate_stream(stream, acting_user=admin)
    assert join(admin, stream) == "unauthorized"


def test_another_organizations_channel_is_hidden_from_everyone(admin, other_realm, foreign_user, make_stream):
    stream = make_stream("elsewhere", foreign_user, in_realm=other_realm)
    assert administer(admin, stream) == "hidden"
    assert stream not in visible_streams(admin)


# --- who may create channels ----------------------------------------------------------------------


PUBLIC, PRIVATE = "can_create_public_channel_group", "can_create_private_channel_group"


def set_policy(realm, setting, group_id) -> None:
    do_change_realm_permission_group_setting(realm, setting, group_id, acting_user=None)


def create(user, name, **options) -> dict:
    return check_add_subscriptions(
        [NewChannel(name)], users=[user], acting_user=user, options=NewChannelOptions(**options)
    )


@pytest.mark.parametrize(("setting", "invite_only"), [(PUBLIC, False), (PRIVATE, True)])
def test_creation_follows_the_organizations_policy_for_the_kind(realm, sys_groups, member, admin, setting, invite_only):
    set_policy(realm, setting, sys_groups[SystemGroups.ADMINISTRATORS].id)
    with pytest.raises(JsonableError, match=INSUFFICIENT):
        create(member, "new", invite_only=invite_only)
    assert not Stream.objects.exists()
    create(member, "other kind", invite_only=not invite_only)  # the other policy still allows it
    create(admin, "new", invite_only=invite_only)
    assert Stream.objects.get(name="new").invite_only is invite_only


def test_creation_policy_through_a_nested_group(realm, owner, member, moderator, make_group):
    inner = make_group(owner, "inner", members=[member])
    outer = make_group(owner, "outer", subgroup_ids=[inner.id])
    set_policy(realm, PUBLIC, outer.id)
    create(member, "by member")
    with pytest.raises(JsonableError, match=INSUFFICIENT):
        create(moderator, "by moderator")


def test_guests_never_create_channels(realm, owner, guest, make_group):
    set_policy(realm, PUBLIC, make_group(owner, "with a guest", members=[guest]).id)
    with pytest.raises(JsonableError, match=INSUFFICIENT):
        create(guest, "guest-made")


def test_joining_existing_channels_is_not_creating(realm, sys_groups, member, admin, make_stream):
    make_stream("design", admin)
    set_policy(realm, PUBLIC, sys_groups[SystemGroups.NOBODY].id)
    assert create(member, "design")["subscribed"] == {str(member.id): ["design"]}
    with pytest.raises(JsonableError, match=INSUFFICIENT):
        check_add_subscriptions([NewChannel("design"), NewChannel("new")], users=[member], acting_user=member)


def test_one_call_creates_at_most_the_limit(settings, member):
    settings.RATE_LIMIT_CHANNEL_CREATION = (2, 3600)
    with pytest.raises(InvalidArgumentError, match="Too many new channels in one request: 3"):
        check_add_subscriptions([NewChannel(n) for n in "abc"], users=[member], acting_user=member)
    # The same name twice (without case, stripped) is one channel.
    check_add_subscriptions([NewChannel(n) for n in ("a", " A ", "b")], users=[member], acting_user=member)
    assert sorted(Stream.objects.values_list("name", flat=True)) == ["a", "b"]


def test_message_retention_of_new_channels_needs_an_owner(admin, owner):
    with pytest.raises(JsonableError, match="Must be an organization owner"):
        create(admin, "kept", message_retention_days=30)
    create(owner, "kept", message_retention_days=30)
    assert Stream.objects.get(name="kept").message_retention_days == 30


# --- a channel's topics policy --------------------------------------------------------------------


def test_a_topics_policy_is_set_by_those_the_organization_allows(realm, admin, member, guest):
    """Zulip's can_set_topics_policy_group (members by default), for the channels they administer."""
    create(member, "t", topics_policy=Stream.TopicsPolicy.EMPTY_TOPIC_ONLY)
    assert Stream.objects.get(name="t").topics_policy == Stream.TopicsPolicy.EMPTY_TOPIC_ONLY
    mine = Stream.objects.get(name="t")  # its creator administers it
    check_update_stream(mine, topics_policy=Stream.TopicsPolicy.DISABLE_EMPTY_TOPIC, acting_user=member)
    set_policy(realm, "can_set_topics_policy_group", system_groups(realm.id)[SystemGroups.ADMINISTRATORS].id)
    with pytest.raises(JsonableError, match=INSUFFICIENT):
        create(member, "u", topics_policy=Stream.TopicsPolicy.EMPTY_TOPIC_ONLY)
    with pytest.raises(JsonableError, match=INSUFFICIENT):
        check_update_stream(mine, topics_policy=Stream.TopicsPolicy.ALLOW_EMPTY_TOPIC, acting_user=member)
    # Giving the decision back to the organization is no policy of one's own (Zulip's validate_topics_policy).
    check_update_stream(mine, topics_policy=Stream.TopicsPolicy.INHERIT, acting_user=member)
    mine.refresh_from_db()
    assert mine.topics_policy == Stream.TopicsPolicy.INHERIT
    check_update_stream(mine, topics_policy=Stream.TopicsPolicy.ALLOW_EMPTY_TOPIC, acting_user=admin)


# --- a user's topic policies ----------------------------------------------------------------------


def policies(user) -> list[tuple[str, int]]:
    return list(UserTopic.objects.filter(user=user).order_by("id").values_list("topic_name", "visibility_policy"))


def set_policy_of(user, stream, topic, policy) -> None:
    do_set_user_topic_visibility_policy(user, stream, topic, visibility_policy=policy, acting_user=user)


def test_a_topic_has_one_policy_whatever_the_case(member, make_stream, capture_events):
    stream = make_stream("design", member)
    with capture_events(member, event_types=["user_topic"]) as received:
        set_policy_of(member, stream, "Lunch", MUTED)
        set_policy_of(member, stream, "LUNCH", FOLLOWED)
        set_policy_of(member, stream, "lunch", FOLLOWED)  # already: nothing changes, nothing is sent
    assert policies(member) == [("Lunch", FOLLOWED)]  # the name first given is kept
    assert [(e["topic_name"], e["visibility_policy"]) for e in received[member.id]] == [
        ("Lunch", MUTED),
        ("Lunch", FOLLOWED),
    ]
    with capture_events(member, event_types=["user_topic"]) as received:
        set_policy_of(member, stream, "lUnCh", INHERIT)
        set_policy_of(member, stream, "lunch", INHERIT)  # none left: nothing is sent
    assert policies(member) == []
    assert [(e["topic_name"], e["visibility_policy"]) for e in received[member.id]] == [("Lunch", INHERIT)]


def test_policies_are_per_user_and_channel(member, moderator, make_stream):
    design, lobby = make_stream("design", member, moderator), make_stream("lobby", member)
    set_policy_of(member, design, "lunch", MUTED)
    set_policy_of(member, lobby, "lunch", UNMUTED)
    set_policy_of(moderator, design, "lunch", FOLLOWED)
    assert policies(member) == [("lunch", MUTED), ("lunch", UNMUTED)]
    assert policies(moderator) == [("lunch", FOLLOWED)]


def test_the_legacy_mute_toggles_only_muting(member, make_stream):
    stream = make_stream("design", member)
    check_mute_topic(stream, "lunch", mute=True, acting_user=member)
    check_mute_topic(stream, "LUNCH", mute=True, acting_user=member)  # already: nothing changes
    assert policies(member) == [("lunch", MUTED)]
    check_mute_topic(stream, "Lunch", mute=False, acting_user=member)
    check_mute_topic(stream, "lunch", mute=False, acting_user=member)
    assert policies(member) == []
    set_policy_of(member, stream, "lunch", FOLLOWED)
    check_mute_topic(stream, "lunch", mute=False, acting_user=member)  # followed is not muted: kept
    assert policies(member) == [("lunch", FOLLOWED)]


@pytest.mark.parametrize("params_class", [UserTopicParams, LegacyMuteTopicParams])
@pytest.mark.parametrize(("sent", "stored"), [("  lunch ", "lunch"), ("general chat", ""), (" ", "")])
def test_topic_names_are_stored_as_topics_are(params_class, sent, stored):
    # The empty topic is what clients without the empty_topic_name capability call "general chat".
    source = {"stream_id": "1", "topic": sent, "visibility_policy": "1", "op": "add"}
    assert parse_param_source(params_class, source).topic == stored


@pytest.mark.parametrize("params_class", [UserTopicParams, LegacyMuteTopicParams])
def test_topic_names_are_at_most_60_characters(params_class):
    source = {"stream_id": "1", "visibility_policy": "1", "op": "add"}
    assert len(parse_param_source(params_class, {**source, "topic": "x" * 60 + "  "}).topic) == 60
    with pytest.raises(JsonableError, match=r"^topic is too long \(limit: 60 characters\)$"):
        parse_param_source(params_class, {**source, "topic": "x" * 61})


def test_a_policy_is_removed_without_access_to_its_channel(member, admin, make_stream):
    secret = make_stream("secret", admin, member, private=True)
    set_policy_of(member, secret, "plans", MUTED)
    bulk_remove_subscriptions(member.realm, [member], [secret], acting_user=member)
    assert not is_subscribed(member, secret)
    assert access_stream_for_user_topic(member, secret.id, removing=True) == secret
    with pytest.raises(JsonableError, match="Invalid channel ID"):
        access_stream_for_user_topic(member, secret.id, removing=False)
    set_policy_of(member, secret, "plans", INHERIT)
    assert policies(member) == []
    # Without a policy there to remove, the channel is as hidden as for setting one.
    with pytest.raises(JsonableError, match="Invalid channel ID"):
        access_stream_for_user_topic(member, secret.id, removing=True)


def test_archiving_or_unarchiving_a_channel_changed_meanwhile_is_refused(admin, make_stream):
    # Two requests read the channel, then each changes it: the second finds it changed already
    # (its row is read again under a lock), rather than archiving it twice (twice the events).
    stream = make_stream("design", admin)
    stale = Stream.objects.get(id=stream.id)
    do_deactivate_stream(stream, acting_user=admin)
    with pytest.raises(JsonableError, match="Channel is already deactivated"):
        do_deactivate_stream(stale, acting_user=admin)
    stale = Stream.objects.get(id=stream.id)
    do_unarchive_stream(stream, acting_user=admin)
    with pytest.raises(JsonableError, match="Channel is not currently deactivated"):
        do_unarchive_stream(stale, acting_user=admin)


def test_a_group_setting_changed_meanwhile_is_changed_from_its_new_value(owner, member, make_stream):
    """Two changes of a channel's group setting at once (the fuzzing QA pass: the second read the
    anonymous group the first deleted, and answered 500): the second starts from what the first left."""
    stream = make_stream("design", owner)
    anonymous = GroupSettingChange(new=AnonymousGroupValue(direct_members=(member.id,), direct_subgroups=()), old=None)
    again = lambda: Stream.objects.get(id=stream.id)  # noqa: E731
    check_update_stream(again(), group_settings={"can_send_message_group": anonymous}, acting_user=owner)
    stale = again()  # the anonymous group's id, read before the next change deletes it
    admins = GroupSettingChange(new=system_groups(stream.realm_id)[SystemGroups.ADMINISTRATORS].id, old=None)
    check_update_stream(again(), group_settings={"can_send_message_group": admins}, acting_user=owner)
    check_update_stream(stale, group_settings={"can_send_message_group": anonymous}, acting_user=owner)
    assert list(again().can_send_message_group.direct_members.values_list("id", flat=True)) == [member.id]
