"""GET /users: who is listed, page sizes, full scans, scans while users come and go, the name filter."""

import math
import random

import pytest

from apps.directory.pagination import DEFAULT_LIMIT, MAX_LIMIT
from apps.groups.models import SystemGroups
from apps.invites.actions.welcome import do_create_welcome_bot
from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.users.models import User
from tests.api import api_for, assert_success
from tests.directory.api import assert_error, scan
from tests.factories import BotFactory, UserFactory


def listed_ids(pages) -> list[str]:
    return [item["id"] for page in pages for item in page["items"]]


def active_ids(realm) -> list[str]:
    return sorted(str(u) for u in User.objects.filter(realm=realm, is_active=True).values_list("uuid", flat=True))


def bulk_users(realm, count: int, *, name: str = "Bulk") -> list[User]:
    return User.objects.bulk_create(
        User(realm=realm, delivery_email=f"{name.lower()}{i}@example.com", full_name=f"{name} {i}", api_key="k" * 32)
        for i in range(count)
    )


def test_lists_active_people_and_bots_of_the_organization_in_id_order(
    directory_for, realm, owner, member, guest, bot, foreign_user
):
    gone = UserFactory(realm=realm, full_name="Gone Away", is_active=False)
    body = directory_for(member).get("/users").json()
    assert body["next_page"] is None
    assert body["items"] == sorted(body["items"], key=lambda item: item["id"])
    assert {(item["id"], item["name"]) for item in body["items"]} == {
        (str(user.uuid), user.full_name) for user in (owner, member, guest, bot)
    }
    assert str(gone.uuid) not in str(body)
    assert str(foreign_user.uuid) not in str(body)


def test_a_guest_is_not_shown_the_people_hidden_from_them(
    directory_for, realm, sys_groups, owner, member, guest, bot, make_stream
):
    """Where the organization limits what guests see, a guest's directory holds themselves, bots and
    the people they share a channel with, as GET /api/v1/users names them; the others are not
    listed, nor found (the directory QA pass: every hidden person was listed, by name)."""
    members = sys_groups[SystemGroups.MEMBERS].id
    assert_success(api_for(owner).patch("/realm", {"can_access_all_users_group": {"new": members}}))
    make_stream("shared", guest, member)
    hidden = UserFactory(realm=realm, full_name="Hidden Person")
    pages = scan(directory_for(guest), limit=1)
    assert sorted(listed_ids(pages)) == sorted(str(user.uuid) for user in (member, guest, bot))
    for person, status in ((hidden, 404), (owner, 404), (member, 200), (bot, 200)):
        assert directory_for(guest).get(f"/users/{person.uuid}").status_code == status
    assert_error(directory_for(guest).get(f"/users/{hidden.uuid}"), 404, error_code="ObjectNotFound")
    # Members see everyone still.
    assert str(hidden.uuid) in listed_ids(scan(directory_for(member)))


def test_the_servers_own_bots_are_not_listed(directory_for, realm, member):
    """As GET /api/v1/users (the directory QA pass: a tool matching the two APIs found two users
    too many in every organization)."""
    system_bots = [do_create_notification_bot(realm), do_create_welcome_bot(realm)]
    body = directory_for(member).get("/users").json()
    assert [item["id"] for item in body["items"]] == [str(member.uuid)]
    for bot in system_bots:
        assert directory_for(member).get(f"/users/{bot.uuid}").status_code == 404


def test_user_is_exactly_id_and_name(directory_for, member):
    assert directory_for(member).get("/users").json() == {
        "items": [{"id": str(member.uuid), "name": "Mel Member"}],
        "next_page": None,
    }


def test_default_page_is_100_users(directory_for, realm, member):
    bulk_users(realm, DEFAULT_LIMIT)
    page = directory_for(member).get("/users").json()
    assert len(page["items"]) == DEFAULT_LIMIT
    assert page["next_page"]
    rest = directory_for(member).get("/users", {"page_token": page["next_page"]}).json()
    assert (len(rest["items"]), rest["next_page"]) == (1, None)


@pytest.mark.parametrize("limit", [MAX_LIMIT + 1, 20000, 2**32 - 1])
def test_limit_above_maximum_is_clamped(directory_for, realm, member, limit):
    bulk_users(realm, MAX_LIMIT + 1)
    page = directory_for(member).get("/users", {"limit": limit}).json()
    assert len(page["items"]) == MAX_LIMIT
    rest = directory_for(member).get("/users", {"page_token": page["next_page"], "limit": limit}).json()
    assert (len(rest["items"]), rest["next_page"]) == (2, None)
    assert listed_ids([page, rest]) == active_ids(realm)


@pytest.mark.parametrize("limit", ["+2", "02", "0" * 12 + "2", "+0004294967295"])
def test_limit_is_read_as_rust_reads_a_u32(directory_for, realm, member, limit):
    """Dropshot's query parameters are parsed by Rust's FromStr: a `+` and leading zeros are fine."""
    bulk_users(realm, 2)
    assert len(directory_for(member).get("/users", {"limit": limit}).json()["items"]) == min(int(limit), 3)


@pytest.mark.parametrize("limit", ["0", "-3", "seven", "", "1.5", "1e3", " 5", "++5", "-0", "0x10", "4294967296",
                                   "9" * 5000, "0" * 5000])  # fmt: skip
def test_bad_limit_is_400(directory_for, member, limit):
    body = assert_error(directory_for(member).get("/users", {"limit": limit}), 400, error_code="InvalidRequest")
    assert body["message"] == (
        "unable to parse query string: limit must be an integer from 1 to 4294967295 (a page holds at most 10000 items)"
    )


@pytest.mark.parametrize("name", ["limit", "page_token", "name"])
def test_repeated_parameter_is_400(directory_for, member, name):
    response = directory_for(member).get(f"/users?{name}=1&{name}=2")
    assert_error(response, 400, f"unable to parse query string: duplicate field `{name}`", "InvalidRequest")


def test_unknown_parameters_are_ignored(directory_for, member):
    assert directory_for(member).get("/users", {"sort_by": "id_ascending", "zeta": "1"}).status_code == 200


def test_full_scan_with_every_limit_sees_every_user_once(directory_for, realm, member, bot):
    bulk_users(realm, 10)
    everyone = active_ids(realm)
    n = len(everyone)
    for limit in range(1, n + 2):
        pages = scan(directory_for(member), limit=limit)
        assert listed_ids(pages) == everyone, limit
        # No trailing empty page: the last page is full or partial, and it says it is the last.
        assert len(pages) == math.ceil(n / limit), limit
        assert all(page["items"] for page in pages)
        assert all(len(page["items"]) == limit for page in pages[:-1])
        tokens = [page["next_page"] for page in pages[:-1]]
        assert all(tokens)
        assert len(set(tokens)) == len(tokens)


@pytest.mark.parametrize("seed", range(5))
def test_scan_while_users_are_added_and_deactivated(directory_for, realm, member, seed):
    """Every user active for the whole scan is seen exactly once; nobody is seen twice; nobody is
    seen after being deactivated."""
    rng = random.Random(seed)
    bulk_users(realm, 30)
    client = directory_for(member)
    present_throughout = set(active_ids(realm))
    seen: list[str] = []
    deactivated: set[str] = set()
    response = client.get("/users", {"limit": 4})
    while True:
        page = response.json()
        seen += [item["id"] for item in page["items"]]
        assert not deactivated & {item["id"] for item in page["items"]}
        if page["next_page"] is None:
            break
        UserFactory.create_batch(rng.randint(0, 3), realm=realm)
        candidates = list(User.objects.filter(realm=realm, is_active=True).exclude(id=member.id))
        for user in rng.sample(candidates, k=min(len(candidates), rng.randint(0, 2))):
            user.is_active = False
            user.save(update_fields=["is_active"])
            deactivated.add(str(user.uuid))
            present_throughout.discard(str(user.uuid))
        response = client.get("/users", {"page_token": page["next_page"], "limit": 4})
    assert len(seen) == len(set(seen))
    assert present_throughout <= set(seen)
    assert seen == sorted(seen)


def test_token_stays_valid_when_its_user_is_deactivated(directory_for, realm, member, admin):
    bulk_users(realm, 3)
    first = directory_for(member).get("/users", {"limit": 2}).json()
    last_seen = first["items"][-1]["id"]
    User.objects.filter(uuid=last_seen).update(is_active=False)
    reader = admin if last_seen == str(member.uuid) else member
    rest = directory_for(reader).get("/users", {"page_token": first["next_page"]}).json()
    assert listed_ids([first, rest]) == sorted({*active_ids(realm), last_seen})


def test_name_filter_is_a_case_insensitive_substring(directory_for, realm, member):
    UserFactory(realm=realm, full_name="Ann Lee")
    UserFactory(realm=realm, full_name="LEEANN Smith")
    UserFactory(realm=realm, full_name="Bob Stone")
    BotFactory(realm=realm, bot_owner=member, full_name="Leeroy Bot")
    body = directory_for(member).get("/users", {"name": "lee"}).json()
    assert sorted(item["name"] for item in body["items"]) == ["Ann Lee", "LEEANN Smith", "Leeroy Bot"]
    assert directory_for(member).get("/users", {"name": " Lee"}).json()["items"][0]["name"] == "Ann Lee"


def test_name_filter_ignores_the_case_of_accented_letters(directory_for, realm, member):
    UserFactory(realm=realm, full_name="ÉLODIE Martin")
    UserFactory(realm=realm, full_name="Héloïse Dupré")
    body = directory_for(member).get("/users", {"name": "éLo"}).json()
    assert sorted(item["name"] for item in body["items"]) == ["Héloïse Dupré", "ÉLODIE Martin"]


def test_name_filter_treats_like_wildcards_literally(directory_for, realm, member):
    UserFactory(realm=realm, full_name="Percent % Sign")
    UserFactory(realm=realm, full_name="Under_score")
    names = [item["name"] for item in directory_for(member).get("/users", {"name": "%"}).json()["items"]]
    assert names == ["Percent % Sign"]
    names = [item["name"] for item in directory_for(member).get("/users", {"name": "_"}).json()["items"]]
    assert names == ["Under_score"]


def test_empty_name_filter_lists_everyone(directory_for, realm, member, bot):
    assert len(directory_for(member).get("/users", {"name": ""}).json()["items"]) == 2


def test_name_filter_matching_nobody_is_an_empty_last_page(directory_for, member):
    assert directory_for(member).get("/users", {"name": "nobody"}).json() == {"items": [], "next_page": None}


def test_name_filter_travels_in_the_token(directory_for, realm, member):
    bulk_users(realm, 5, name="Match")
    bulk_users(realm, 5, name="Other")
    client = directory_for(member)
    first = client.get("/users", {"name": "match", "limit": 2}).json()
    # Later pages need not repeat it, and a different one is ignored (Dropshot's rule).
    second = client.get("/users", {"page_token": first["next_page"], "limit": 2}).json()
    third = client.get("/users", {"page_token": second["next_page"], "limit": 2, "name": "other"}).json()
    assert third["next_page"] is None
    names = [item["name"] for page in (first, second, third) for item in page["items"]]
    assert sorted(names) == [f"Match {i}" for i in range(5)]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("x" * 41, "name: Ensure this value has at most 40 characters (it has 41)."),
        ("a\x00b", "name: Null characters are not allowed."),
    ],
)
def test_bad_name_filter_is_400(directory_for, member, name, problem):
    response = directory_for(member).get("/users", {"name": name})
    assert_error(response, 400, f"unable to parse query string: {problem}", "InvalidRequest")


def test_longest_name_filter_is_served(directory_for, realm, member):
    # Four bytes of UTF-8 each: the longest token a name can make.
    UserFactory.create_batch(2, realm=realm, full_name="\U0001f600" * 40)
    first = directory_for(member).get("/users", {"name": "\U0001f600" * 40, "limit": 1}).json()
    rest = directory_for(member).get("/users", {"page_token": first["next_page"]}).json()
    assert (len(first["items"]), len(rest["items"]), rest["next_page"]) == (1, 1, None)


@pytest.mark.parametrize("limit", [1, 10, 100])
def test_a_page_costs_the_same_queries_whatever_its_size(
    directory_for, realm, member, limit, django_assert_num_queries
):
    bulk_users(realm, 250)
    client = directory_for(member)
    token = client.get("/users", {"limit": limit}).json()["next_page"]  # organization and credentials now cached
    # The page itself: one keyset query.
    with django_assert_num_queries(1):
        page = client.get("/users", {"page_token": token, "limit": limit}).json()
    assert len(page["items"]) == limit
    with django_assert_num_queries(1):
        client.get("/users", {"limit": limit, "name": "bulk"})


def test_api_version_header_is_accepted(directory_for, member):
    assert directory_for(member).get("/users", HTTP_API_VERSION="1.0.0").status_code == 200


def test_trailing_slash_is_tolerated_not_redirected(directory_for, member):
    client = directory_for(member)
    assert client.get("/users/").json() == client.get("/users").json()
