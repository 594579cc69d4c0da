from django.db import migrations, models
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce


def count_subscribers(apps, schema_editor):
    """The count of the channels that exist: their active subscriptions of active users."""
    Stream = apps.get_model("subscriptions", "Stream")
    Subscription = apps.get_model("subscriptions", "Subscription")
    counts = (
        Subscription.objects.filter(stream=OuterRef("pk"), active=True, user__is_active=True)
        .order_by()
        .values("stream")
        .annotate(n=Count("*"))
        .values("n")
    )
    Stream.objects.update(subscriber_count=Coalesce(Subquery(counts), 0))


class Migration(migrations.Migration):
    dependencies = [
        ("subscriptions", "0003_stream_move_groups"),
    ]

    operations = [
        migrations.AddField(
            model_name="stream",
            name="subscriber_count",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(count_subscribers, migrations.RunPython.noop),
    ]
