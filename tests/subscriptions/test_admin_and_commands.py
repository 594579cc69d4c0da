"""Channels in the Django admin (changes go through the actions) and the operator commands
create_stream and add_users_to_streams."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.subscriptions.actions.channels import do_deactivate_stream
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.users.models import Role
from tests.api import ApiClient, assert_success
from tests.factories import UserFactory

CHANNEL_EVENTS = ["stream", "subscription"]


def action(staff, model_path: str, name: str, ids: list[int]):
    return staff.post(f"/admin/{model_path}/", {"action": name, "_selected_action": ids, "confirmed": "yes"})


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


# --- admin pages -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/admin/subscriptions/stream/",
        "/admin/subscriptions/stream/?q=design&invite_only__exact=0",
        "/admin/subscriptions/subscription/",
        "/admin/subscriptions/subscription/?q=design&active__exact=1",
        "/admin/subscriptions/usertopic/",
    ],
)
def test_admin_list_pages_load(staff, member, make_stream, path):
    stream = make_stream("design", member)
    UserTopic.objects.create(user=member, stream=stream, topic_name="lunch", visibility_policy=1)
    response = staff.get(path)
    assert response.status_code == 200
    assert "design" in response.content.decode()


def test_admin_channel_list_counts_active_subscribers(staff, member, admin, moderator, make_stream):
    make_stream("design", member, admin, moderator)
    assert_success(ApiClient(admin).delete("/users/me/subscriptions", {"subscriptions": ["design"]}))
    page = staff.get("/admin/subscriptions/stream/?o=4").content.decode()
    assert '<td class="field-subscriber_count">2</td>' in page


def test_admin_channel_change_page_loads(staff, member, make_stream):
    stream = make_stream("design", member, description="the **design** channel")
    response = staff.get(f"/admin/subscriptions/stream/{stream.id}/change/")
    assert response.status_code == 200
    assert "the **design** channel" in response.content.decode()
    assert "Change channel" in response.content.decode()  # a channel, as everywhere else (not a "stream")


def test_admin_has_no_add_or_delete_for_channels_and_subscriptions(staff, member, make_stream):
    stream = make_stream("design", member)
    sub = Subscription.objects.get(user=member)
    assert staff.get("/admin/subscriptions/stream/add/").status_code == 403
    assert staff.get(f"/admin/subscriptions/stream/{stream.id}/delete/").status_code == 403
    assert staff.get("/admin/subscriptions/subscription/add/").status_code == 403
    assert staff.get(f"/admin/subscriptions/subscription/{sub.id}/delete/").status_code == 403
    assert Stream.objects.filter(id=stream.id).exists()


def test_admin_rename_and_describe_go_through_the_actions(staff, member, make_stream, capture_events):
    stream = make_stream("design", member)
    url = f"/admin/subscriptions/stream/{stream.id}/change/"
    with capture_events(member, event_types=CHANNEL_EVENTS) as events:
        response = staff.post(url, {"name": "  studio  ", "description": "one\ntwo *three*"})
    assert response.status_code == 302, response.content.decode()[:2000]
    stream.refresh_from_db()
    assert (stream.name, stream.description) == ("studio", "one two *three*")
    assert stream.rendered_description == "<p>one two <em>three</em></p>"
    update = {"type": "stream", "op": "update", "stream_id": stream.id}
    assert events[member.id] == [
        {
            **update, "name": "design", "property": "description", "value": "one two *three*",
            "rendered_description": "<p>one two <em>three</em></p>",
        },
        {**update, "name": "design", "property": "name", "value": "studio"},
    ]  # fmt: skip


def test_admin_case_only_rename(staff, member, make_stream):
    stream = make_stream("design", member)
    response = staff.post(f"/admin/subscriptions/stream/{stream.id}/change/", {"name": "Design", "description": ""})
    assert response.status_code == 302
    stream.refresh_from_db()
    assert stream.name == "Design"


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("LOBBY", "Channel &#x27;LOBBY&#x27; already exists"),
        ("a" * 61, "Ensure this value has at most 60 characters"),
        ("bad\x07name", "Invalid character in channel name, at position 4."),
    ],
)
def test_admin_rename_refuses_invalid_names(staff, member, make_stream, name, error):
    stream = make_stream("design", member)
    make_stream("lobby", member)
    response = staff.post(f"/admin/subscriptions/stream/{stream.id}/change/", {"name": name, "description": ""})
    assert response.status_code == 200
    assert error in response.content.decode()
    stream.refresh_from_db()
    assert stream.name == "design"


def test_admin_rename_to_name_of_other_organization(staff, member, make_stream, other_realm):
    stream = make_stream("design", member)
    make_stream("lobby", in_realm=other_realm)
    response = staff.post(f"/admin/subscriptions/stream/{stream.id}/change/", {"name": "lobby", "description": ""})
    assert response.status_code == 302
    stream.refresh_from_db()
    assert stream.name == "lobby"


def test_admin_archive_action(staff, member, make_stream, capture_events):
    design = make_stream("design", member)
    lobby = make_stream("lobby", member)
    with capture_events(member, event_types=CHANNEL_EVENTS) as events:
        response = action(staff, "subscriptions/stream", "archive", [design.id])
    assert response.status_code == 302
    assert [(e["type"], e["op"], e["stream_ids"]) for e in events[member.id]] == [("stream", "delete", [design.id])]
    design.refresh_from_db()
    lobby.refresh_from_db()
    assert (design.deactivated, lobby.deactivated) == (True, False)
    assert Subscription.objects.get(user=member, stream=design).active  # archived, not emptied
    assert [s["name"] for s in assert_success(ApiClient(member).get("/streams"))["streams"]] == ["lobby"]
    assert "Archived 1 channel(s)." in staff.get("/admin/subscriptions/stream/").content.decode()


def test_admin_unarchive_action(staff, member, make_stream, capture_events):
    design = make_stream("design", member)
    do_deactivate_stream(design, acting_user=None)
    with capture_events(member, event_types=CHANNEL_EVENTS) as events:
        response = action(staff, "subscriptions/stream", "unarchive", [design.id])
    assert response.status_code == 302
    assert [(e["type"], e["op"]) for e in events[member.id]] == [("stream", "create"), ("subscription", "add")]
    design.refresh_from_db()
    assert design.deactivated is False
    assert [s["name"] for s in assert_success(ApiClient(member).get("/streams"))["streams"]] == ["design"]
    assert "Unarchived 1 channel(s)." in staff.get("/admin/subscriptions/stream/").content.decode()


def test_admin_unarchive_action_says_why_it_cannot(staff, member, make_stream):
    secret = make_stream("secret", private=True)
    do_deactivate_stream(secret, acting_user=None)
    action(staff, "subscriptions/stream", "unarchive", [secret.id])
    page = staff.get("/admin/subscriptions/stream/").content.decode()
    assert "Secret: Channel is private and have no subscribers" in page  # the admin capitalizes it
    assert "Unarchived 0 channel(s)." in page
    secret.refresh_from_db()
    assert secret.deactivated is True


def test_admin_unsubscribe_action(staff, member, admin, make_stream, capture_events):
    stream = make_stream("design", member, admin)
    sub = Subscription.objects.get(user=member, stream=stream)
    with capture_events(member, event_types=CHANNEL_EVENTS) as events:
        response = action(staff, "subscriptions/subscription", "unsubscribe", [sub.id])
    assert response.status_code == 302
    assert events[member.id] == [
        {"type": "subscription", "op": "remove", "subscriptions": [{"stream_id": stream.id, "name": "design"}]}
    ]
    sub.refresh_from_db()
    assert sub.active is False
    assert Subscription.objects.get(user=admin, stream=stream).active is True
    assert assert_success(ApiClient(member).get("/users/me/subscriptions"))["subscriptions"] == []
    assert "Removed 1 subscription(s)." in staff.get("/admin/subscriptions/subscription/").content.decode()


def test_admin_pages_need_staff(member, make_stream):
    make_stream("design", member)
    client = Client()
    client.force_login(member)
    response = client.get("/admin/subscriptions/stream/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


# --- manage.py create_stream ----------------------------------------------------------------------


def test_create_stream_command(realm, member):
    out = run("create_stream", "  announcements  ", "--realm", "", "--description", "News\nonly")
    stream = Stream.objects.get(realm=realm)
    assert out == f"Created channel 'announcements' (id {stream.id}) in {realm.url}\n"
    assert (stream.name, stream.description, stream.invite_only) == ("announcements", "News only", False)
    assert stream.creator_id is None
    assert not Subscription.objects.exists()
    assert [s["name"] for s in assert_success(ApiClient(member).get("/streams"))["streams"]] == ["announcements"]


def test_create_stream_command_private_json(realm, other_realm):
    out = json.loads(run("create_stream", "secret", "--realm", "zephyr", "--private", "--json"))
    stream = Stream.objects.get(id=out["stream_id"])
    assert out == {"stream_id": stream.id, "name": "secret", "realm": "zephyr"}
    assert (stream.realm_id, stream.invite_only, stream.history_public_to_subscribers) == (other_realm.id, True, False)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["", "--realm", ""], "Channel name can't be empty."),
        (["x" * 61, "--realm", ""], "Channel name too long (limit: 60 characters)."),
        (["tab\there", "--realm", ""], "Invalid character in channel name, at position 4."),
        (["DESIGN", "--realm", ""], "Channel 'DESIGN' already exists"),
        (["new", "--realm", "", "--description", "d" * 1025], "Channel description too long (limit: 1024 characters)."),
        (["new", "--realm", "nowhere"], "There is no organization with string_id 'nowhere' (see list_realms)."),
    ],
)
def test_create_stream_command_refusals(realm, make_stream, args, error):
    make_stream("design")
    with pytest.raises(CommandError) as raised:
        run("create_stream", *args)
    assert str(raised.value) == error
    assert list(Stream.objects.values_list("name", flat=True)) == ["design"]


# --- manage.py add_users_to_streams ---------------------------------------------------------------


def test_add_users_to_streams_command(realm, member, admin, make_stream):
    design = make_stream("design", admin)
    lobby = make_stream("lobby")
    out = run(
        "add_users_to_streams", "--realm", "", "-s", "design, LOBBY", "-u", f"{member.delivery_email},ADMIN@example.com"
    )
    assert out.splitlines() == [
        f"{member.delivery_email} subscribed to design",
        f"{member.delivery_email} subscribed to lobby",
        f"{admin.delivery_email} subscribed to lobby",
        f"{admin.delivery_email} was already subscribed to design",
    ]
    for user in (member, admin):
        for stream in (design, lobby):
            assert Subscription.objects.get(user=user, stream=stream).active


def test_add_users_to_streams_all_users(realm, member, admin, guest, bot, make_stream):
    """Bots too, but not the server's own (the newcomer QA pass: the Welcome Bot was subscribed)."""
    design = make_stream("design")
    inactive = UserFactory(realm=realm, role=Role.MEMBER, is_active=False)
    system_bot = do_create_notification_bot(realm)
    run("add_users_to_streams", "--realm", "", "--streams", "design", "--all-users")
    subscribed = set(Subscription.objects.filter(stream=design, active=True).values_list("user_id", flat=True))
    assert subscribed == {member.id, admin.id, guest.id, bot.id}
    assert not {inactive.id, system_bot.id} & subscribed


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["-s", "design,nope", "-a"], "No such channel: nope (see create_stream)."),
        (["-s", "archived", "-a"], "No such channel: archived (see create_stream)."),
        (
            ["-s", "design", "-u", "member@example.com,ghost@example.com"],
            "No active user with email: ghost@example.com",
        ),
        (["-s", "design", "-u", "zed@elsewhere.example"], "No active user with email: zed@elsewhere.example"),
        # (the operator QA pass: these did nothing, and said nothing)
        (["-s", " , ", "-a"], "--streams names no channel."),
        (["-s", "design", "-u", ""], "--users names nobody (--all-users is everyone)."),
    ],
)
def test_add_users_to_streams_command_refusals(realm, member, make_stream, other_realm, args, error):
    make_stream("design")
    do_deactivate_stream(make_stream("archived"), acting_user=None)
    UserFactory(realm=other_realm, delivery_email="zed@elsewhere.example")
    with pytest.raises(CommandError) as raised:
        run("add_users_to_streams", "--realm", "", *args)
    assert str(raised.value) == error
    assert not Subscription.objects.exists()


def test_add_users_to_streams_needs_users_or_all(realm, make_stream):
    make_stream("design")
    with pytest.raises(CommandError):
        run("add_users_to_streams", "--realm", "", "-s", "design")
