"""What channel changes record in the audit log (Zulip's RealmAuditLog entries and extra_data),
in the change's transaction: nothing for a refused change or one that changes nothing."""

from io import StringIO

import pytest
from django.core.management import call_command

from apps.core.errors import JsonableError
from apps.groups.models import SystemGroups
from apps.groups.serializers import AnonymousGroupValue, GroupSettingChange
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.subscriptions.actions.channel_settings import check_update_stream
from apps.subscriptions.actions.channels import NewChannel, do_deactivate_stream, do_unarchive_stream
from apps.subscriptions.actions.subscriptions import check_add_subscriptions
from apps.subscriptions.models import Stream
from apps.subscriptions.serializers import UNCHANGED
from tests.api import ApiClient, assert_success

E = AuditLogEventType
CHANNEL_EVENTS = (
    E.STREAM_CREATED,
    E.STREAM_DEACTIVATED,
    E.STREAM_REACTIVATED,
    E.STREAM_NAME_CHANGED,
    E.STREAM_PROPERTY_CHANGED,
    E.STREAM_GROUP_BASED_SETTING_CHANGED,
)


def entries(stream=None) -> list[tuple]:
    rows = RealmAuditLog.objects.filter(event_type__in=CHANNEL_EVENTS).order_by("id")
    if stream is not None:
        rows = rows.filter(modified_stream=stream)
    return [(row.event_type, row.acting_user_id, row.modified_stream_id, row.extra_data) for row in rows]


def test_creating_channels_records_each_and_joining_records_nothing(realm, member, admin, make_stream):
    make_stream("design", admin)
    before = entries()
    check_add_subscriptions(
        [NewChannel("design"), NewChannel("new"), NewChannel("newer")], users=[member], acting_user=member
    )
    new, newer = Stream.objects.get(name="new"), Stream.objects.get(name="newer")
    assert entries()[len(before) :] == [
        (E.STREAM_CREATED, member.id, new.id, {}),
        (E.STREAM_CREATED, member.id, newer.id, {}),
    ]
    assert new.realm_id == RealmAuditLog.objects.get(modified_stream=new).realm_id == realm.id


def test_the_operator_command_records_no_acting_user(realm):
    call_command("create_stream", "announcements", "--realm", "", stdout=StringIO())
    stream = Stream.objects.get(name="announcements")
    assert entries(stream) == [(E.STREAM_CREATED, None, stream.id, {})]


def test_renaming_records_old_and_new_names(admin, make_stream):
    stream = make_stream("design", admin)
    check_update_stream(stream, new_name="Studio", acting_user=admin)
    assert entries(stream)[-1] == (
        E.STREAM_NAME_CHANGED,
        admin.id,
        stream.id,
        {"old_value": "design", "new_value": "Studio"},
    )


def test_settings_record_each_property_changed(owner, make_stream):
    stream = make_stream("design", owner)
    start = len(entries(stream))
    check_update_stream(
        stream,
        description="Plans",
        is_private=True,
        message_retention_days=30,
        topics_policy=Stream.TopicsPolicy.EMPTY_TOPIC_ONLY,
        acting_user=owner,
    )
    changes = [(row[0], row[3]) for row in entries(stream)[start:]]
    assert changes == [
        (E.STREAM_PROPERTY_CHANGED, {"property": "invite_only", "old_value": False, "new_value": True}),
        (
            E.STREAM_PROPERTY_CHANGED,
            {"property": "history_public_to_subscribers", "old_value": True, "new_value": False},
        ),
        (E.STREAM_PROPERTY_CHANGED, {"property": "message_retention_days", "old_value": None, "new_value": 30}),
        (
            E.STREAM_PROPERTY_CHANGED,
            {"property": "topics_policy", "old_value": "inherit", "new_value": "empty_topic_only"},
        ),
        (E.STREAM_PROPERTY_CHANGED, {"property": "description", "old_value": "", "new_value": "Plans"}),
    ]
    assert {row[1] for row in entries(stream)[start:]} == {owner.id}
    check_update_stream(stream, message_retention_days=-1, acting_user=owner)
    assert entries(stream)[-1][3] == {"property": "message_retention_days", "old_value": 30, "new_value": -1}


def test_unchanged_values_record_nothing(owner, make_stream):
    stream = make_stream("design", owner, description="Plans")
    before = entries()
    check_update_stream(
        stream,
        description="Plans",
        is_private=False,
        message_retention_days=None,
        topics_policy=Stream.TopicsPolicy.INHERIT,
        acting_user=owner,
    )
    check_update_stream(stream, message_retention_days=UNCHANGED, acting_user=owner)
    assert entries() == before


def test_group_settings_record_the_api_values(realm, owner, member, sys_groups, make_stream):
    stream = make_stream("design", owner)
    admins, moderators = sys_groups[SystemGroups.ADMINISTRATORS].id, sys_groups[SystemGroups.MODERATORS].id
    check_update_stream(
        stream, group_settings={"can_remove_subscribers_group": GroupSettingChange(moderators, None)}, acting_user=owner
    )
    value = AnonymousGroupValue((member.id,), (admins,))
    check_update_stream(
        stream, group_settings={"can_remove_subscribers_group": GroupSettingChange(value, None)}, acting_user=owner
    )
    setting = "can_remove_subscribers_group"
    assert [(row[0], row[1], row[3]) for row in entries(stream)[-2:]] == [
        (
            E.STREAM_GROUP_BASED_SETTING_CHANGED,
            owner.id,
            {"property": setting, "old_value": admins, "new_value": moderators},
        ),
        (
            E.STREAM_GROUP_BASED_SETTING_CHANGED,
            owner.id,
            {
                "property": setting,
                "old_value": moderators,
                "new_value": {"direct_members": [member.id], "direct_subgroups": [admins]},
            },
        ),
    ]


def test_archiving_is_recorded(admin, make_stream):
    stream = make_stream("design", admin)
    do_deactivate_stream(stream, acting_user=admin)
    assert entries(stream)[-1] == (E.STREAM_DEACTIVATED, admin.id, stream.id, {})
    do_unarchive_stream(stream, acting_user=admin)
    assert entries(stream)[-1] == (E.STREAM_REACTIVATED, admin.id, stream.id, {})


def test_a_refused_change_records_nothing(owner, admin, sys_groups, make_stream):
    stream = make_stream("design", owner)
    before = entries()
    moderators = sys_groups[SystemGroups.MODERATORS].id
    # The rename is applied before the group setting is found stale: all or nothing, its entry too.
    with pytest.raises(JsonableError, match="'old' value does not match"):
        check_update_stream(
            stream,
            new_name="renamed",
            description="new",
            group_settings={"can_remove_subscribers_group": GroupSettingChange(moderators, moderators)},
            acting_user=owner,
        )
    with pytest.raises(JsonableError, match="Must be an organization owner"):
        check_update_stream(stream, description="new", message_retention_days=5, acting_user=admin)
    assert entries() == before


def test_a_refused_creation_records_nothing(member, settings):
    settings.RATE_LIMIT_CHANNEL_CREATION = (1, 3600)
    before = entries()
    with pytest.raises(JsonableError):
        check_add_subscriptions([NewChannel("a"), NewChannel("b")], users=[member], acting_user=member)
    assert entries() == before


def test_the_admin_records_the_staff_user(staff, owner, make_stream):
    stream = make_stream("design", owner)
    response = staff.post(f"/admin/subscriptions/stream/{stream.id}/change/", {"name": "studio", "description": "x"})
    assert response.status_code == 302
    response = staff.post(
        "/admin/subscriptions/stream/", {"action": "archive", "confirmed": "yes", "_selected_action": [stream.id]}
    )
    assert response.status_code == 302
    assert [(row[0], row[1]) for row in entries(stream)[1:]] == [
        (E.STREAM_PROPERTY_CHANGED, owner.id),
        (E.STREAM_NAME_CHANGED, owner.id),
        (E.STREAM_DEACTIVATED, owner.id),
    ]


def test_changes_made_over_the_api_are_recorded_with_who_made_them(owner, admin):
    api = ApiClient(admin)
    assert_success(api.post("/users/me/subscriptions", {"subscriptions": [{"name": "design"}]}))
    stream = Stream.objects.get(name="design")
    assert_success(api.patch(f"/streams/{stream.id}", {"new_name": "studio", "is_private": True}))
    assert_success(ApiClient(owner).patch(f"/streams/{stream.id}", {"message_retention_days": 7}))
    assert_success(api.delete(f"/streams/{stream.id}"))
    assert [(row[0], row[1], row[3].get("property")) for row in entries(stream)] == [
        (E.STREAM_CREATED, admin.id, None),
        (E.STREAM_PROPERTY_CHANGED, admin.id, "invite_only"),
        (E.STREAM_PROPERTY_CHANGED, admin.id, "history_public_to_subscribers"),
        (E.STREAM_NAME_CHANGED, admin.id, None),
        (E.STREAM_PROPERTY_CHANGED, owner.id, "message_retention_days"),
        (E.STREAM_DEACTIVATED, admin.id, None),
    ]
