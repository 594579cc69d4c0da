"""POST /invites/multiuse, GET /invites, DELETE /invites/multiuse/{id}: Zulip's contract, its
errors (and that they change nothing), and the invites_changed event."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.groups.actions.groups import check_deactivate_user_group
from apps.invites.models import MultiuseInvite
from apps.invites.serializers import MAX_INVITE_EXPIRES_IN_MINUTES
from apps.subscriptions.actions.channels import do_deactivate_stream
from apps.users.actions.roles import do_change_user_role
from apps.users.models import Role
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import UserFactory, create_group, create_stream
from tests.invites.conftest import LINK_RE, api, create_link, db_state, invite_of, let_create_links, listed

INVITE_PERMISSION_ERRORS = {
    Role.OWNER: ("UNAUTHORIZED_PRINCIPAL", "Must be an organization owner"),
    Role.ADMINISTRATOR: ("BAD_REQUEST", "Must be an organization administrator"),
    Role.MODERATOR: ("BAD_REQUEST", "Must be an organization administrator"),
}


def refused(response, msg: str, before: dict, *, code: str = "BAD_REQUEST", status: int = 400) -> None:
    assert_error(response, status, code, msg)
    assert db_state() == before


# --- creating a link ------------------------------------------------------------------------------


def test_administrator_creates_a_link_with_zulips_defaults(admin):
    before = timezone.now()
    link = create_link(admin)
    match = LINK_RE.fullmatch(link)
    assert match["realm_url"] == "http://testserver"
    invite = invite_of(link)
    assert (invite.realm_id, invite.referred_by_id, invite.invited_as) == (admin.realm_id, admin.id, Role.MEMBER)
    assert invite.expiry_date - before >= timedelta(minutes=14400)
    assert invite.expiry_date - timezone.now() <= timedelta(minutes=14400)
    assert (invite.welcome_message_custom_text, invite.include_realm_default_subscriptions) == (None, False)
    assert list(invite.streams.all()) == list(invite.groups.all()) == []


def test_keys_are_long_random_and_stored_with_their_digest(admin):
    keys = {LINK_RE.fullmatch(create_link(admin))["key"] for _ in range(5)}
    assert len(keys) == 5  # 32 base32 characters: 160 bits
    invite = MultiuseInvite.objects.get(key=sorted(keys)[0])
    assert len(invite.key_digest) == 64
    assert invite.key not in invite.key_digest


def test_link_of_a_subdomain_organization(other_realm):
    boss = UserFactory(realm=other_realm, role=Role.OWNER)
    assert LINK_RE.fullmatch(create_link(boss))["realm_url"] == "http://zephyr.testserver"


def test_what_the_link_gives(admin, make_stream, make_group, member):
    design = make_stream("design", admin)
    secret = make_stream("secret", admin, private=True)
    team = make_group(admin, "team", members=[member])
    link = create_link(
        admin,
        invite_as=Role.MODERATOR,
        invite_expires_in_minutes=60,
        stream_ids=[secret.id, design.id, secret.id],
        group_ids=[team.id],
        include_realm_default_subscriptions=True,
        welcome_message_custom_text="Read #**design** first.",
    )
    invite = invite_of(link)
    assert invite.invited_as == Role.MODERATOR
    assert timedelta(minutes=59) < invite.expiry_date - timezone.now() <= timedelta(minutes=60)
    assert sorted(invite.streams.values_list("id", flat=True)) == sorted([design.id, secret.id])
    assert list(invite.groups.values_list("id", flat=True)) == [team.id]
    assert invite.include_realm_default_subscriptions is True
    assert invite.welcome_message_custom_text == "Read #**design** first."


def test_null_lifetime_never_expires(admin):
    invite = invite_of(create_link(admin, invite_expires_in_minutes="null"))  # JSON null, as clients send None
    assert invite.expiry_date is None
    assert listed(admin)[0]["expiry_date"] is None


@pytest.mark.parametrize(
    ("value", "msg"),
    [
        (0, "invite_expires_in_minutes is too small"),
        (-10, "invite_expires_in_minutes is too small"),
        (MAX_INVITE_EXPIRES_IN_MINUTES + 1, "invite_expires_in_minutes is too large"),
        (10**30, "invite_expires_in_minutes is too large"),
        ("soon", "invite_expires_in_minutes is not valid JSON"),
        (1.5, "invite_expires_in_minutes is not an integer"),
    ],
)
def test_lifetimes_refused(admin, value, msg):
    before = db_state()
    refused(api(admin).post("/invites/multiuse", {"invite_expires_in_minutes": value}), msg, before,
            code="REQUEST_VARIABLE_INVALID")  # fmt: skip


def test_longest_lifetime_accepted(admin):
    invite = invite_of(create_link(admin, invite_expires_in_minutes=MAX_INVITE_EXPIRES_IN_MINUTES))
    assert invite.expiry_date - timezone.now() > timedelta(days=3649)


@pytest.mark.parametrize(
    ("value", "msg"),
    [(0, "Invalid invite_as"), (500, "Invalid invite_as"), (450, "Invalid invite_as"),
     (True, "invite_as is not an integer"), ('"400"', "invite_as is not an integer")],
)  # fmt: skip
def test_unknown_roles_refused(admin, value, msg):
    before = db_state()
    refused(api(admin).post("/invites/multiuse", {"invite_as": value}), msg, before, code="REQUEST_VARIABLE_INVALID")


@pytest.mark.parametrize("role", [Role.MEMBER, Role.GUEST])
def test_members_invite_members_and_guests_when_allowed(members_create_links, member, role):
    invite = invite_of(create_link(member, invite_as=role))
    assert (invite.invited_as, invite.referred_by_id) == (role, member.id)


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMINISTRATOR, Role.MODERATOR])
def test_members_never_invite_above_them(members_create_links, member, moderator, role):
    code, msg = INVITE_PERMISSION_ERRORS[role]
    before = db_state()
    for inviter in (member, moderator):
        refused(api(inviter).post("/invites/multiuse", {"invite_as": role}), msg, before, code=code)


def test_only_owners_invite_owners(admin, owner):
    before = db_state()
    refused(api(admin).post("/invites/multiuse", {"invite_as": Role.OWNER}), "Must be an organization owner", before,
            code="UNAUTHORIZED_PRINCIPAL")  # fmt: skip
    assert invite_of(create_link(admin, invite_as=Role.ADMINISTRATOR)).invited_as == Role.ADMINISTRATOR
    assert invite_of(create_link(owner, invite_as=Role.OWNER)).invited_as == Role.OWNER


def test_administrators_only_by_default(member, moderator):
    before = db_state()
    for user in (member, moderator):
        refused(api(user).post("/invites/multiuse"), "Insufficient permission", before)


def test_nobody_may_when_the_setting_says_nobody(admin, owner, realm):
    let_create_links(realm, "role:nobody")
    before = db_state()
    for user in (admin, owner):
        refused(api(user).post("/invites/multiuse"), "Insufficient permission", before)


def test_guests_bots_and_strangers_are_refused(guest, bot, members_create_links):
    before = db_state()
    refused(api(guest).post("/invites/multiuse"), "Not allowed for guest users", before)
    refused(api(bot).post("/invites/multiuse"), "This endpoint does not accept bot requests.", before)
    refused(ApiClient().post("/invites/multiuse"), "Not logged in: API authentication or user session required",
            before, code="UNAUTHORIZED", status=401)  # fmt: skip
    for path in ("/invites", "/invites/multiuse/1"):
        method = "get" if path == "/invites" else "delete"
        assert_error(getattr(api(guest), method)(path), 400, "BAD_REQUEST", "Not allowed for guest users")
        assert_error(getattr(api(bot), method)(path), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.")


# --- channels and groups ---------------------------------------------------------------------------


def test_channels_the_inviter_cannot_use_are_invalid(admin, member, make_stream, other_realm, members_create_links):
    public = make_stream("public", admin)
    theirs = make_stream("theirs", admin, private=True)  # the member cannot read it
    archived = make_stream("archived", admin)
    do_deactivate_stream(archived, acting_user=admin)
    foreign = create_stream(other_realm, "foreign")
    before = db_state()
    for stream_id in (theirs.id, archived.id, foreign.id, 10**9, 0, -1, 2**70):
        response = api(member).post("/invites/multiuse", {"stream_ids": [public.id, stream_id]})
        refused(response, f"Invalid channel ID {stream_id}. No invites were sent.", before)
    refused(api(member).post("/invites/multiuse", {"stream_ids": ["public"]}), "stream_ids[0] is not an integer",
            before, code="REQUEST_VARIABLE_INVALID")  # fmt: skip
    assert invite_of(create_link(member, stream_ids=[public.id])).streams.get() == public


def test_private_channels_need_content_access(admin, make_stream):
    mine = make_stream("mine", admin, private=True)
    not_mine = make_stream("not-mine", private=True)
    assert invite_of(create_link(admin, stream_ids=[mine.id])).streams.get() == mine
    before = db_state()
    response = api(admin).post("/invites/multiuse", {"stream_ids": [not_mine.id]})
    refused(response, f"Invalid channel ID {not_mine.id}. No invites were sent.", before)


def test_groups_need_the_permission_to_add_members(
    admin, member, make_group, sys_groups, other_realm, foreign_user, members_create_links
):
    open_team = make_group(admin, "open", settings={"can_add_members_group": sys_groups["role:members"].id})
    closed = make_group(admin, "closed")  # only its creator and administrators add members
    gone = make_group(admin, "gone")
    check_deactivate_user_group(gone.id, acting_user=admin)
    foreign = create_group(foreign_user, "foreign")
    before = db_state()
    cases = [
        (closed.id, "Insufficient permission"),
        (sys_groups["role:members"].id, "Insufficient permission"),
        (gone.id, "User group is deactivated."),
        (foreign.id, "Invalid user group"),
        (10**9, "Invalid user group"),
        (-3, "Invalid user group"),
    ]
    for group_id, msg in cases:
        refused(api(member).post("/invites/multiuse", {"group_ids": [open_team.id, group_id]}), msg, before)
    assert invite_of(create_link(member, group_ids=[open_team.id])).groups.get() == open_team
    assert invite_of(create_link(admin, group_ids=[closed.id, open_team.id])).groups.count() == 2


# --- the custom welcome text -------------------------------------------------------------------------


def test_welcome_text_up_to_8000_code_points(admin):
    assert invite_of(create_link(admin, welcome_message_custom_text="😀" * 8000)).welcome_message_custom_text == (
        "😀" * 8000
    )
    assert invite_of(create_link(admin, welcome_message_custom_text="")).welcome_message_custom_text == ""
    before = db_state()
    refused(api(admin).post("/invites/multiuse", {"welcome_message_custom_text": "x" * 8001}),
            "welcome_message_custom_text is too long (limit: 8000 characters)", before,
            code="REQUEST_VARIABLE_INVALID")  # fmt: skip
    refused(api(admin).post("/invites/multiuse", {"welcome_message_custom_text": "a\x00b"}),
            "welcome_message_custom_text must not contain null bytes", before,
            code="REQUEST_VARIABLE_INVALID")  # fmt: skip


def test_only_administrators_write_welcome_texts(member, members_create_links):
    before = db_state()
    response = api(member).post("/invites/multiuse", {"welcome_message_custom_text": "Hi!"})
    refused(response, "Must be an organization administrator", before)
    assert invite_of(create_link(member)).welcome_message_custom_text is None


def test_unknown_parameters_are_listed(admin):
    body = assert_success(api(admin).post("/invites/multiuse", {"invitee_emails": "a@example.com"}))
    assert body["ignored_parameters_unsupported"] == ["invitee_emails"]


# --- listing ---------------------------------------------------------------------------------------


def test_listing_shows_zulips_invite_objects(admin, make_stream, make_group):
    design = make_stream("design", admin)
    team = make_group(admin, "team")
    link = create_link(admin, invite_as=Role.GUEST, stream_ids=[design.id], group_ids=[team.id])
    invite = invite_of(link)
    assert listed(admin) == [
        {
            "id": invite.id,
            "invited_by_user_id": admin.id,
            "invited": int(invite.created.timestamp()),
            "expiry_date": int(invite.expiry_date.timestamp()),
            "invited_as": Role.GUEST,
            "link_url": link,
            "is_multiuse": True,
            "stream_ids": [design.id],
            "group_ids": [team.id],
        }
    ]


def test_administrators_see_all_others_their_own(admin, owner, member, moderator, members_create_links, foreign_user):
    mine = invite_of(create_link(member)).id
    moderators = invite_of(create_link(moderator)).id
    admins = invite_of(create_link(admin)).id
    let_create_links(foreign_user.realm, "role:owners")
    create_link(foreign_user)
    assert [i["id"] for i in listed(owner)] == [mine, moderators, admins]
    assert [i["id"] for i in listed(admin)] == [mine, moderators, admins]
    assert [i["id"] for i in listed(member)] == [mine]
    assert [i["id"] for i in listed(moderator)] == [moderators]


def test_revoked_and_expired_links_are_not_listed(admin):
    revoked = invite_of(create_link(admin))
    assert_success(api(admin).delete(f"/invites/multiuse/{revoked.id}"))
    expired = invite_of(create_link(admin, invite_expires_in_minutes=1))
    MultiuseInvite.objects.filter(id=expired.id).update(expiry_date=timezone.now() - timedelta(seconds=1))
    kept = invite_of(create_link(admin)).id
    assert [i["id"] for i in listed(admin)] == [kept]


def test_listing_queries_do_not_grow(admin, make_stream, django_assert_max_num_queries):
    design = make_stream("design", admin)
    for _ in range(3):
        create_link(admin, stream_ids=[design.id])
    with django_assert_max_num_queries(12) as counted:
        listed(admin)
    few = len(counted.captured_queries)
    for _ in range(10):
        create_link(admin, stream_ids=[design.id])
    with django_assert_max_num_queries(few):
        assert len(listed(admin)) == 13


# --- revoking --------------------------------------------------------------------------------------


def test_creators_revoke_their_own(member, members_create_links):
    invite = invite_of(create_link(member))
    assert_success(api(member).delete(f"/invites/multiuse/{invite.id}"))
    invite.refresh_from_db()
    assert invite.revoked
    before = db_state()
    refused(api(member).delete(f"/invites/multiuse/{invite.id}"), "Invitation has already been revoked", before)


def test_others_invitations_need_the_role(admin, owner, member, moderator, members_create_links):
    members = invite_of(create_link(member))
    owners = invite_of(create_link(owner, invite_as=Role.OWNER))
    before = db_state()
    refused(api(moderator).delete(f"/invites/multiuse/{members.id}"), "Must be an organization administrator", before)
    refused(api(admin).delete(f"/invites/multiuse/{owners.id}"), "Must be an organization owner", before,
            code="UNAUTHORIZED_PRINCIPAL")  # fmt: skip
    assert_success(api(admin).delete(f"/invites/multiuse/{members.id}"))
    assert_success(api(owner).delete(f"/invites/multiuse/{owners.id}"))
    assert MultiuseInvite.objects.filter(revoked=True).count() == 2


def test_unknown_and_foreign_invitations_do_not_exist(admin, foreign_user):
    let_create_links(foreign_user.realm, "role:owners")
    foreign = invite_of(create_link(foreign_user))
    before = db_state()
    for invite_id in (foreign.id, foreign.id + 1000):
        refused(api(admin).delete(f"/invites/multiuse/{invite_id}"), "No such invitation", before)
    assert_error(api(admin).delete("/invites/multiuse/x"), 404, "BAD_REQUEST", "Not Found")


# --- events ----------------------------------------------------------------------------------------


def test_invites_changed_reaches_administrators_and_the_creator(
    admin, owner, member, moderator, members_create_links, capture_events
):
    with capture_events(admin, owner, member, moderator) as received:
        create_link(member)
    assert received == {
        admin.id: [{"type": "invites_changed"}],
        owner.id: [{"type": "invites_changed"}],
        member.id: [{"type": "invites_changed"}],
        moderator.id: [],
    }
    invite = MultiuseInvite.objects.get()
    with capture_events(admin, member, moderator) as received:
        assert_success(api(admin).delete(f"/invites/multiuse/{invite.id}"))
    assert received == {admin.id: [{"type": "invites_changed"}], member.id: [{"type": "invites_changed"}],
                        moderator.id: []}  # fmt: skip


def test_register_shows_who_may_create_links(member, sys_groups, realm, capture_events):
    state = assert_success(api(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_create_multiuse_invite_group"] == sys_groups["role:administrators"].id
    with capture_events(member, event_types=["realm"]) as received:
        let_create_links(realm, "role:members")
    data = {"create_multiuse_invite_group": sys_groups["role:members"].id}
    assert received[member.id] == [{"type": "realm", "op": "update_dict", "property": "default", "data": data}]


def test_an_administrator_is_not_shown_the_owners_invitations_to_become_owners(owner, admin):
    """The security QA pass: an owner's link, listed to an administrator with its link_url, made them
    a second account as an owner (owners' invitations are controlled by owners alone)."""
    to_owner = invite_of(create_link(owner, invite_as=Role.OWNER)).id
    to_member = invite_of(create_link(owner, invite_as=Role.MEMBER)).id
    assert_success(api(owner).post("/invites", {"invitee_emails": "o@example.org", "stream_ids": [], "invite_as": 100}))
    assert [(i["id"], i["invited_as"]) for i in listed(admin)] == [(to_member, Role.MEMBER)]
    assert {i["id"] for i in listed(owner) if "email" not in i} == {to_owner, to_member}
    assert len(listed(owner)) == 3


def test_someone_given_a_lower_role_no_longer_invites_people_above_it(owner, admin):
    """The security QA pass: a demoted administrator's link still made administrators."""
    as_admin = invite_of(create_link(admin, invite_as=Role.ADMINISTRATOR))
    as_moderator = invite_of(create_link(admin, invite_as=Role.MODERATOR))
    as_member = invite_of(create_link(admin, invite_as=Role.MEMBER))
    params = {"invitee_emails": "a@example.org", "stream_ids": [], "invite_as": Role.ADMINISTRATOR}
    assert_success(api(admin).post("/invites", params))
    assert_success(api(admin).post("/invites", {**params, "invitee_emails": "m@example.org", "invite_as": 400}))
    do_change_user_role(admin, Role.OWNER, acting_user=owner)  # a higher role: nothing revoked
    assert len(listed(owner)) == 5
    do_change_user_role(admin, Role.MODERATOR, acting_user=owner)  # moderators invite members and guests
    for invite in (as_admin, as_moderator, as_member):
        invite.refresh_from_db()
    assert (as_admin.revoked, as_moderator.revoked, as_member.revoked) == (True, True, False)
    assert [(i.get("email"), i["invited_as"]) for i in listed(owner)] == [
        ("m@example.org", Role.MEMBER),
        (None, Role.MEMBER),
    ]
