from django.apps import AppConfig


class PresenceConfig(AppConfig):
    name = "apps.presence"
    label = "presence"
    verbose_name = "presence"

    def ready(self) -> None:
        from apps.presence import receivers  # noqa: F401 (registers with the hooks of the apps below)
