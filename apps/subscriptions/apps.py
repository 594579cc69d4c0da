from django.apps import AppConfig


class SubscriptionsConfig(AppConfig):
    name = "apps.subscriptions"
    label = "subscriptions"
    verbose_name = "channels and subscriptions"

    def ready(self) -> None:
        from apps.subscriptions import receivers  # noqa: F401 (registers with the hooks of the apps below)
