"""User groups with the official `zulip` Python client from PyPI, unchanged, against a real server."""

import pytest
import zulip

from apps.users.models import Role
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e


@pytest.fixture
def people_and_guest(people):
    realm, owner, member = people
    guest = UserFactory(realm=realm, role=Role.GUEST, delivery_email="guest@e2e.example", full_name="Gwen Guest")
    return owner, member, guest


def test_client_manages_user_groups(parley_server, people_and_guest):
    owner, member, _ = people_and_guest
    client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=parley_server.url)

    result = client.create_user_group({"name": "marketing", "description": "The marketing team", "members": [owner.id]})
    assert result["result"] == "success", result
    group_id = result["group_id"]

    groups = {g["name"]: g for g in client.get_user_groups()["user_groups"]}
    assert groups["marketing"]["members"] == [owner.id]
    assert groups["role:members"]["members"] == [member.id]
    assert groups["role:everyone"]["direct_subgroup_ids"] == [groups["role:members"]["id"]]

    assert client.update_user_group_members(group_id, {"add": [member.id], "delete": [owner.id]})["result"] == "success"
    updated = client.update_user_group({"group_id": group_id, "name": "Marketing", "description": "Renamed"})
    # The client sends the id in the body too; like Zulip, the server says it did not use it.
    assert updated == {"result": "success", "msg": "", "ignored_parameters_unsupported": ["group_id"]}
    subgroups = client.call_endpoint(
        url=f"user_groups/{group_id}/subgroups", method="POST", request={"add": [groups["role:owners"]["id"]]}
    )
    assert subgroups == {"result": "success", "msg": ""}
    is_member = client.call_endpoint(url=f"user_groups/{group_id}/members/{owner.id}", method="GET")
    assert is_member["is_user_group_member"] is True

    groups = {g["name"]: g for g in client.get_user_groups()["user_groups"]}
    assert groups["Marketing"]["members"] == [member.id]
    assert groups["Marketing"]["direct_subgroup_ids"] == [groups["role:owners"]["id"]]

    assert client.remove_user_group(group_id) == {"result": "success", "msg": ""}
    assert "Marketing" not in [g["name"] for g in client.get_user_groups()["user_groups"]]


def test_client_sees_group_errors_and_events(parley_server, people_and_guest):
    owner, member, guest = people_and_guest
    owner_client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=parley_server.url)
    member_client = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=parley_server.url)
    guest_client = zulip.Client(email=guest.delivery_email, api_key=guest.api_key, site=parley_server.url)

    refused = guest_client.get_user_groups()
    assert (refused["result"], refused["code"], refused["msg"]) == (
        "error",
        "BAD_REQUEST",
        "Not allowed for guest users",
    )

    queue = member_client.register(event_types=["user_group"], fetch_event_types=["realm_user_groups"])
    assert [g["name"] for g in queue["realm_user_groups"]][:2] == ["role:nobody", "role:owners"]
    group_id = owner_client.create_user_group({"name": "support", "description": "", "members": []})["group_id"]
    cycle = owner_client.call_endpoint(
        url=f"user_groups/{group_id}/subgroups", method="POST", request={"add": [group_id]}
    )
    assert cycle["msg"] == f"User group {group_id} is already a subgroup of one of the passed subgroups."

    events = member_client.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [(e["type"], e["op"], e["group"]["name"]) for e in events] == [("user_group", "add", "support")]
