"""Subscription colors as "#rrggbb" in lowercase (the mobile app reads six hex digits; its debug
builds assert lowercase): colors given as "#RGB", "#rgb" or in uppercase before are rewritten.

The normalization is frozen here: migrations must not change when the app's code does.
"""

from django.db import migrations


def normalize(apps, schema_editor):
    Subscription = apps.get_model("subscriptions", "Subscription")
    for sub in Subscription.objects.filter(color__regex=r"^#([0-9a-fA-F]{3}|.*[A-F].*)$").only("id", "color"):
        digits = sub.color[1:].lower()
        sub.color = "#" + ("".join(digit * 2 for digit in digits) if len(digits) == 3 else digits)
        sub.save(update_fields=["color"])


class Migration(migrations.Migration):

    dependencies = [
        ("subscriptions", "0011_stream_can_create_topic_group"),
    ]

    operations = [migrations.RunPython(normalize, migrations.RunPython.noop)]
