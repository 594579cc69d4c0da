"""What the realms app does for the apps below it (registered in RealmsConfig.ready)."""

from apps.events.credentials import credentials_forgotten
from apps.realms.selectors import realm_cache


@credentials_forgotten.register
def forget_cached_organizations(realm_ids: list[int] | None) -> None:
    """Organizations cached by host go with the credentials: changed ones, or all of them."""
    if realm_ids is None:
        realm_cache.clear()
    else:
        realm_cache.forget(realm_ids)
