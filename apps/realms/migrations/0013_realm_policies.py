"""Organization policies that were fixed: waiting_period_threshold (0: members are full members at
once, as before), topics_policy (channels that do not decide take the empty
topic, as before), the moderation request channel (none: reporting stays off) and
can_mention_many_users_group. Existing organizations keep what Parley applied before this setting
existed, everyone may use wildcard mentions (role:everyone); new ones start at Zulip's default
(role:administrators, apps.groups.models.REALM_SETTINGS).

The group is frozen here: migrations must not change when the app's code does.
"""

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models

EXISTING_GROUP = "role:everyone"


def keep_everyone(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.filter(can_mention_many_users_group__isnull=True).order_by("id"):
        group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=EXISTING_GROUP).first()
        if group is not None:
            realm.can_mention_many_users_group = group
            realm.save(update_fields=["can_mention_many_users_group"])


class Migration(migrations.Migration):

    dependencies = [
        ('groups', '0002_system_groups_of_existing_realms'),
        ('realms', '0012_can_add_custom_emoji_group'),
        ('subscriptions', '0002_stream_folder'),
    ]

    operations = [
        migrations.AddField(
            model_name='realm',
            name='can_mention_many_users_group',
            field=models.ForeignKey(help_text='Who may use wildcard mentions (@all, @topic) in channels and topics with more than 15 people.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='groups.usergroup'),
        ),
        migrations.AddField(
            model_name='realm',
            name='moderation_request_channel',
            field=models.ForeignKey(blank=True, help_text='The private channel where reports of messages arrive; empty: reporting is off.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='subscriptions.stream'),
        ),
        migrations.AddField(
            model_name='realm',
            name='topics_policy',
            field=models.CharField(choices=[('allow_empty_topic', 'Messages may go to the "general chat" topic'), ('disable_empty_topic', 'Messages must have a topic')], db_default='allow_empty_topic', default='allow_empty_topic', help_text='Whether messages to channels that do not decide it themselves may go without a topic.', max_length=32),
        ),
        migrations.AddField(
            model_name='realm',
            name='waiting_period_threshold',
            field=models.PositiveIntegerField(db_default=0, default=0, help_text='How many days after joining a member becomes a full member (role:fullmembers); 0: at once.', validators=[django.core.validators.MaxValueValidator(1000000)]),
        ),
        migrations.RunPython(keep_everyone, migrations.RunPython.noop),
    ]
