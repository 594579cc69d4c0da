"""Unicode emoji codes of statuses written as Zulip writes them, each code point in at least four hex
digits ("00a9" for ©; it was "a9"), as apps/messages/migrations/0012 does for reactions."""

from django.db import migrations


def pad_codes(apps, schema_editor):
    UserStatus = apps.get_model("presence", "UserStatus")
    short = UserStatus.objects.filter(reaction_type="unicode_emoji", emoji_code__regex=r"(^|-)[0-9a-f]{1,3}(-|$)")
    for status in short.only("emoji_code"):
        status.emoji_code = "-".join(part.rjust(4, "0") for part in status.emoji_code.split("-"))
        status.save(update_fields=["emoji_code"])


class Migration(migrations.Migration):
    dependencies = [("presence", "0003_user_status_plural")]

    operations = [migrations.RunPython(pad_codes, migrations.RunPython.noop)]
