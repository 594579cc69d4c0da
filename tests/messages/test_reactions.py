"""POST and DELETE /messages/{id}/reactions: emoji by name or by code and type, checked against the
server's emoji; one reaction per user and emoji; reaction events to everyone who can see the
message; reactions in every message read, one query for a page; refusals change nothing."""

import importlib

import pytest
from django.apps import apps as django_apps
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.messages.emoji import emoji_code, is_unicode_emoji_code, unicode_emoji_code
from apps.messages.models import Reaction
from tests.api import api_for, assert_error, assert_success
from tests.messages.conftest import db_state, get_messages


def react(user, message_id, /, **params):
    return api_for(user).post(f"/messages/{message_id}/reactions", params)


def unreact(user, message_id, **params):
    return api_for(user).delete(f"/messages/{message_id}/reactions", params)


def refused(response_of, msg, code="BAD_REQUEST") -> None:
    before = db_state(), list(Reaction.objects.order_by("id").values())
    assert_error(response_of(), 400, code, msg)
    assert (db_state(), list(Reaction.objects.order_by("id").values())) == before


def reactions_of(user, message_id) -> list[dict]:
    return assert_success(api_for(user).get(f"/messages/{message_id}"))["message"]["reactions"]


@pytest.fixture
def design(make_stream, member, admin, guest):
    return make_stream("design", member, admin, guest)


def test_emoji_data_follows_zulips_codes():
    assert emoji_code("❤️") == "2764"
    assert emoji_code("🇫🇷") == "1f1eb-1f1f7"
    assert unicode_emoji_code("octopus") == "1f419"
    assert unicode_emoji_code("+1") == unicode_emoji_code("thumbs_up") == "1f44d"
    assert unicode_emoji_code("tada") == "1f389"
    assert unicode_emoji_code("heart") == "2764"
    assert not is_unicode_emoji_code("1f44b-1f3fd")  # no skin tones, as in Zulip
    assert not is_unicode_emoji_code("zzzz")
    # Each code point in at least four digits, as Zulip writes them.
    assert emoji_code("©️") == "00a9"
    assert emoji_code("1️⃣") == "0031-20e3"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("smile", "1f642"),
        ("working_on_it", "1f6e0"),
        ("ok", "1f44c"),
        ("like", "1f44d"),
        ("turkey", "1f983"),
        ("one", "0031-20e3"),
        ("copyright", "00a9"),
        ("flag_france", "1f1eb-1f1f7"),
    ],
)
def test_a_client_with_zulips_own_emoji_names_reacts(design, send, member, admin, name, code):
    """Clients that carry Zulip's table of names and codes send those (zulip-terminal's emoji list;
    the QA pass with it: half its names were refused, "Invalid emoji name" or "Invalid emoji code")."""
    message_id = send(member, design)
    assert_success(react(admin, message_id, emoji_name=name, emoji_code=code, reaction_type="unicode_emoji"))
    [reaction] = reactions_of(member, message_id)
    assert (reaction["emoji_name"], reaction["emoji_code"]) == (name, code)
    assert_success(react(member, message_id, emoji_name=name))  # by name alone: the same emoji
    assert [r["emoji_code"] for r in reactions_of(member, message_id)] == [code, code]


def test_names_zulip_gives_another_emoji_and_unpadded_codes_are_refused(design, send, member):
    message_id = send(member, design)
    refused(lambda: react(member, message_id, emoji_name="smile", emoji_code="1f604"), "Invalid emoji name.")
    refused(lambda: react(member, message_id, emoji_name="one", emoji_code="31-20e3"), "Invalid emoji code.")


def test_the_migration_writes_stored_codes_in_four_digits(design, send, member, admin):
    """Reactions stored before codes were padded (apps/messages/migrations/0012)."""
    migration = importlib.import_module("apps.messages.migrations.0012_emoji_codes_four_digits")
    message_id = send(member, design)
    for user, code in ((member, "31-20e3"), (admin, "a9")):
        Reaction.objects.create(user=user, message_id=message_id, emoji_name="x", emoji_code=code)
    Reaction.objects.create(user=admin, message_id=message_id, emoji_name="octopus", emoji_code="1f419")
    Reaction.objects.create(
        user=admin, message_id=message_id, emoji_name="ab", emoji_code="12", reaction_type="realm_emoji"
    )
    migration.pad_codes(django_apps, None)
    codes = set(Reaction.objects.values_list("emoji_code", flat=True))
    assert codes == {"0031-20e3", "00a9", "1f419", "12"}  # a custom emoji's code is its id


def test_the_migration_makes_stored_names_and_codes_agree(design, send, member, admin, moderator):
    """Reactions stored before Zulip's emoji table was taken up (apps/messages/migrations/0013): a known
    code keeps its emoji under its name ("smile" was 1f604 here: Zulip's "big_smile"), an unknown code
    takes the name's (one already there by the same person is that one); removing by name then works."""
    migration = importlib.import_module("apps.messages.migrations.0013_emoji_names_agree_with_codes")
    message_id = send(member, design)
    stored = [
        (member, "smile", "1f604"),  # before: smile
        (admin, "smile", "1f642"),  # since: smile as Zulip has it
        (admin, "octopus", "ffff1"),  # a code no emoji has
        (moderator, "octopus", "ffff1"),
        (moderator, "octopus", "1f419"),  # the same person's, as it is now
        (member, "not an emoji name", "ffff2"),  # neither known: left alone
    ]
    for user, name, code in stored:
        Reaction.objects.create(user=user, message_id=message_id, emoji_name=name, emoji_code=code)
    Reaction.objects.create(
        user=admin, message_id=message_id, emoji_name="ab", emoji_code="12", reaction_type="realm_emoji"
    )
    migration.agree(django_apps, None)
    assert sorted(Reaction.objects.values_list("user_id", "emoji_name", "emoji_code")) == sorted([
        (member.id, "big_smile", "1f604"),
        (admin.id, "smile", "1f642"),
        (admin.id, "octopus", "1f419"),
        (moderator.id, "octopus", "1f419"),
        (member.id, "not an emoji name", "ffff2"),
        (admin.id, "ab", "12"),
    ])  # fmt: skip
    assert_success(unreact(member, message_id, emoji_name="big_smile"))
    assert_success(unreact(admin, message_id, emoji_name="smile"))


def test_react_by_name_and_everyone_who_sees_it_is_told(design, send, member, admin, capture_events):
    message_id = send(member, design)
    with capture_events(admin, member) as received:
        assert_success(react(admin, message_id, emoji_name="octopus"))
    event = {
        "type": "reaction",
        "op": "add",
        "message_id": message_id,
        "emoji_name": "octopus",
        "emoji_code": "1f419",
        "reaction_type": "unicode_emoji",
        "user_id": admin.id,
        "user": {"user_id": admin.id, "email": admin.delivery_email, "full_name": admin.full_name},
    }
    assert received[admin.id] == [event]
    assert received[member.id] == [event]
    assert reactions_of(member, message_id) == [
        {
            "emoji_name": "octopus",
            "emoji_code": "1f419",
            "reaction_type": "unicode_emoji",
            "user_id": admin.id,
            "user": {
                "id": admin.id,
                "email": admin.delivery_email,
                "full_name": admin.full_name,
                "is_mirror_dummy": False,
            },
        }
    ]


def test_react_by_code_and_type_as_the_mobile_app_does(design, send, member):
    message_id = send(member, design)
    # The official client repeats the message id in the body: as in Zulip (a path-only parameter),
    # the server reports it as ignored.
    body = assert_success(react(member, message_id, message_id=message_id, emoji_name="thumbs_up", emoji_code="1f44d",
                                reaction_type="unicode_emoji"))  # fmt: skip
    assert body["ignored_parameters_unsupported"] == ["message_id"]
    assert_success(react(member, message_id, emoji_name="zulip", emoji_code="zulip", reaction_type="zulip_extra_emoji"))
    assert [(r["emoji_code"], r["reaction_type"]) for r in reactions_of(member, message_id)] == [
        ("1f44d", "unicode_emoji"),
        ("zulip", "zulip_extra_emoji"),
    ]


@pytest.mark.parametrize(
    ("params", "msg"),
    [
        ({"emoji_name": "no_such_emoji"}, "Emoji 'no_such_emoji' does not exist"),
        ({"emoji_name": "octopus", "emoji_code": "zzzz"}, "Invalid emoji code."),
        ({"emoji_name": "smile", "emoji_code": "1f419"}, "Invalid emoji name."),
        ({"emoji_name": "octopus", "emoji_code": "1f419", "reaction_type": "other"}, "Invalid emoji type."),
        ({"emoji_name": "party", "emoji_code": "1", "reaction_type": "realm_emoji"}, "Invalid custom emoji."),
        ({"emoji_name": "zulip", "emoji_code": "1f419", "reaction_type": "zulip_extra_emoji"}, "Invalid emoji code."),
        ({"emoji_name": "octopus", "emoji_code": "zulip", "reaction_type": "zulip_extra_emoji"}, "Invalid emoji name."),
    ],
)
def test_unknown_emoji_are_refused(design, send, member, params, msg):
    message_id = send(member, design)
    refused(lambda: react(member, message_id, **params), msg)


def test_a_user_reacts_once_with_an_emoji_but_others_may_too(design, send, member, admin):
    message_id = send(member, design)
    assert_success(react(member, message_id, emoji_name="octopus"))
    refused(
        lambda: react(member, message_id, emoji_name="octopus"), "Reaction already exists.", "REACTION_ALREADY_EXISTS"
    )
    # Another name for the same emoji is the same reaction.
    assert_success(react(member, message_id, emoji_name="+1"))
    refused(
        lambda: react(member, message_id, emoji_name="thumbs_up"), "Reaction already exists.", "REACTION_ALREADY_EXISTS"
    )
    assert_success(react(admin, message_id, emoji_name="octopus"))
    assert [r["user_id"] for r in reactions_of(member, message_id)] == [member.id, member.id, admin.id]
    # Another name for an emoji someone reacted with is a vote for that reaction: it takes its name.
    assert_success(react(admin, message_id, emoji_name="thumbs_up"))
    assert {
        (r["emoji_name"], r["user_id"]) for r in reactions_of(member, message_id) if r["emoji_code"] == "1f44d"
    } == {
        ("+1", member.id),
        ("+1", admin.id),
    }


def test_removing_by_name_or_by_code(design, send, member, admin, capture_events):
    message_id = send(member, design)
    assert_success(react(member, message_id, emoji_name="octopus"))
    assert_success(react(member, message_id, emoji_name="tada"))
    with capture_events(admin) as received:
        assert_success(unreact(member, message_id, emoji_name="octopus"))
        assert_success(unreact(member, message_id, emoji_code="1f389", reaction_type="unicode_emoji"))
    assert [(e["op"], e["emoji_code"]) for e in received[admin.id]] == [("remove", "1f419"), ("remove", "1f389")]
    assert reactions_of(member, message_id) == []
    refused(
        lambda: unreact(member, message_id, emoji_name="octopus"), "Reaction doesn't exist.", "REACTION_DOES_NOT_EXIST"
    )
    refused(
        lambda: unreact(member, message_id),
        "At least one of the following arguments must be present: emoji_name, emoji_code",
    )


def test_one_cannot_remove_anothers_reaction(design, send, member, admin):
    message_id = send(member, design)
    assert_success(react(admin, message_id, emoji_name="octopus"))
    refused(
        lambda: unreact(member, message_id, emoji_name="octopus"), "Reaction doesn't exist.", "REACTION_DOES_NOT_EXIST"
    )


def test_messages_one_cannot_see_cannot_be_reacted_to(make_stream, send, member, admin, foreign_user):
    secret = make_stream("secret", admin, private=True)
    hidden = send(admin, secret)
    refused(lambda: react(member, hidden, emoji_name="octopus"), "Invalid message(s)")
    refused(lambda: unreact(member, hidden, emoji_name="octopus"), "Invalid message(s)")
    refused(lambda: react(foreign_user, hidden, emoji_name="octopus"), "Invalid message(s)")


def test_a_direct_messages_reactions_reach_its_people_only(send, member, admin, owner, capture_events):
    message_id = send(member, [admin])
    with capture_events(admin, member, owner) as received:
        assert_success(react(admin, message_id, emoji_name="heart"))
    assert [e["type"] for e in received[admin.id]] == ["reaction"]
    assert [e["type"] for e in received[member.id]] == ["reaction"]
    assert received[owner.id] == []


def test_a_page_of_messages_reads_reactions_in_one_query(design, send, member, admin):
    ids = [send(member, design, f"m{n}") for n in range(5)]
    for message_id in ids:
        assert_success(react(admin, message_id, emoji_name="octopus"))
        assert_success(react(member, message_id, emoji_name="tada"))
    with CaptureQueriesContext(connection) as queries:
        messages = get_messages(admin)["messages"]
    assert [len(m["reactions"]) for m in messages] == [2] * 5
    assert len([q for q in queries if '"chat_messages_reaction"' in q["sql"]]) == 1


def test_deleting_a_message_removes_its_reactions(design, send, member):
    message_id = send(member, design)
    assert_success(react(member, message_id, emoji_name="octopus"))
    assert_success(api_for(member).delete(f"/messages/{message_id}"))
    assert not Reaction.objects.exists()


def test_the_emoji_data_clients_pick_from_is_served_without_authentication(realm, member, anonymous):
    url = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))["server_emoji_data_url"]
    assert url == "http://testserver/emoji/emoji_api.json"
    response = anonymous.client.get("/emoji/emoji_api.json", HTTP_HOST="testserver")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert "public" in response["Cache-Control"]
    names = response.json()["code_to_names"]
    assert names["1f44d"] == ["+1", "thumbs_up", "like"]  # Zulip's names, its canonical one first
    assert "octopus" in names["1f419"]
    # Every name a reaction may use is there, under the code a reaction stores.
    assert all(unicode_emoji_code(name) == code for code, listed in names.items() for name in listed)
    again = anonymous.client.get("/emoji/emoji_api.json", HTTP_HOST="testserver", HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304
    assert anonymous.client.post("/emoji/emoji_api.json", HTTP_HOST="testserver").status_code == 405
