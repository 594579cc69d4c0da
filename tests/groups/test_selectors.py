"""The membership questions other apps ask, and the register state: answers and query counts."""

import pytest

from apps.groups.models import GroupGroupMembership, UserGroup
from apps.groups.selectors import (
    is_user_in_group,
    member_ids_by_group,
    recursive_membership_group_ids,
    recursive_subgroup_ids,
    user_has_permission,
)
from apps.groups.serializers import AnonymousGroupValue
from tests.api import ApiClient, assert_success
from tests.factories import UserFactory


def test_membership_through_any_depth(realm, owner, make_group):
    people = [UserFactory(realm=realm) for _ in range(4)]
    chain = [make_group(owner, "level0", [people[0]])]
    for level in range(1, 4):
        chain.append(make_group(owner, f"level{level}", [people[level]], subgroup_ids=[chain[-1].id]))
    top = chain[-1]
    assert member_ids_by_group([top.id])[top.id] == {p.id for p in people}
    assert member_ids_by_group([chain[1].id, top.id]) == {
        chain[1].id: {people[0].id, people[1].id},
        top.id: {p.id for p in people},
    }
    assert recursive_subgroup_ids([top.id]) == {g.id for g in chain}
    assert {g.id for g in chain} <= recursive_membership_group_ids(people[0])
    assert recursive_membership_group_ids(people[3]) & {g.id for g in chain} == {top.id}
    assert is_user_in_group(top.id, people[0])
    assert not is_user_in_group(top.id, people[0], direct_member_only=True)
    assert not is_user_in_group(chain[0].id, people[3])


def test_a_cycle_in_the_data_does_not_loop(owner, member, make_group):
    a = make_group(owner, "a", [member])
    b = make_group(owner, "b", subgroup_ids=[a.id])
    GroupGroupMembership.objects.create(supergroup=a, subgroup=b)  # refused by the API; here on purpose
    assert recursive_subgroup_ids([a.id]) == {a.id, b.id}
    assert is_user_in_group(b.id, member)
    assert a.id in recursive_membership_group_ids(member)


def test_anonymous_setting_groups_count(owner, member, moderator, make_group, sys_groups):
    team = make_group(
        owner,
        "team",
        settings={"can_mention_group": AnonymousGroupValue((member.id,), (sys_groups["role:administrators"].id,))},
    )
    setting = UserGroup.SETTINGS["can_mention_group"]
    for user, expected in ((member, True), (owner, True), (moderator, False)):
        assert (
            user_has_permission(user, team.can_mention_group_id, setting, recursive_membership_group_ids(user))
            is expected
        )


def test_guests_never_hold_settings_that_exclude_everyone(guest, make_group, owner):
    team = make_group(owner, "team", settings={"can_manage_group": AnonymousGroupValue((guest.id,), ())})
    membership = recursive_membership_group_ids(guest)
    assert team.can_manage_group_id in membership
    assert not user_has_permission(guest, team.can_manage_group_id, UserGroup.SETTINGS["can_manage_group"], membership)
    assert user_has_permission(guest, team.can_manage_group_id, UserGroup.SETTINGS["can_mention_group"], membership)


def test_one_query_answers_whatever_the_depth(realm, owner, make_group, django_assert_num_queries):
    person = UserFactory(realm=realm)
    group = make_group(owner, "g0", [person])
    for level in range(1, 6):
        group = make_group(owner, f"g{level}", subgroup_ids=[group.id])
    with django_assert_num_queries(1):
        assert is_user_in_group(group.id, person)
    with django_assert_num_queries(1):
        assert member_ids_by_group([group.id]) == {group.id: {person.id}}
    with django_assert_num_queries(1):
        assert group.id in recursive_membership_group_ids(person)


def build_organization(realm, owner, make_group, groups: int, members_each: int) -> list:
    """`groups` groups of `members_each` people, each nesting the previous one and mentionable by
    an anonymous group; returns the people."""
    people = [UserFactory(realm=realm) for _ in range(members_each)]
    previous = None
    for index in range(groups):
        settings = {"can_mention_group": AnonymousGroupValue((people[0].id,), (previous.id,) if previous else ())}
        previous = make_group(
            owner, f"group {index}", people, subgroup_ids=[previous.id] if previous else [], settings=settings
        )
    return people


@pytest.mark.parametrize(("groups", "members_each"), [(1, 1), (12, 15)])
def test_register_state_takes_the_same_queries_whatever_the_size(
    realm, owner, member, make_group, django_assert_num_queries, groups, members_each
):
    people = build_organization(realm, owner, make_group, groups, members_each)
    api = ApiClient(member)
    api.post("/register", {"fetch_event_types": ["realm_user_groups"]})  # warm caches (organization lookup)
    # Authentication, the snapshot (savepoint, user, event sequence) cost the same for both sizes;
    # the groups take 3.
    with django_assert_num_queries(7):
        body = assert_success(api.post("/register", {"fetch_event_types": ["realm_user_groups"]}))
    assert len(body["realm_user_groups"]) == 8 + groups
    last = body["realm_user_groups"][-1]
    assert last["members"] == sorted(p.id for p in people)
    assert last["can_mention_group"]["direct_members"] == [people[0].id]


@pytest.mark.parametrize(("groups", "members_each"), [(1, 1), (12, 15)])
def test_get_user_groups_takes_the_same_queries_whatever_the_size(
    realm, owner, member, make_group, django_assert_num_queries, groups, members_each
):
    build_organization(realm, owner, make_group, groups, members_each)
    api = ApiClient(member)
    api.get("/user_groups")  # warm caches (organization lookup)
    with django_assert_num_queries(3):
        body = assert_success(api.get("/user_groups"))
    assert len(body["user_groups"]) == 8 + groups
