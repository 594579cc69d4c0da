"""What the users app does when the apps below it change (registered in UsersConfig.ready)."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from apps.events.publish import forget_credentials_on_commit
from apps.realms.hooks import realm_created, realm_settings_changed
from apps.users.actions.notify import send_realm_update_events
from apps.users.actions.realm_defaults import do_create_realm_user_default
from apps.users.models import User

# A new organization gets its defaults for new users, before its first user is created.
realm_created.register(do_create_realm_user_default)
# Its people's clients learn of changed settings.
realm_settings_changed.register(send_realm_update_events)


@receiver([post_save, post_delete], sender=User)
def forget_cached_credentials(sender, instance: User, created: bool = False, **kwargs) -> None:
    """A user written with save() (the admin, a command, a test) is no longer trusted as cached by
    ordinary requests (apps.users.accounts); the actions, which write with update(), say so
    themselves. A new user has nothing cached."""
    if not created:
        forget_credentials_on_commit(user_ids=[instance.id])
