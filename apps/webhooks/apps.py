from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "apps.webhooks"
    label = "webhooks"
    verbose_name = "outgoing webhooks"

    def ready(self) -> None:
        from apps.webhooks import receivers  # noqa: F401 (registers with the hooks of the apps below)
