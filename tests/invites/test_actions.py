"""The invitation actions' rules: who a link's creator is, lifetimes, the audit log, revocation (by
request, meanwhile, and when the creator is deactivated), finding a link by its key, and the
organization's setting of who may create links."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from apps.core.errors import JsonableError
from apps.groups.actions.groups import check_deactivate_user_group
from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.models import UserGroup
from apps.invites.actions.invites import (
    do_create_multiuse_invite,
    do_revoke_invites_created_by,
    do_revoke_multiuse_invite,
    generate_invite_key,
)
from apps.invites.errors import InvitationAlreadyRevokedError
from apps.invites.models import MultiuseInvite
from apps.invites.selectors import can_create_multiuse_invite, invite_by_key, usable_invite_by_key
from apps.realms.models import AuditLogEventType, Realm, RealmAuditLog
from apps.users.actions.create_realm import do_create_realm_with_owner
from apps.users.models import Role, User
from tests.api import assert_error, assert_success
from tests.factories import create_stream
from tests.invites.conftest import api, create_link, invite_of


def audit_entries(event_type) -> list[RealmAuditLog]:
    return list(RealmAuditLog.objects.filter(event_type=event_type).order_by("id"))


def test_operators_invitations_have_no_creator(realm, admin, make_stream, capture_events, member):
    design = make_stream("design")
    with capture_events(admin, member) as received:
        invite = do_create_multiuse_invite(realm, invited_as=Role.GUEST, streams=[design], acting_user=None)
    assert invite.referred_by is None
    assert received == {admin.id: [{"type": "invites_changed"}], member.id: []}
    [entry] = audit_entries(AuditLogEventType.INVITATION_CREATED)
    assert entry.acting_user is None
    assert entry.extra_data == {
        "invite_id": invite.id,
        "invited_as": Role.GUEST,
        "expiry_date": invite.expiry_date.isoformat(),
        "stream_ids": [design.id],
        "group_ids": [],
    }


def test_staff_of_another_organization_is_no_creator(realm, foreign_user):
    invite = do_create_multiuse_invite(realm, acting_user=foreign_user)
    assert invite.referred_by is None
    assert audit_entries(AuditLogEventType.INVITATION_CREATED)[0].acting_user == foreign_user


@pytest.mark.parametrize(
    ("minutes", "text", "msg"),
    [
        (0, None, "An invitation must be valid for at least one minute."),
        (10 * 365 * 24 * 60 + 1, None, "An invitation may be valid for at most 5256000 minutes"),
        (60, "x" * 8001, "welcome_message_custom_text is too long (limit: 8000 characters)"),
    ],
)
def test_out_of_bounds_refused_before_writing(realm, minutes, text, msg):
    with pytest.raises(JsonableError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        do_create_multiuse_invite(realm, expires_in_minutes=minutes, welcome_message_custom_text=text, acting_user=None)
    assert not MultiuseInvite.objects.exists()


def test_channels_of_another_organization_are_a_programming_error(realm, other_realm):
    with pytest.raises(ValueError, match="own organization"):
        do_create_multiuse_invite(realm, streams=[create_stream(other_realm, "theirs")], acting_user=None)


def test_keys_are_160_random_bits():
    keys = {generate_invite_key() for _ in range(100)}
    assert len(keys) == 100
    assert all(len(key) == 32 and set(key) <= set("abcdefghijklmnopqrstuvwxyz234567") for key in keys)


def test_a_link_is_found_by_its_exact_key_in_its_organization(realm, other_realm):
    invite = do_create_multiuse_invite(realm, acting_user=None)
    assert invite_by_key(realm, invite.key) == invite
    assert invite_by_key(other_realm, invite.key) is None
    wrong = invite.key[:-1] + ("a" if invite.key[-1] != "a" else "b")
    for key in (wrong, invite.key.upper(), invite.key + "a", invite.key_digest, "", "ü" * 32):
        assert invite_by_key(realm, key) is None


def test_revoked_and_expired_links_are_unusable(realm):
    revoked = do_create_multiuse_invite(realm, acting_user=None)
    do_revoke_multiuse_invite(revoked, acting_user=None)
    expired = do_create_multiuse_invite(realm, expires_in_minutes=1, acting_user=None)
    MultiuseInvite.objects.filter(id=expired.id).update(expiry_date=timezone.now() - timedelta(seconds=1))
    forever = do_create_multiuse_invite(realm, expires_in_minutes=None, acting_user=None)
    assert usable_invite_by_key(realm, revoked.key) is None
    assert invite_by_key(realm, revoked.key) == revoked
    assert usable_invite_by_key(realm, expired.key) is None
    assert usable_invite_by_key(realm, forever.key) == forever


def test_revoking_twice_is_refused_and_the_caller_carries_on(realm, admin):
    invite = do_create_multiuse_invite(realm, acting_user=admin)
    stale = MultiuseInvite.objects.get(id=invite.id)
    with transaction.atomic():
        do_revoke_multiuse_invite(invite, acting_user=admin)
        with pytest.raises(InvitationAlreadyRevokedError):
            do_revoke_multiuse_invite(stale, acting_user=admin)  # revoked meanwhile
        assert MultiuseInvite.objects.filter(revoked=True).count() == 1  # the transaction is still usable
    [entry] = audit_entries(AuditLogEventType.INVITATION_REVOKED)
    assert (entry.acting_user, entry.extra_data) == (admin, {"invite_id": invite.id})


def test_deactivating_a_creator_revokes_their_open_links(admin, owner, member, realm, capture_events):
    do_change_realm_permission_group_setting(
        realm, "create_multiuse_invite_group", UserGroup.objects.get(realm=realm, name="role:members").id,
        acting_user=None,
    )  # fmt: skip
    theirs = [invite_of(create_link(member)), invite_of(create_link(member, invite_expires_in_minutes="null"))]
    kept = invite_of(create_link(admin))
    with capture_events(admin, owner) as received:
        assert_success(api(owner).delete(f"/users/{member.id}"))
    assert {i.id for i in MultiuseInvite.objects.filter(revoked=True)} == {i.id for i in theirs}
    assert not MultiuseInvite.objects.get(id=kept.id).revoked
    assert [entry.extra_data["invite_id"] for entry in audit_entries(AuditLogEventType.INVITATION_REVOKED)] == [
        i.id for i in theirs
    ]
    assert {"type": "invites_changed"} in received[admin.id]
    assert do_revoke_invites_created_by([member], acting_user=None) == 0  # nothing left to revoke


def test_who_may_create_links_follows_the_setting(realm, admin, member, moderator, make_group, owner):
    team = make_group(owner, "inviters", members=[member])
    assert [can_create_multiuse_invite(u) for u in (admin, member, moderator)] == [True, False, False]
    do_change_realm_permission_group_setting(realm, "create_multiuse_invite_group", team.id, acting_user=owner)
    member.realm.refresh_from_db()
    admin.realm.refresh_from_db()
    assert [can_create_multiuse_invite(u) for u in (admin, member)] == [False, True]
    assert_success(api(User.objects.get(id=member.id)).post("/invites/multiuse"))
    with pytest.raises(JsonableError) as refused:
        check_deactivate_user_group(team.id, acting_user=owner)
    assert refused.value.data["objections"] == [{"type": "realm", "settings": ["create_multiuse_invite_group"]}]


@pytest.mark.parametrize("group_name", ["role:everyone", "role:internet"])
def test_the_setting_refuses_everyone(realm, group_name):
    group = UserGroup.objects.get(realm=realm, name=group_name)
    with pytest.raises(JsonableError, match=f"'create_multiuse_invite_group' setting cannot be set to '{group_name}'"):
        do_change_realm_permission_group_setting(realm, "create_multiuse_invite_group", group.id, acting_user=None)


def test_guests_never_create_links_whatever_the_setting(realm, guest):
    group = UserGroup.objects.get(realm=realm, name="role:fullmembers")
    do_change_realm_permission_group_setting(realm, "create_multiuse_invite_group", group.id, acting_user=None)
    assert not can_create_multiuse_invite(guest)
    assert_error(api(guest).post("/invites/multiuse"), 400, "BAD_REQUEST", "Not allowed for guest users")


def test_new_organizations_let_administrators_create_links(db):
    realm, owner = do_create_realm_with_owner("new", "New", owner_email="o@new.example", owner_full_name="Olga",
                                              acting_user=None)  # fmt: skip
    realm = Realm.objects.get(id=realm.id)
    assert realm.create_multiuse_invite_group.name == "role:administrators"
    assert can_create_multiuse_invite(User.objects.get(id=owner.id))
