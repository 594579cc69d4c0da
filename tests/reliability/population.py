"""Two organizations with something of everything, for the sweeps to aim at.

The default organization (the bare host) has every role, a deactivated user and a hidden email,
public and private channels, channel and direct messages, a user group and profile fields; a second
organization ("zephyr") has its own owner, channel, message and group, whose ids the sweeps send to
the first (they must answer as if those never existed).
"""

from dataclasses import dataclass, field

from apps.realms.models import EmailVisibility
from apps.users.models import BotType, CustomProfileField, Role, User
from tests.api import ApiClient, assert_success
from tests.factories import BotFactory, RealmFactory, UserFactory

# Credentials a request may carry: a user of each role, and ones that must be refused.
ROLES = ("owner", "admin", "member", "guest", "bot")


KINDS = ("user", "stream", "message", "group", "field")


@dataclass
class Population:
    users: dict[str, User]
    ids: dict[str, list[int]] = field(default_factory=lambda: {kind: [] for kind in KINDS})  # both organizations
    emails: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # channels, topics, groups, fields, people
    channels: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)

    @property
    def all_ids(self) -> list[int]:
        return sorted(i for ids in self.ids.values() for i in ids)


def populate() -> Population:
    realm = RealmFactory(string_id="", name="Sweep")
    owner = UserFactory(realm=realm, role=Role.OWNER, delivery_email="owner@sweep.example", full_name="Olga Owner")
    users = {
        "owner": owner,
        "admin": UserFactory(realm=realm, role=Role.ADMINISTRATOR, delivery_email="admin@sweep.example"),
        "member": UserFactory(realm=realm, delivery_email="member@sweep.example", full_name="Max Member"),
        "guest": UserFactory(realm=realm, role=Role.GUEST, delivery_email="guest@sweep.example"),
        "hidden": UserFactory(
            realm=realm, delivery_email="hidden@sweep.example", email_address_visibility=EmailVisibility.NOBODY
        ),
        "deactivated": UserFactory(realm=realm, delivery_email="gone@sweep.example", is_active=False),
    }
    users["bot"] = BotFactory(realm=realm, bot_owner=users["member"], bot_type=BotType.GENERIC)
    foreign_realm = RealmFactory(string_id="zephyr", name="Zephyr")
    users["foreign"] = UserFactory(realm=foreign_realm, role=Role.OWNER, delivery_email="owner@sweep.example")

    population = Population(users=users)
    people = [u for name, u in users.items() if name not in ("deactivated", "foreign")]
    population.ids["user"] += [u.id for u in users.values()]
    # Real addresses, and the dummy ones an address that is hidden shows as.
    population.emails += [u.delivery_email for u in users.values()] + [f"user{u.id}@parley.invalid" for u in people]
    population.names += [u.full_name for u in users.values()]

    as_owner = ApiClient(owner)
    for name, private in (("general", False), ("secret", True)):
        subscribers = [u.id for u in people] if not private else [owner.id, users["guest"].id]
        assert_success(
            as_owner.post(
                "/users/me/subscriptions",
                {"subscriptions": [{"name": name}], "principals": subscribers, "invite_only": private},
            )
        )
    for channel in assert_success(as_owner.get("/streams", {"include_all": True}))["streams"]:
        population.ids["stream"].append(channel["stream_id"])
        population.channels.append(channel["name"])
    for to, topic in (("general", "lunch"), ("secret", "plans")):
        params = {"type": "stream", "to": to, "topic": topic, "content": f"hi @**{users['member'].full_name}**"}
        population.ids["message"].append(assert_success(as_owner.post("/messages", params))["id"])
        population.topics.append(topic)
    direct = {"type": "private", "to": [users["member"].id], "content": "psst"}
    population.ids["message"].append(assert_success(as_owner.post("/messages", direct))["id"])
    group = {"name": "crew", "description": "", "members": [users["member"].id, users["guest"].id]}
    population.ids["group"].append(assert_success(as_owner.post("/user_groups/create", group))["group_id"])
    population.names.append("crew")
    for name, kind in (("Team", CustomProfileField.FieldType.SHORT_TEXT), ("Buddy", CustomProfileField.FieldType.USER)):
        population.ids["field"].append(
            assert_success(as_owner.post("/realm/profile_fields", {"name": name, "field_type": kind}))["id"]
        )
        population.names.append(name)
    population.ids["group"] += [g["id"] for g in assert_success(as_owner.get("/user_groups"))["user_groups"]]

    foreign = ApiClient(users["foreign"], host="zephyr.testserver")
    assert_success(foreign.post("/users/me/subscriptions", {"subscriptions": [{"name": "elsewhere"}]}))
    params = {"type": "stream", "to": "elsewhere", "topic": "far", "content": "away"}
    population.ids["message"].append(assert_success(foreign.post("/messages", params))["id"])
    population.ids["group"] += [g["id"] for g in assert_success(foreign.get("/user_groups"))["user_groups"]]
    population.ids["stream"] += [s["stream_id"] for s in assert_success(foreign.get("/streams"))["streams"]]
    population.ids = {kind: sorted(set(ids)) for kind, ids in population.ids.items()}
    population.emails = sorted(set(population.emails))
    population.names = sorted({*population.names, *population.channels, *population.topics})
    return population
