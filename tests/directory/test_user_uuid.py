"""Users' directory ids: one UUID each, generated once, kept, never reused; read-only in the admin."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from apps.users.actions.activation import do_deactivate_user, do_reactivate_user
from apps.users.actions.create_user import do_create_user
from apps.users.actions.user_settings import do_change_full_name
from apps.users.models import User


def test_new_users_get_distinct_uuids_that_never_change(realm, owner):
    users = [do_create_user(realm, f"u{i}@example.com", f"U {i}", acting_user=owner) for i in range(5)]
    assert len({user.uuid for user in [owner, *users]}) == 6
    first = users[0]
    before = first.uuid
    do_change_full_name(first, "Renamed", acting_user=owner)
    do_deactivate_user(first, acting_user=owner)
    do_reactivate_user(first, acting_user=owner)
    first.refresh_from_db()
    assert first.uuid == before


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(900)  # the whole schema goes back and forward: minutes on a busy machine
def test_migration_gives_existing_users_distinct_uuids():
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    try:
        executor.migrate([("users", "0001_initial")])
        old_apps = executor.loader.project_state([("users", "0001_initial")]).apps
        realm = old_apps.get_model("realms", "Realm").objects.create(string_id="", name="Before")
        OldUser = old_apps.get_model("users", "User")
        OldUser.objects.bulk_create(
            OldUser(realm=realm, delivery_email=f"old{i}@example.com", full_name=f"Old {i}", api_key="k" * 32)
            for i in range(2500)  # more than one batch of the migration
        )
    finally:
        # Forward again whatever happened: the tests after this one need today's schema.
        MigrationExecutor(connection).migrate(leaves)

    uuids = list(User.objects.values_list("uuid", flat=True))
    assert len(uuids) == 2501  # with the Welcome Bot the invites migrations give the organization
    assert None not in uuids
    assert len(set(uuids)) == 2501


def test_admin_shows_the_uuid_read_only(owner, member):
    owner.is_staff = owner.is_superuser = True
    owner.save()
    client = Client()
    client.force_login(owner)
    page = client.get(f"/admin/users/user/{member.id}/change/").content.decode()
    assert str(member.uuid) in page
    assert 'name="uuid"' not in page
