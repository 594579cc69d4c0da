"""The organization's default email visibility moved to its defaults for new users
(apps.users RealmUserDefault.email_address_visibility), which users.0004 filled from it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("realms", "0004_audit_event_types"),
        ("users", "0004_user_settings"),
    ]

    operations = [
        migrations.RemoveField(model_name="realm", name="default_email_address_visibility"),
    ]
