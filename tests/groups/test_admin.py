"""The groups' Django admin: named groups only, choices from the group's organization, system groups
read-only, and every edit through the actions (with their events and checks)."""

import pytest

from apps.groups.models import UserGroup
from apps.groups.selectors import group_member_ids, subgroup_ids
from tests.factories import BotFactory


@pytest.fixture
def team(owner, member, make_group):
    return make_group(owner, "team", [member])


def inline_data(group, members=(), subgroups=(), delete=()):
    """The change form's POST body: name, description, each inline's existing rows (deleted when
    their item is in `delete`) and new rows for `members` and `subgroups`."""
    data = {"name": group.name, "description": group.description}
    inlines = (
        ("memberships", "user", group.memberships.order_by("id"), members),
        ("subgroup_links", "subgroup", group.subgroup_links.order_by("id"), subgroups),
    )
    for prefix, field, existing, new in inlines:
        rows = [(link.id, getattr(link, field)) for link in existing] + [(None, item) for item in new]
        data.update({f"{prefix}-TOTAL_FORMS": len(rows), f"{prefix}-INITIAL_FORMS": len(existing)})
        data[f"{prefix}-MIN_NUM_FORMS"] = 0
        for index, (link_id, item) in enumerate(rows):
            data[f"{prefix}-{index}-{field}"] = item.id
            data[f"{prefix}-{index}-id"] = link_id or ""
            data[f"{prefix}-{index}-{'supergroup' if field == 'subgroup' else 'user_group'}"] = group.id
            if item in delete:
                data[f"{prefix}-{index}-DELETE"] = "on"
    return data


def test_list_shows_named_groups_only(staff, team, sys_groups):
    page = staff.get("/admin/groups/usergroup/").content.decode()
    assert f"/admin/groups/usergroup/{team.id}/change/" in page
    assert f"/admin/groups/usergroup/{sys_groups['role:members'].id}/change/" in page
    assert f"/admin/groups/usergroup/{team.can_manage_group_id}/change/" not in page
    assert staff.get("/admin/groups/usergroup/?realm__id__exact=1&is_system_group__exact=0").status_code == 200


def test_choices_come_from_the_groups_organization(staff, team, admin, owner, foreign_user, make_group):
    make_group(foreign_user, "theirs")
    make_group(owner, "ours")
    page = staff.get(f"/admin/groups/usergroup/{team.id}/change/").content.decode()
    assert admin.full_name in page
    assert foreign_user.full_name not in page
    assert ">ours</option>" in page
    assert ">theirs</option>" not in page


def test_the_servers_own_bots_are_no_member_choice(staff, team, realm, member):
    """They are in no group (the operator QA pass: the Notification Bot was offered)."""
    BotFactory(realm=realm, bot_owner=None, full_name="Notification Bot")
    BotFactory(realm=realm, bot_owner=member, full_name="Their Bot")
    page = staff.get(f"/admin/groups/usergroup/{team.id}/change/").content.decode()
    assert "Their Bot" in page
    assert "Notification Bot" not in page


def test_system_groups_are_read_only(staff, sys_groups, member):
    group = sys_groups["role:members"]
    assert staff.get(f"/admin/groups/usergroup/{group.id}/change/").status_code == 200
    response = staff.post(f"/admin/groups/usergroup/{group.id}/change/", {"name": "renamed", "description": "x"})
    assert response.status_code == 403
    group.refresh_from_db()
    assert group.name == "role:members"


def test_edits_go_through_the_actions(staff, team, admin, member, make_group, owner, capture_events):
    helpers = make_group(owner, "helpers")
    data = inline_data(team, members=[admin], subgroups=[helpers])
    data["name"] = "Team A"
    with capture_events(member) as received:
        response = staff.post(f"/admin/groups/usergroup/{team.id}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    team.refresh_from_db()
    assert team.name == "Team A"
    assert group_member_ids(team.id) == sorted([member.id, admin.id])
    assert subgroup_ids(team.id, direct_subgroup_only=True) == [helpers.id]
    assert [e["op"] for e in received[member.id]] == ["update", "add_members", "add_subgroups"]

    response = staff.post(f"/admin/groups/usergroup/{team.id}/change/", inline_data(team, delete=[member, helpers]))
    assert response.status_code == 302
    assert group_member_ids(team.id) == [admin.id]
    assert subgroup_ids(team.id) == []


def test_cycles_and_bad_names_are_refused(staff, team, owner, make_group):
    outer = make_group(owner, "outer", subgroup_ids=[team.id])
    response = staff.post(f"/admin/groups/usergroup/{team.id}/change/", inline_data(team, subgroups=[outer]))
    assert response.status_code == 200
    assert "is already a subgroup of one of the passed subgroups" in response.content.decode()
    assert subgroup_ids(team.id) == []
    data = inline_data(team)
    data["name"] = "role:team"
    response = staff.post(f"/admin/groups/usergroup/{team.id}/change/", data)
    assert "User group name cannot start with" in response.content.decode()


def test_a_name_another_group_has_is_refused_on_the_form(staff, team, owner, make_group, foreign_user):
    make_group(owner, "other")
    make_group(foreign_user, "theirs")  # another organization's names do not count
    data = inline_data(team)
    data["name"] = "OTHER"
    response = staff.post(f"/admin/groups/usergroup/{team.id}/change/", data)
    assert response.status_code == 200
    assert "User group &#x27;OTHER&#x27; already exists." in response.content.decode()
    team.refresh_from_db()
    assert team.name == "team"
    data["name"] = "Theirs"
    assert staff.post(f"/admin/groups/usergroup/{team.id}/change/", data).status_code == 302
    team.refresh_from_db()
    assert team.name == "Theirs"


def test_deactivate_and_reactivate_actions(staff, team, owner, make_group):
    used = make_group(owner, "used")
    make_group(owner, "user", subgroup_ids=[used.id])
    response = staff.post(
        "/admin/groups/usergroup/", {"action": "deactivate", "_selected_action": [team.id, used.id]}, follow=True
    )
    assert "Not deactivated, still in use: used" in response.content.decode()
    team.refresh_from_db()
    used.refresh_from_db()
    assert (team.deactivated, used.deactivated) == (True, False)
    staff.post("/admin/groups/usergroup/", {"action": "reactivate", "_selected_action": [team.id]})
    team.refresh_from_db()
    assert not team.deactivated


def test_groups_are_neither_added_nor_deleted_here(staff, team):
    assert staff.get("/admin/groups/usergroup/add/").status_code == 403
    assert staff.get(f"/admin/groups/usergroup/{team.id}/delete/").status_code == 403
    assert UserGroup.objects.filter(id=team.id).exists()


def test_djangos_permission_groups_are_not_listed(staff):
    # Parley's user groups are; Django's own (unused) are not beside them.
    assert staff.get("/admin/auth/group/").status_code == 404
    assert "/admin/auth/group/" not in staff.get("/admin/").content.decode()
    assert "/admin/groups/usergroup/" in staff.get("/admin/").content.decode()
