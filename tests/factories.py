"""Test data: factory-boy factories for organizations, users, bots and custom profile fields, and
functions that make channels and user groups through the actions.

Like the actions, the factories give every organization its system groups and every user the
memberships of their role, but send no events. Channels and groups are made by the actions
themselves (their rules are many); their events leave only if the test's transaction commits.
"""

import factory
from django.db import connection

from apps.groups.actions.groups import check_add_user_group
from apps.groups.actions.system_groups import do_create_system_groups
from apps.groups.models import REALM_SETTINGS, SystemGroups, UserGroup, UserGroupMembership
from apps.groups.selectors import system_groups
from apps.realms.models import EmailVisibility, Realm
from apps.realms.serializers import CHANNEL_SETTINGS
from apps.subscriptions.actions.channels import NewChannel, create_streams
from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions
from apps.subscriptions.models import Stream
from apps.users.actions.create_user import generate_api_key
from apps.users.models import BotType, CustomProfileField, Role, User


class RealmFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Realm
        django_get_or_create = ("string_id",)
        skip_postgeneration_save = True

    string_id = factory.Sequence(lambda n: f"org{n}")
    name = factory.LazyAttribute(lambda realm: f"Organization {realm.string_id or 'default'}")

    @factory.post_generation
    def system_groups(self, create, extracted, **kwargs):
        if create and not UserGroup.objects.filter(realm=self, is_system_group=True).exists():
            do_create_system_groups(self, acting_user=None)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    realm = factory.SubFactory(RealmFactory)
    delivery_email = factory.Sequence(lambda n: f"user{n}@example.com")
    full_name = factory.Sequence(lambda n: f"User Number {n}")
    role = Role.MEMBER
    api_key = factory.LazyFunction(generate_api_key)
    email_address_visibility = EmailVisibility.EVERYONE
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery")

    @factory.post_generation
    def save_password(self, create, extracted, **kwargs):
        if create:
            self.save(update_fields=["password"])

    @factory.post_generation
    def system_group_memberships(self, create, extracted, **kwargs):
        if create:
            groups = system_groups(self.realm_id)
            UserGroupMembership.objects.bulk_create(
                UserGroupMembership(user_group=groups[name], user=self) for name in SystemGroups.FOR_ROLE[self.role]
            )


class BotFactory(UserFactory):
    delivery_email = factory.Sequence(lambda n: f"bot{n}-bot@example.com")
    full_name = factory.Sequence(lambda n: f"Bot Number {n}")
    bot_type = BotType.GENERIC
    bot_owner = factory.SubFactory(UserFactory, realm=factory.SelfAttribute("..realm"))
    password = factory.PostGenerationMethodCall("set_unusable_password")


class CustomProfileFieldFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CustomProfileField

    realm = factory.SubFactory(RealmFactory)
    name = factory.Sequence(lambda n: f"Field {n}")
    field_type = CustomProfileField.FieldType.SHORT_TEXT
    order = factory.Sequence(lambda n: n)


def create_stream(
    realm: Realm,
    name: str,
    *subscribers: User,
    private: bool = False,
    history_public: bool | None = None,
    description: str = "",
    creator: User | None = None,
) -> Stream:
    """A channel as the actions create it, with these subscribers."""
    [stream] = create_streams(
        realm,
        [NewChannel(name, description)],
        invite_only=private,
        history_public_to_subscribers=history_public,
        acting_user=creator,
    )
    if subscribers:
        bulk_add_subscriptions(realm, [stream], list(subscribers), acting_user=None)
    return stream


def create_group(creator: User, name: str, members=(), **options) -> UserGroup:
    """A user group of `creator`'s organization, made by `creator` through the action."""
    return check_add_user_group(creator.realm, name, [m.id for m in members], acting_user=creator, **options)


def events_committed_so_far() -> None:
    """What the test did before now counts as committed: PostgreSQL numbers events when their
    transaction commits, which a test's never does, so number them now. Otherwise the first event
    published later would publish them first (they precede it) into queues registered after them."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS events_outbox_commit_seq IMMEDIATE")


def realm_admin_form(realm: Realm, **changes) -> dict:
    """The Django admin's organization form as it shows `realm` (every field it edits), with `changes`."""
    realm = Realm.objects.get(id=realm.id)
    form = {
        "name": realm.name,
        "description": realm.description,
        "welcome_message_custom_text": realm.welcome_message_custom_text,
        "message_content_delete_limit_seconds": realm.message_content_delete_limit_seconds or "",
        "message_content_edit_limit_seconds": realm.message_content_edit_limit_seconds or "",
        "move_messages_within_stream_limit_seconds": realm.move_messages_within_stream_limit_seconds or "",
        "move_messages_between_streams_limit_seconds": realm.move_messages_between_streams_limit_seconds or "",
        "message_edit_history_visibility_policy": realm.message_edit_history_visibility_policy,
        "topics_policy": realm.topics_policy,
        "waiting_period_threshold": realm.waiting_period_threshold,
        **{name: getattr(realm, f"{name}_id") or "" for name in CHANNEL_SETTINGS},
        **{name: getattr(realm, f"{name}_id") for name in REALM_SETTINGS},
    }
    booleans = ("password_auth_enabled", "allow_message_editing", "enable_read_receipts",
                "emails_restricted_to_domains", "disallow_disposable_email_addresses")  # fmt: skip
    for name in booleans:
        if getattr(realm, name):
            form[name] = "on"
    return {**form, **changes}
