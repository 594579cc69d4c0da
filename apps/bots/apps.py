from django.apps import AppConfig


class BotsConfig(AppConfig):
    name = "apps.bots"
    label = "bots"
    verbose_name = "bots"

    def ready(self) -> None:
        from apps.bots import receivers  # noqa: F401 (registers with the hooks of the apps below)
