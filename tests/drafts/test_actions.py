"""The rules of the drafts actions, called directly: everything checked before the first write, who
may act for whom, drafts deleted meanwhile, and the receiver of the settings hook (turning draft
synchronization off deletes the user's drafts, without an event)."""

import pytest
from django.db import transaction

from apps.core.errors import JsonableError
from apps.drafts.actions import (
    check_create_drafts,
    check_delete_draft,
    check_draft,
    check_edit_draft,
    do_create_drafts,
    do_delete_all_drafts,
    do_delete_draft,
    do_edit_draft,
)
from apps.drafts.errors import DraftDoesNotExistError
from apps.drafts.models import Draft
from apps.drafts.selectors import access_draft_by_id
from apps.drafts.serializers import DraftFields
from apps.messages.models import DirectMessageGroup, Recipient
from apps.users.hooks import user_settings_changed
from tests.drafts.conftest import db_state


def fields(type="", to=(), topic="", content="hello", timestamp=None) -> DraftFields:
    return DraftFields(type=type, to=tuple(to), topic=topic, content=content, timestamp=timestamp)


def make_drafts(user, *many: DraftFields) -> list[Draft]:
    return check_create_drafts(user, drafts=list(many), acting_user=user)


def test_check_draft_resolves_where_it_goes(member, admin, owner, design):
    channel = check_draft(member, fields("stream", [design.id], "plans"))
    assert (channel.stream, channel.people, channel.topic) == (design, (), "plans")
    people = check_draft(member, fields("private", [admin.id, owner.id, admin.id], "dropped"))
    assert ({p.id for p in people.people}, people.stream, people.topic) == ({admin.id, owner.id}, None, "")
    nobody = check_draft(member, fields("", [design.id], "dropped"))
    assert (nobody.stream, nobody.people, nobody.topic) == (None, (), "")


def test_a_refused_draft_refuses_the_whole_batch_before_any_write(member, admin, owner, design):
    before = db_state()
    groups = DirectMessageGroup.objects.count()
    with pytest.raises(JsonableError, match="Invalid user ID 0"):
        make_drafts(
            member, fields("private", [admin.id, owner.id]), fields("stream", [design.id]), fields("private", [0])
        )
    assert db_state() == before
    assert DirectMessageGroup.objects.count() == groups  # not even the group's recipient was made


def test_created_in_the_given_order_with_their_recipients(member, admin, owner, design):
    made = make_drafts(member, fields("stream", [design.id]), fields("private", [admin.id, owner.id]), fields())
    assert [d.id for d in made] == sorted(d.id for d in made)
    channel, group, nobody = (Draft.objects.get(id=d.id) for d in made)
    assert (channel.recipient.type, channel.recipient.type_id) == (Recipient.Type.STREAM, design.id)
    assert group.recipient.type == Recipient.Type.DIRECT_MESSAGE_GROUP
    assert DirectMessageGroup.objects.get(id=group.recipient.type_id).user_ids == sorted(
        [member.id, admin.id, owner.id]
    )
    assert nobody.recipient is None


def test_synchronization_off_refuses_every_write(member):
    [draft] = make_drafts(member, fields(content="kept"))
    member.enable_drafts_synchronization = False
    before = db_state()
    msg = "User has disabled synchronizing drafts."
    with pytest.raises(JsonableError, match=msg):
        make_drafts(member, fields())
    with pytest.raises(JsonableError, match=msg):
        check_edit_draft(draft, fields=fields(content="changed"), acting_user=member)
    with pytest.raises(JsonableError, match=msg):
        check_delete_draft(draft, acting_user=member)
    assert db_state() == before


def test_nobody_acts_for_someone_else(member, admin):
    [draft] = make_drafts(member, fields())
    checked = check_draft(member, fields())
    before = db_state()
    for call in (
        lambda: check_create_drafts(member, drafts=[fields()], acting_user=admin),
        lambda: do_create_drafts(member, drafts=[checked], acting_user=admin),
        lambda: check_edit_draft(draft, fields=fields(), acting_user=admin),
        lambda: do_edit_draft(draft, new=checked, acting_user=admin),
        lambda: check_delete_draft(draft, acting_user=admin),
        lambda: do_delete_draft(draft, acting_user=admin),
        lambda: do_delete_all_drafts(member, acting_user=admin),
    ):
        # In a savepoint of the test's own: a do_* joining the caller's transaction dooms it.
        with pytest.raises(ValueError, match="cannot act for"), transaction.atomic():
            call()
    assert db_state() == before


def test_the_server_may_act(member):
    [draft] = make_drafts(member, fields(content="one"))
    check_edit_draft(draft, fields=fields(content="two"), acting_user=None)
    assert Draft.objects.get(id=draft.id).content == "two"
    check_delete_draft(draft, acting_user=None)
    assert not Draft.objects.filter(id=draft.id).exists()


def test_a_draft_deleted_meanwhile_is_not_edited_back(member, admin, owner):
    [draft] = make_drafts(member, fields(content="one"))
    found = access_draft_by_id(member, draft.id)
    Draft.objects.filter(id=draft.id).delete()  # another request deleted it
    groups = DirectMessageGroup.objects.count()
    with transaction.atomic():
        with pytest.raises(DraftDoesNotExistError):
            do_edit_draft(found, new=check_draft(member, fields("private", [admin.id, owner.id])), acting_user=member)
        # Refused in a savepoint: the caller's transaction goes on, without what the edit made.
        assert Draft.objects.filter(user=member).count() == 0
    assert DirectMessageGroup.objects.count() == groups
    with pytest.raises(DraftDoesNotExistError):
        do_delete_draft(found, acting_user=member)


def test_no_event_for_no_drafts(capture_events, member):
    with capture_events(member, event_types=["drafts"]) as received:
        assert do_create_drafts(member, drafts=[], acting_user=member) == []
    assert received[member.id] == []


# --- the settings hook ----------------------------------------------------------------------------


def test_turning_synchronization_off_deletes_the_users_drafts_silently(capture_events, member, admin):
    make_drafts(member, fields(content="one"), fields(content="two"))
    [kept] = make_drafts(admin, fields(content="the administrator's"))
    # As the settings action calls it: in its transaction, after the change.
    with capture_events(member, event_types=["drafts"]) as received, transaction.atomic():
        member.enable_drafts_synchronization = False
        member.save(update_fields=["enable_drafts_synchronization"])
        user_settings_changed.call(member, {"enable_drafts_synchronization": False})
    assert not Draft.objects.filter(user=member).exists()
    assert list(Draft.objects.values_list("id", flat=True)) == [kept.id]
    assert received[member.id] == []  # clients keep their local copies


@pytest.mark.parametrize(
    "changed",
    [{"enable_drafts_synchronization": True}, {"twenty_four_hour_time": False}, {}],
    ids=["turned on", "another setting", "nothing"],
)
def test_other_setting_changes_keep_the_drafts(member, changed):
    make_drafts(member, fields())
    user_settings_changed.call(member, changed)
    assert Draft.objects.filter(user=member).count() == 1


def test_delete_all_says_how_many(member):
    make_drafts(member, fields(), fields())
    assert do_delete_all_drafts(member, acting_user=None) == 2
    assert do_delete_all_drafts(member, acting_user=None) == 0
