"""Upgrading a database in use (`manage.py migrate`, as the README's upgrade says): every migration since
the first of the groups runs over an organization with its people, the system groups its migration
gives them and a channel with subscribers, so that each data migration has rows to change. On
PostgreSQL realms.0022 failed so ("cannot CREATE INDEX ... because it has pending trigger events":
the operator QA pass, upgrading a deployment of a few days before); tests migrate empty databases."""

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.realms.models import Realm
from apps.subscriptions.models import Stream, Subscription

ROLES = (100, 200, 300, 400, 600)  # owner, administrator, moderator, member, guest


def migrate_to(targets: list[tuple[str, str]]):
    """Migrate to `targets`: the models as the database then has them (every applied migration's, not
    only the targets' ancestors: users.0002's uuid was applied before groups.0001)."""
    MigrationExecutor(connection).migrate(targets)
    loader = MigrationExecutor(connection).loader
    return loader.project_state(list(loader.applied_migrations)).apps


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(900)  # most of the schema goes back and forward: minutes on a busy machine
def test_a_database_in_use_upgrades_through_every_migration():
    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        # Organizations and people, before their groups.
        before_groups = [("groups", "0001_initial")]
        old = migrate_to(before_groups)
        realm_id = old.get_model("realms", "Realm").objects.create(string_id="", name="In use").id
        OldUser = old.get_model("users", "User")
        user_ids = [
            OldUser.objects.create(
                realm_id=realm_id,
                delivery_email=f"p{role}@example.com",
                full_name=f"P {role}",
                api_key="k" * 32,
                role=role,
                uuid=uuid.uuid4(),
            ).id
            for role in ROLES
        ]
        # A channel with its subscribers, once channels exist (with the system groups given meanwhile).
        with_channels = [("subscriptions", "0002_stream_folder")]
        old = migrate_to(with_channels)
        groups = old.get_model("groups", "UserGroup").objects.filter(realm_id=realm_id, is_system_group=True)
        by_name = {group.name: group for group in groups}
        settings = ("add_subscribers", "administer_channel", "remove_subscribers", "send_message", "subscribe")
        stream = old.get_model("subscriptions", "Stream").objects.create(
            realm_id=realm_id, name="general", **{f"can_{name}_group": by_name["role:members"] for name in settings}
        )
        OldSubscription = old.get_model("subscriptions", "Subscription")
        OldSubscription.objects.bulk_create(
            OldSubscription(stream=stream, user_id=user_id, color="#76ce90") for user_id in user_ids
        )
    finally:
        # Forward whatever happened: the tests after this one need today's schema.
        MigrationExecutor(connection).migrate(leaves)

    realm = Realm.objects.get(id=realm_id)
    assert (realm.can_set_delete_message_policy_group.name, realm.can_set_topics_policy_group.name) == (
        "role:moderators",
        "role:members",
    )
    assert (realm.can_create_groups.name, realm.can_manage_all_groups.name) == ("role:members", "role:owners")
    stream = Stream.objects.get(realm=realm)
    assert stream.can_create_topic_group.name == "role:everyone"
    assert stream.can_delete_any_message_group.name == "role:nobody"
    assert Subscription.objects.filter(stream=stream).count() == len(ROLES)
