"""Invitations for operators: `manage.py generate_invite_link` and the Django admin (create, look up,
revoke), both through the actions."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from apps.invites.models import MultiuseInvite
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.subscriptions.actions.channels import do_deactivate_stream
from apps.users.models import Role
from tests.factories import create_stream
from tests.invites.conftest import LINK_RE, invite_of


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


# --- generate_invite_link ---------------------------------------------------------------------------


def test_command_prints_a_link_with_the_defaults(realm):
    out = run("generate_invite_link", "--realm", "")
    intro, link, _ = out.split("\n")
    invite = invite_of(link)
    assert intro.startswith("Invitation to Parley Test (http://testserver) as member, valid until ")
    assert (invite.invited_as, invite.referred_by, invite.realm) == (Role.MEMBER, None, realm)
    assert timedelta(minutes=14399) < invite.expiry_date - timezone.now() <= timedelta(minutes=14400)
    assert RealmAuditLog.objects.get(event_type=AuditLogEventType.INVITATION_CREATED).acting_user is None


def test_command_json_role_channels_and_lifetime(other_realm):
    design = create_stream(other_realm, "Design")
    general = create_stream(other_realm, "general")
    out = json.loads(
        run("generate_invite_link", "--realm", "zephyr", "--as", "guest", "--streams", "design, general,design",
            "--expires-minutes", "30", "--json")
    )  # fmt: skip
    invite = MultiuseInvite.objects.get(id=out["invite_id"])
    assert LINK_RE.fullmatch(out["invite_link"])["realm_url"] == "http://zephyr.testserver"
    assert out == {
        "invite_link": invite.link_url,
        "invite_id": invite.id,
        "realm": "zephyr",
        "invited_as": "guest",
        "expiry_date": invite.expiry_date.isoformat(),
        "stream_ids": sorted([design.id, general.id]),
    }
    assert timedelta(minutes=29) < invite.expiry_date - timezone.now() <= timedelta(minutes=30)


def test_command_never_expires(realm):
    out = json.loads(run("generate_invite_link", "--realm", "", "--never-expires", "--json"))
    assert out["expiry_date"] is None
    assert "never expires" in run("generate_invite_link", "--realm", "", "--never-expires")


@pytest.mark.parametrize(
    ("args", "msg"),
    [
        (["--streams", "nowhere"], "No channel named nowhere in http://testserver"),
        (["--streams", "old"], "No channel named old in http://testserver"),
        (["--streams", "theirs"], "No channel named theirs in http://testserver"),
        (["--expires-minutes", "0"], "An invitation must be valid for at least one minute."),
        (["--realm", "nowhere"], "There is no organization with string_id 'nowhere'"),
    ],
)
def test_command_refusals_change_nothing(realm, other_realm, args, msg):
    do_deactivate_stream(create_stream(realm, "old"), acting_user=None)
    create_stream(other_realm, "theirs")
    with pytest.raises(CommandError, match=msg):
        run("generate_invite_link", "--realm", "", *args)
    assert not MultiuseInvite.objects.exists()


def test_command_refuses_unknown_roles(realm):
    with pytest.raises(CommandError, match="invalid choice: 'boss'"):
        run("generate_invite_link", "--realm", "", "--as", "boss")


# --- the Django admin -------------------------------------------------------------------------------


def add_form(realm, **fields) -> dict:
    return {"realm": realm.id, "invited_as": Role.MEMBER, "expires_in_minutes": "60",
            "welcome_message_custom_text": "", **fields}  # fmt: skip


def test_staff_create_a_link_and_see_it(staff, owner, realm, make_stream, make_group, capture_events):
    design = make_stream("design")
    team = make_group(owner, "team")
    with capture_events(owner) as received:
        response = staff.post(
            "/admin/invites/multiuseinvite/add/",
            add_form(realm, invited_as=Role.GUEST, streams=[design.id], groups=[team.id]),
            follow=True,
        )
    assert response.status_code == 200
    invite = MultiuseInvite.objects.get()
    assert f"Invitation link: {invite.link_url}" in response.content.decode()
    assert (invite.invited_as, invite.referred_by) == (Role.GUEST, owner)  # the staff user is of this organization
    assert (list(invite.streams.all()), list(invite.groups.all())) == ([design], [team])
    assert invite.welcome_message_custom_text is None  # blank: the organization's default
    assert timedelta(minutes=59) < invite.expiry_date - timezone.now() <= timedelta(minutes=60)
    assert received[owner.id] == [{"type": "invites_changed"}]
    page = staff.get(f"/admin/invites/multiuseinvite/{invite.id}/change/").content.decode()
    assert invite.link_url in page
    assert b'name="_save"' not in staff.get(f"/admin/invites/multiuseinvite/{invite.id}/change/").content


def test_the_add_page_picks_the_only_organization(staff, realm):
    """(The newcomer QA pass: saving failed with "This field is required" until it was picked.)"""
    form = staff.get("/admin/invites/multiuseinvite/add/").context["adminform"].form
    assert form.initial["realm"] == realm.id


def test_the_add_page_names_channels_as_channels(staff, realm):
    page = staff.get("/admin/invites/multiuseinvite/add/").content.decode()
    assert '<label for="id_streams">Channels:</label>' in page


def test_the_add_page_lets_staff_pick_among_organizations(staff, realm, other_realm):
    form = staff.get("/admin/invites/multiuseinvite/add/").context["adminform"].form
    assert "realm" not in form.initial


def test_staff_links_of_another_organization_have_no_creator(staff, other_realm):
    response = staff.post("/admin/invites/multiuseinvite/add/", add_form(other_realm, expires_in_minutes=""))
    assert response.status_code == 302
    invite = MultiuseInvite.objects.get()
    assert (invite.realm, invite.referred_by, invite.expiry_date) == (other_realm, None, None)


def test_admin_form_refuses_what_the_organization_does_not_have(staff, realm, other_realm, foreign_user, make_group):
    theirs = create_stream(other_realm, "theirs")
    response = staff.post(
        "/admin/invites/multiuseinvite/add/",
        add_form(realm, streams=[theirs.id], expires_in_minutes="0", welcome_message_custom_text="x" * 8001),
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "Not of the organization" in page
    assert "An invitation must be valid for at least one minute." in page
    assert "welcome_message_custom_text is too long" in page
    assert not MultiuseInvite.objects.exists()


def test_staff_revoke_links(staff, realm, admin, capture_events):
    first = invite_of(run("generate_invite_link", "--realm", "").split("\n")[1])
    second = invite_of(run("generate_invite_link", "--realm", "").split("\n")[1])
    with capture_events(admin) as received:
        response = staff.post(
            "/admin/invites/multiuseinvite/",
            {"action": "revoke", "confirmed": "yes", "_selected_action": [first.id, second.id]},
            follow=True,
        )
    assert "Revoked 2 invitation link(s)." in response.content.decode()
    assert MultiuseInvite.objects.filter(revoked=True).count() == 2
    assert received[admin.id] == [{"type": "invites_changed"}] * 2
    listing = staff.get("/admin/invites/multiuseinvite/").content.decode()
    assert "revoked" in listing


def test_links_are_never_edited_or_deleted(staff, realm):
    invite = invite_of(run("generate_invite_link", "--realm", "").split("\n")[1])
    response = staff.post(f"/admin/invites/multiuseinvite/{invite.id}/change/", {"invited_as": Role.OWNER})
    assert response.status_code == 403
    assert staff.post(f"/admin/invites/multiuseinvite/{invite.id}/delete/", {"post": "yes"}).status_code == 403
    assert MultiuseInvite.objects.get().invited_as == Role.MEMBER


def test_only_staff(member):
    browser = Client()
    browser.force_login(member)
    assert browser.get("/admin/invites/multiuseinvite/").status_code == 302
