"""The lookups apps.core.auth authenticates with (registered in UsersConfig.ready)."""

from collections.abc import Callable

from apps.core.cache import instance_copy
from apps.events.credentials import Identity, credential_cache
from apps.realms.models import Realm
from apps.realms.selectors import realm_for_host
from apps.users.models import User
from apps.users.selectors import KEPT_READS, active_user_id_by_api_credentials, get_user_by_api_credentials


def user_for_credentials(host: str, realm: Realm, authorization: str, load: Callable[[], User]) -> User:
    """The user `load()` finds for these credentials, from the credential cache when they
    authenticated lately (apps.events.credentials: entries are dropped in every process when the
    user's row or the organization changes). Each request gets its own copy, with the organization
    of the request (the organization cache's).

    The copies of one entry share its KEPT_READS dict, where a selector may keep what it read about
    the user (their own profile data), dropped with the entry by the same changes."""
    identity = credential_cache.get(host, authorization)
    if identity is not None and identity.user is not None and identity.realm_id == realm.id and not realm.deactivated:
        user = instance_copy(identity.user)
        user.realm = realm
        return user
    generation = credential_cache.generation
    user = load()
    setattr(user, KEPT_READS, {})
    kept = instance_copy(user)
    kept._state.fields_cache = {}  # not the organization, nor anything a view cached on it
    credential_cache.put(
        host, authorization, Identity(user.id, user.realm_id, user=kept, send_only=user.is_incoming_webhook), generation
    )
    return user


class UserAccounts:
    """apps.core.auth.Accounts over the organizations and users of the database."""

    realm_for_host = staticmethod(realm_for_host)
    user_by_api_key = staticmethod(get_user_by_api_credentials)
    active_user_id_by_api_key = staticmethod(active_user_id_by_api_credentials)
    user_for_credentials = staticmethod(user_for_credentials)
