"""A Welcome Bot for each organization created before it had one.

A frozen copy of what apps.invites.actions.welcome.do_create_welcome_bot does (through
apps.users' do_create_user and apps.groups' system groups): migrations must not change when the
apps' code does. No events: clients registering afterwards see the bot in the organization.
"""

import secrets

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import migrations
from django.db.models.functions import Upper
from django.http.request import split_domain_port
from django.utils import timezone

FULL_NAME = "Welcome Bot"
EMAIL_LOCAL_PART = "welcome-bot"
MEMBER = 400
GENERIC_BOT = 1
EMAIL_VISIBLE_TO_EVERYONE = 1
MEMBER_GROUPS = ("role:members", "role:fullmembers")
USER_CREATED = 101


def email_domain(realm) -> str:
    """apps.users.selectors.fake_email_domain of the organization's host."""
    host = settings.EXTERNAL_HOST if realm.string_id == "" else f"{realm.string_id}.{settings.EXTERNAL_HOST}"
    hostname, _ = split_domain_port(host)
    try:
        validate_email(f"bot@{hostname}")
    except ValidationError:
        return settings.FAKE_EMAIL_DOMAIN
    return hostname


def api_key() -> str:
    while True:
        key = secrets.token_urlsafe(32).replace("-", "").replace("_", "")[:32]
        if len(key) == 32:
            return key


def create_welcome_bots(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    RealmAuditLog = apps.get_model("realms", "RealmAuditLog")
    User = apps.get_model("users", "User")
    UserGroup = apps.get_model("groups", "UserGroup")
    UserGroupMembership = apps.get_model("groups", "UserGroupMembership")
    WelcomeBot = apps.get_model("invites", "WelcomeBot")

    for realm in Realm.objects.exclude(id__in=WelcomeBot.objects.values("realm_id")).order_by("id"):
        domain = email_domain(realm)
        taken = set(
            User.objects.filter(realm=realm).annotate(upper=Upper("delivery_email")).values_list("upper", flat=True)
        )
        email, number = f"{EMAIL_LOCAL_PART}@{domain}", 1
        while email.upper() in taken:
            number += 1
            email = f"{EMAIL_LOCAL_PART}-{number}@{domain}"
        bot = User.objects.create(
            realm=realm,
            delivery_email=email,
            full_name=FULL_NAME,
            role=MEMBER,
            bot_type=GENERIC_BOT,
            api_key=api_key(),
            email_address_visibility=EMAIL_VISIBLE_TO_EVERYONE,
            password=make_password(None),
            date_joined=timezone.now(),
        )
        groups = UserGroup.objects.filter(realm=realm, is_system_group=True, name__in=MEMBER_GROUPS)
        UserGroupMembership.objects.bulk_create(UserGroupMembership(user_group=group, user=bot) for group in groups)
        WelcomeBot.objects.create(realm=realm, bot=bot)
        RealmAuditLog.objects.create(realm=realm, event_type=USER_CREATED, modified_user=bot, extra_data={"role": MEMBER})


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
        ("invites", "0002_welcomebot"),
        ("realms", "0003_audit_log"),
        # After every column users.0004 adds (they have no default in the database): the bot's row
        # is written with the model as it is there.
        ("users", "0004_user_settings"),
    ]

    operations = [migrations.RunPython(create_welcome_bots, migrations.RunPython.noop)]
