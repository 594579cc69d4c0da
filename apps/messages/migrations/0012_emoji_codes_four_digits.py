"""Unicode emoji codes of reactions written as Zulip writes them: each code point in at least four
hex digits ("00a9" for ©, "0031-20e3" for the keycap 1; they were "a9" and "31-20e3"), the codes the
server now takes and Zulip's clients send."""

from django.db import migrations


def pad_codes(apps, schema_editor):
    Reaction = apps.get_model("chat_messages", "Reaction")
    short = Reaction.objects.filter(reaction_type="unicode_emoji", emoji_code__regex=r"(^|-)[0-9a-f]{1,3}(-|$)")
    for reaction in short.only("emoji_code"):
        reaction.emoji_code = "-".join(part.rjust(4, "0") for part in reaction.emoji_code.split("-"))
        reaction.save(update_fields=["emoji_code"])


class Migration(migrations.Migration):
    dependencies = [("chat_messages", "0011_sqlite_unicode_upper")]

    operations = [migrations.RunPython(pad_codes, migrations.RunPython.noop)]
