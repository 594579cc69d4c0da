"""Unicode emoji reactions whose name and code Zulip's table (taken up in 0012's release) pairs
otherwise, made to agree: stored before, "smile" was 1f604 (Zulip's "smile" is 1f642, 1f604 its
"big_smile"). The emoji people saw stays, under its name (apps.messages.emoji.agreed_emoji): clients
removing a reaction by name found none, and one emoji showed as two reactions."""

from django.db import migrations

from apps.messages.emoji import agreed_emoji


def agree(apps, schema_editor):
    Reaction = apps.get_model("chat_messages", "Reaction")
    unicode = Reaction.objects.filter(reaction_type="unicode_emoji")
    for name, code in unicode.values_list("emoji_name", "emoji_code").distinct():
        if (agreed := agreed_emoji(name, code)) is None:
            continue
        new_name, new_code = agreed
        pair = unicode.filter(emoji_name=name, emoji_code=code)
        if new_code == code:
            pair.update(emoji_name=new_name)
            continue
        for reaction in pair:
            # The same person's reaction with the new code already there: this one is it, twice.
            twin = unicode.filter(message_id=reaction.message_id, user_id=reaction.user_id, emoji_code=new_code)
            if twin.exists():
                reaction.delete()
            else:
                reaction.emoji_name, reaction.emoji_code = new_name, new_code
                reaction.save(update_fields=["emoji_name", "emoji_code"])


class Migration(migrations.Migration):
    dependencies = [("chat_messages", "0012_emoji_codes_four_digits")]

    operations = [migrations.RunPython(agree, migrations.RunPython.noop)]
