"""The rules of the realms actions, called directly: subdomains, names, settings."""

import pytest

from apps.core.errors import JsonableError
from apps.realms.actions import check_realm_name, check_string_id, do_change_realm_settings, do_create_realm
from apps.realms.models import AuditLogEventType, Realm, RealmAuditLog


@pytest.mark.parametrize(
    ("string_id", "msg"),
    [
        ("ab", "Subdomain needs to have length 3 or greater."),
        ("x" * 41, "Subdomain is too long (limit: 40 characters)."),
        ("Acme", "Subdomain can only have lowercase letters, numbers, and '-'s."),
        ("ac.me", "Subdomain can only have lowercase letters, numbers, and '-'s."),
        ("-acme", "Subdomain cannot start or end with a '-'."),
        ("acme-", "Subdomain cannot start or end with a '-'."),
        ("www", "Subdomain unavailable. Please choose a different one."),
        ("api", "Subdomain unavailable. Please choose a different one."),
        ("zephyr", "Subdomain unavailable. Please choose a different one."),  # taken
        ("", "The default organization already exists."),
    ],
)
def test_subdomains_follow_zulips_rules(realm, other_realm, string_id, msg):
    with pytest.raises(JsonableError) as refused:
        check_string_id(string_id)
    assert refused.value.msg == msg


@pytest.mark.parametrize("string_id", ["acme", "a-1", "x" * 40, "123"])
def test_valid_free_subdomains_are_accepted(db, string_id):
    assert check_string_id(string_id) == string_id


def test_the_default_organization_may_be_created_once(db):
    assert check_string_id("") == ""
    do_create_realm("", "Home", acting_user=None)
    with pytest.raises(JsonableError, match="The default organization already exists"):
        check_string_id("")


@pytest.mark.parametrize(
    ("name", "msg"),
    [
        ("   ", "Organization name cannot be blank."),
        ("x" * 41, "Organization name is too long (limit: 40 characters)."),
        # Into emails' subjects otherwise (the security QA pass).
        ("Acme\r\nBcc: x@example.org", "Invalid character in organization name, at position 5."),
        ("Acme\x00", "Invalid character in organization name, at position 5."),
    ],
)
def test_organization_names(name, msg):
    with pytest.raises(JsonableError) as refused:
        check_realm_name(name)
    assert refused.value.msg == msg
    assert check_realm_name("  Acme  ") == "Acme"


def test_a_refused_creation_creates_nothing(db):
    with pytest.raises(JsonableError):
        do_create_realm("acme", " ", acting_user=None)
    assert not Realm.objects.exists()


def test_settings_that_do_not_change_write_nothing(realm, owner):
    do_change_realm_settings(realm, {"name": realm.name, "password_auth_enabled": True}, acting_user=owner)
    assert not RealmAuditLog.objects.filter(realm=realm, event_type=AuditLogEventType.REALM_PROPERTY_CHANGED).exists()


def test_only_organization_settings_are_changed(realm, owner):
    with pytest.raises(ValueError, match="not organization settings"):
        do_change_realm_settings(realm, {"deactivated": True}, acting_user=owner)
    with pytest.raises(JsonableError, match="description is too long"):
        do_change_realm_settings(realm, {"description": "x" * (Realm.MAX_DESCRIPTION_LENGTH + 1)}, acting_user=owner)
    realm.refresh_from_db()
    assert (realm.deactivated, realm.description) == (False, "")
