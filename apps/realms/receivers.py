"""What the realms app does for the apps below it (registered in RealmsConfig.ready)."""

from django.db.models.signals import post_save
from django.dispatch import receiver

from apps.events.credentials import credentials_forgotten
from apps.events.publish import forget_credentials_on_commit
from apps.realms.models import Realm
from apps.realms.selectors import realm_cache


@credentials_forgotten.register
def forget_cached_organizations(realm_ids: list[int] | None) -> None:
    """Organizations cached by host go with the credentials: changed ones, or all of them."""
    if realm_ids is None:
        realm_cache.clear()
    else:
        realm_cache.forget(realm_ids)


@receiver(post_save, sender=Realm)
def forget_saved_organization(sender, instance: Realm, created: bool = False, **kwargs) -> None:
    """An organization written with save() (a command, a test) is no longer trusted as cached; the
    actions, which write with update(), say so themselves."""
    if not created:
        forget_credentials_on_commit(realm_ids=[instance.id])
