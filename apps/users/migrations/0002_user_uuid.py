# The directory API's stable user ids. Existing users each get their own UUID: a column added with
# `default=uuid4` would give every existing row the one value computed when the migration runs.

import uuid

from django.db import migrations, models

BATCH_SIZE = 2000


def give_each_user_a_uuid(apps, schema_editor):
    User = apps.get_model("users", "User")
    ids = list(User.objects.filter(uuid__isnull=True).values_list("id", flat=True))
    for start in range(0, len(ids), BATCH_SIZE):
        batch = [User(id=user_id, uuid=uuid.uuid4()) for user_id in ids[start : start + BATCH_SIZE]]
        User.objects.bulk_update(batch, ["uuid"])


class Migration(migrations.Migration):

    dependencies = [
        ('users', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='user',
            name='uuid',
            field=models.UUIDField(editable=False, null=True, verbose_name='UUID'),
        ),
        migrations.RunPython(give_each_user_a_uuid, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='user',
            name='uuid',
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True, verbose_name='UUID'),
        ),
        migrations.AddIndex(
            model_name='user',
            index=models.Index(condition=models.Q(('is_active', True)), fields=['realm', 'uuid'], include=('full_name',), name='users_user_directory'),
        ),
    ]
