"""Custom emoji: POST /realm/emoji/{name} (Zulip's name rules, who may add, one image within the
size limit that decodes), DELETE (deactivates; administrators and the author), GET /realm/emoji,
realm_emoji in /register and realm_emoji events, the images served without credentials, and
reactions with reaction_type realm_emoji."""

import json
from io import BytesIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from PIL import Image

from apps.uploads.models import RealmEmoji
from apps.uploads.selectors import realm_emoji_to_dict
from tests.api import api_for, assert_error, assert_success
from tests.concurrency import at_once, done_or_refused
from tests.uploads.conftest import image_bytes, post_files


def add_emoji(user, name, data=None, content_type="image/png", filename="e.png"):
    data = image_bytes() if data is None else data
    return post_files(user, f"/realm/emoji/{name}", {"f": SimpleUploadedFile(filename, data, content_type)})


def emoji_list(user) -> dict:
    return assert_success(api_for(user).get("/realm/emoji"))["emoji"]


def refused(response, msg) -> None:
    before = list(RealmEmoji.objects.values())
    assert_error(response, 400, "BAD_REQUEST", msg)
    assert list(RealmEmoji.objects.values()) == before


def not_found(response, msg) -> None:
    """As Zulip since 2023: deleting an emoji that does not exist (or is not active) is a 404."""
    before = list(RealmEmoji.objects.values())
    assert_error(response, 404, "BAD_REQUEST", msg)
    assert list(RealmEmoji.objects.values()) == before


def test_add_emoji_and_list_it_in_zulips_shape(member, anonymous):
    assert_success(add_emoji(member, "party_parrot"))
    emoji = RealmEmoji.objects.get()
    listed = emoji_list(member)
    assert listed == {
        str(emoji.id): {
            "id": str(emoji.id),
            "name": "party_parrot",
            "source_url": f"/user_avatars/{member.realm_id}/emoji/images/{emoji.file_name}",
            "deactivated": False,
            "author_id": member.id,
            "still_url": None,
        }
    }
    response = anonymous.client.get(listed[str(emoji.id)]["source_url"])
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")


def test_large_images_are_shrunk_to_64_pixels(member, anonymous):
    assert_success(add_emoji(member, "big", image_bytes(size=(256, 128))))
    url = emoji_list(member)[str(RealmEmoji.objects.get().id)]["source_url"]
    image = Image.open(BytesIO(b"".join(anonymous.client.get(url).streaming_content)))
    assert image.size == (64, 32)


def test_animated_emoji_have_a_still_image(member, anonymous):
    assert_success(add_emoji(member, "blink", image_bytes("GIF", frames=3), "image/gif", "blink.gif"))
    [emoji] = emoji_list(member).values()
    assert emoji["source_url"].endswith(".gif")
    assert emoji["still_url"].startswith(f"/user_avatars/{member.realm_id}/emoji/images/still/")
    assert emoji["still_url"].endswith(".png")
    assert anonymous.client.get(emoji["source_url"])["Content-Type"] == "image/gif"
    still = anonymous.client.get(emoji["still_url"])
    assert still["Content-Type"] == "image/png"


def test_spaces_become_underscores(member):
    assert_success(add_emoji(member, " party parrot "))
    assert RealmEmoji.objects.get().name == "party_parrot"


@pytest.mark.parametrize(
    ("name", "msg"),
    [
        ("Smile", "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores."),
        ("smile!", "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores."),
        ("smile_", "Emoji names must end with either a letter or digit."),
        ("a" * 61, "Emoji names must be at most 60 characters."),
        (
            "my/emoji/with/slashes/",
            "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
        ),
    ],
)
def test_bad_names_are_refused(member, name, msg):
    refused(add_emoji(member, name), msg)


def test_guests_and_bots_may_not_add_emoji(guest, bot):
    """Zulip's require_member_or_admin, before the name is looked at (the uploads QA pass: guests got
    "Insufficient permission", bots could)."""
    refused(add_emoji(guest, "nope!"), "Not allowed for guest users")
    refused(add_emoji(bot, "nope"), "This endpoint does not accept bot requests.")


def test_members_and_admins_may(member, admin):
    for index, user in enumerate((member, admin)):
        assert_success(add_emoji(user, f"e{index}"))


def test_the_organization_decides_who_may(realm, member, moderator, admin, guest):
    from apps.groups.models import SystemGroups
    from apps.groups.selectors import get_system_group

    moderators = get_system_group(realm.id, SystemGroups.MODERATORS)
    assert_success(api_for(admin).patch("/realm", {"can_add_custom_emoji_group": {"new": moderators.id}}))
    refused(add_emoji(member, "nope"), "Insufficient permission")
    assert_success(add_emoji(moderator, "ship_it"))
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_can_add_custom_emoji_group"] == moderators.id
    # Never role:everyone, and never guests even when named (as in Zulip, for this setting).
    everyone = get_system_group(realm.id, SystemGroups.EVERYONE)
    response = api_for(admin).patch("/realm", {"can_add_custom_emoji_group": {"new": everyone.id}})
    msg = "'can_add_custom_emoji_group' setting cannot be set to 'role:everyone' group."
    assert_error(response, 400, "BAD_REQUEST", msg)
    value = {"direct_members": [guest.id], "direct_subgroups": []}
    assert_success(api_for(admin).patch("/realm", {"can_add_custom_emoji_group": {"new": value}}))
    refused(add_emoji(guest, "guest_one"), "Not allowed for guest users")  # never guests


def test_an_active_name_is_taken(member, admin):
    assert_success(add_emoji(member, "dup"))
    refused(add_emoji(admin, "dup"), "A custom emoji with this name already exists.")


def test_only_administrators_override_built_in_emoji(member, admin):
    refused(add_emoji(member, "octopus"), "Only administrators can override default emoji.")
    refused(add_emoji(member, "zulip"), "Only administrators can override default emoji.")
    assert_success(add_emoji(admin, "octopus"))


def test_exactly_one_file(member):
    refused(post_files(member, "/realm/emoji/none", {}), "You must upload exactly one file.")
    two = {
        "a": SimpleUploadedFile("a.png", image_bytes(), "image/png"),
        "b": SimpleUploadedFile("b.png", image_bytes()),
    }
    refused(post_files(member, "/realm/emoji/two", two), "You must upload exactly one file.")


def test_too_big_files_are_refused(member):
    data = image_bytes() + b"\0" * (5 * 1024 * 1024)
    refused(add_emoji(member, "huge", data), "Uploaded file is larger than the allowed limit of 5 MiB")


def test_files_that_are_not_images_are_refused(member, uploads_dir):
    refused(add_emoji(member, "txt", b"hello", "text/plain", "a.txt"), "Invalid image format")
    refused(
        add_emoji(member, "fake", b"not an image at all", "image/png"),
        "Could not decode image; did you upload an image file?",
    )
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    refused(add_emoji(member, "svg", svg, "image/svg+xml", "a.svg"), "Invalid image format")
    # A PNG declared as a GIF decodes, but not as what it claims to be: refused only if the format is
    # not an accepted one; a truncated image is refused.
    refused(
        add_emoji(member, "cut", image_bytes(size=(300, 300))[:60]),
        "Could not decode image; did you upload an image file?",
    )
    assert not list(uploads_dir.rglob("*.*"))


def test_deleting_deactivates_and_frees_the_name(member, admin, anonymous):
    assert_success(add_emoji(member, "wave2"))
    emoji = RealmEmoji.objects.get()
    assert_success(api_for(member).delete("/realm/emoji/wave2"))
    emoji.refresh_from_db()
    assert emoji.deactivated
    assert emoji_list(member)[str(emoji.id)]["deactivated"] is True
    assert anonymous.client.get(emoji_list(member)[str(emoji.id)]["source_url"]).status_code == 200
    assert_success(add_emoji(admin, "wave2"))
    assert RealmEmoji.objects.filter(name="wave2", deactivated=False).count() == 1


def test_only_admins_and_the_author_delete(member, moderator, admin):
    assert_success(add_emoji(member, "my_emoji"))
    refused(api_for(moderator).delete("/realm/emoji/my_emoji"), "Must be an organization administrator or emoji author")
    assert_success(api_for(admin).delete("/realm/emoji/my_emoji"))
    not_found(api_for(admin).delete("/realm/emoji/my_emoji"), "Emoji 'my_emoji' does not exist")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_deletions_of_one_emoji_at_once_delete_it_once(admin, owner):
    """The hostile-input QA pass: up to 8 of 20 deletions at once answered 200, each with events."""
    assert_success(add_emoji(admin, "racing"))
    answers = at_once(*[lambda user=user: api_for(user).delete("/realm/emoji/racing") for user in (admin, owner) * 2])
    assert sorted(answer.status_code for answer in answers) == [200, 404, 404, 404]
    done_or_refused(answers, 404, "BAD_REQUEST", "Emoji 'racing' does not exist")


def test_other_organizations_emoji_are_invisible(member, foreign_user):
    assert_success(add_emoji(foreign_user, "theirs"))
    assert emoji_list(member) == {}
    not_found(api_for(member).delete("/realm/emoji/theirs"), "Emoji 'theirs' does not exist")
    assert_success(add_emoji(member, "theirs"))  # names are per organization


def test_register_and_events(member, admin, capture_events):
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm_emoji", "realm"]}))
    assert state["realm_emoji"] == {}
    assert isinstance(state["realm_can_add_custom_emoji_group"], int)
    with capture_events(member, admin, event_types=["realm_emoji"]) as received:
        assert_success(add_emoji(member, "brand_new"))
    emoji = RealmEmoji.objects.get()
    for user in (member, admin):
        [event] = received[user.id]
        assert (set(event), event["type"], event["op"]) == ({"type", "op", "realm_emoji"}, "realm_emoji", "update")
        assert list(event["realm_emoji"]) == [str(emoji.id)]
    with capture_events(admin, event_types=["realm_emoji"]) as received:
        assert_success(api_for(member).delete("/realm/emoji/brand_new"))
    assert received[admin.id][0]["realm_emoji"][str(emoji.id)]["deactivated"] is True
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm_emoji"]}))
    assert state["realm_emoji"][str(emoji.id)]["name"] == "brand_new"


def test_queues_with_individual_emoji_changes_get_each_change(member, admin, capture_events):
    """Zulip's feature level 491: realm_emoji/add and realm_emoji/update_one instead of every emoji."""
    capabilities = json.dumps({"individual_emoji_changes": True})
    with capture_events(admin, event_types=["realm_emoji"], client_capabilities=capabilities) as received:
        assert_success(add_emoji(member, "brand_new"))
    emoji = RealmEmoji.objects.get()
    assert received[admin.id] == [{"type": "realm_emoji", "op": "add", "emoji": realm_emoji_to_dict(emoji)}]
    with capture_events(admin, event_types=["realm_emoji"], client_capabilities=capabilities) as received:
        assert_success(api_for(member).delete("/realm/emoji/brand_new"))
    change = {"type": "realm_emoji", "op": "update_one", "emoji_id": str(emoji.id), "data": {"deactivated": True}}
    assert received[admin.id] == [change]


def test_unknown_emoji_images_are_not_found(anonymous, realm):
    assert anonymous.client.get(f"/user_avatars/{realm.id}/emoji/images/deadbeef.png").status_code == 404
    assert anonymous.client.get(f"/user_avatars/{realm.id}/emoji/images/..%2Fsecret.png").status_code == 404


# --- reactions --------------------------------------------------------------------------------------


@pytest.fixture
def message_id(member, make_stream):
    channel = make_stream("design", member)
    body = api_for(member).post("/messages", {"type": "stream", "to": "design", "topic": "t", "content": "hi"})
    assert channel
    return assert_success(body)["id"]


def test_react_with_a_custom_emoji_by_name_and_by_code(member, admin, message_id):
    assert_success(add_emoji(member, "partyparrot"))
    emoji = RealmEmoji.objects.get()
    assert_success(api_for(member).post(f"/messages/{message_id}/reactions", {"emoji_name": "partyparrot"}))
    params = {"emoji_name": "partyparrot", "emoji_code": str(emoji.id), "reaction_type": "realm_emoji"}
    assert_success(api_for(admin).post(f"/messages/{message_id}/reactions", params))
    reactions = assert_success(api_for(member).get(f"/messages/{message_id}"))["message"]["reactions"]
    assert {(r["emoji_code"], r["reaction_type"], r["user_id"]) for r in reactions} == {
        (str(emoji.id), "realm_emoji", member.id),
        (str(emoji.id), "realm_emoji", admin.id),
    }
    assert_success(api_for(member).delete(f"/messages/{message_id}/reactions", {"emoji_name": "partyparrot"}))


def test_custom_emoji_reactions_are_checked(member, admin, foreign_user, message_id):
    assert_success(add_emoji(member, "partyparrot"))
    emoji = RealmEmoji.objects.get()
    url = f"/messages/{message_id}/reactions"

    def react(**params):
        return api_for(admin).post(url, {"reaction_type": "realm_emoji", **params})

    assert_error(react(emoji_name="partyparrot", emoji_code="999999"), 400, "BAD_REQUEST", "Invalid custom emoji.")
    assert_error(react(emoji_name="other", emoji_code=str(emoji.id)), 400, "BAD_REQUEST", "Invalid custom emoji name.")
    assert_success(add_emoji(foreign_user, "theirs"))
    theirs = RealmEmoji.objects.get(name="theirs")
    assert_error(react(emoji_name="theirs", emoji_code=str(theirs.id)), 400, "BAD_REQUEST", "Invalid custom emoji.")
    assert_success(api_for(member).delete("/realm/emoji/partyparrot"))
    msg = "This custom emoji has been deactivated."
    assert_error(react(emoji_name="partyparrot", emoji_code=str(emoji.id)), 400, "BAD_REQUEST", msg)
    assert_error(
        api_for(admin).post(url, {"emoji_name": "partyparrot"}),
        400,
        "BAD_REQUEST",
        "Emoji 'partyparrot' does not exist",
    )


def test_a_deactivated_emoji_still_takes_votes_on_its_reactions(member, admin, moderator, message_id):
    """As in Zulip: a reaction shown on the message can be added to even after its custom emoji was
    deactivated (the QA pass: it was refused), but not started anew."""
    assert_success(add_emoji(member, "partyparrot"))
    emoji = RealmEmoji.objects.get()
    url = f"/messages/{message_id}/reactions"
    params = {"emoji_name": "partyparrot", "emoji_code": str(emoji.id), "reaction_type": "realm_emoji"}
    assert_success(api_for(member).post(url, params))
    assert_success(api_for(member).delete("/realm/emoji/partyparrot"))
    assert_success(api_for(admin).post(url, params))
    reactions = assert_success(api_for(member).get(f"/messages/{message_id}"))["message"]["reactions"]
    assert [(r["emoji_name"], r["user_id"]) for r in reactions] == [
        ("partyparrot", member.id),
        ("partyparrot", admin.id),
    ]
    channel = api_for(member).post("/messages", {"type": "stream", "to": "design", "topic": "t", "content": "new"})
    other = assert_success(channel)["id"]
    msg = "This custom emoji has been deactivated."
    assert_error(api_for(admin).post(f"/messages/{other}/reactions", params), 400, "BAD_REQUEST", msg)


def test_a_message_with_custom_emoji_has_no_image(member, message_id):
    """has:image is not for custom emoji, as in Zulip (the uploads QA pass)."""
    assert_success(add_emoji(member, "green_blob"))
    content = "hi :green_blob:"
    sent = api_for(member).post("/messages", {"type": "stream", "to": "design", "topic": "t", "content": content})
    message = assert_success(api_for(member).get(f"/messages/{assert_success(sent)['id']}"))["message"]
    assert 'class="emoji"' in message["content"]
    narrow = json.dumps([{"operator": "has", "operand": "image"}])
    found = api_for(member).get("/messages", {"anchor": "newest", "num_before": 10, "num_after": 0, "narrow": narrow})
    assert assert_success(found)["messages"] == []


def test_names_no_emoji_can_have_do_not_exist(member):
    for name in ("a%00b", "%ED%A0%80", "Big"):
        response = api_for(member).delete(f"/realm/emoji/{name}")
        assert response.status_code == 404
        assert response.json()["msg"].startswith("Emoji '")


def test_custom_emoji_in_user_statuses(member, admin, foreign_user):
    assert_success(add_emoji(member, "party_parrot"))
    code = str(RealmEmoji.objects.get().id)
    assert_success(api_for(member).post("/users/me/status", {"status_text": "party", "emoji_name": "party_parrot"}))
    state = assert_success(api_for(admin).post("/register", {"fetch_event_types": ["user_status"]}))
    assert state["user_status"][str(member.id)] == {
        "status_text": "party", "emoji_name": "party_parrot", "emoji_code": code, "reaction_type": "realm_emoji",
    }  # fmt: skip
    # Given in full too; another organization's people do not have it.
    params = {"emoji_name": "party_parrot", "emoji_code": code, "reaction_type": "realm_emoji"}
    assert_success(api_for(admin).post("/users/me/status", params))
    assert_error(api_for(foreign_user).post("/users/me/status", params), 400, "BAD_REQUEST", "Invalid custom emoji.")
    assert_error(api_for(foreign_user).post("/users/me/status", {"emoji_name": "party_parrot"}), 400,
                 "BAD_REQUEST", "Emoji 'party_parrot' does not exist")  # fmt: skip


# --- in messages ------------------------------------------------------------------------------------


def rendered(user, content: str) -> str:
    body = api_for(user).post("/messages", {"type": "stream", "to": "design", "topic": "t", "content": content})
    return assert_success(api_for(user).get(f"/messages/{assert_success(body)['id']}"))["message"]["content"]


def test_a_message_shows_the_organizations_active_custom_emoji(member, admin, foreign_user, make_stream):
    make_stream("design", member, admin)
    assert_success(add_emoji(member, "party_parrot"))
    assert_success(add_emoji(member, "old_one"))
    assert_success(api_for(admin).delete("/realm/emoji/old_one"))
    assert_success(add_emoji(foreign_user, "theirs"))
    parrot = RealmEmoji.objects.get(name="party_parrot")
    src = f"/user_avatars/{member.realm_id}/emoji/images/{parrot.file_name}"
    assert rendered(member, "hi :party_parrot: :old_one: :theirs:") == (
        f'<p>hi <img alt=":party_parrot:" class="emoji" src="{src}" title="party parrot"> :old_one: :theirs:</p>'
    )
