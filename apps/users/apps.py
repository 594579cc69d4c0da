from django.apps import AppConfig


class UsersConfig(AppConfig):
    name = "apps.users"
    label = "users"

    def ready(self) -> None:
        from apps.core.auth import register_accounts
        from apps.users import receivers  # noqa: F401 (registers with the hooks of the apps below)
        from apps.users.accounts import UserAccounts

        register_accounts(UserAccounts())
