"""Statuses' Unicode emoji made to agree with Zulip's table, as apps/messages/migrations/0013 does
for reactions ("smile" stored as 1f604 is 1f604's "big_smile")."""

from django.db import migrations

from apps.messages.emoji import agreed_emoji


def agree(apps, schema_editor):
    UserStatus = apps.get_model("presence", "UserStatus")
    unicode = UserStatus.objects.filter(reaction_type="unicode_emoji").exclude(emoji_code="")
    for name, code in unicode.values_list("emoji_name", "emoji_code").distinct():
        if (agreed := agreed_emoji(name, code)) is not None:
            unicode.filter(emoji_name=name, emoji_code=code).update(emoji_name=agreed[0], emoji_code=agreed[1])


class Migration(migrations.Migration):
    dependencies = [("presence", "0004_emoji_codes_four_digits")]

    operations = [migrations.RunPython(agree, migrations.RunPython.noop)]
