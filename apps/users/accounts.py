"""The lookups apps.core.auth authenticates with (registered in UsersConfig.ready)."""

from apps.realms.selectors import realm_for_host
from apps.users.selectors import active_user_id_by_api_credentials, get_user_by_api_credentials


class UserAccounts:
    """apps.core.auth.Accounts over the organizations and users of the database."""

    realm_for_host = staticmethod(realm_for_host)
    user_by_api_key = staticmethod(get_user_by_api_credentials)
    active_user_id_by_api_key = staticmethod(active_user_id_by_api_credentials)
