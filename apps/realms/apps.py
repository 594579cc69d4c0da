from django.apps import AppConfig


class RealmsConfig(AppConfig):
    name = "apps.realms"
    label = "realms"
    verbose_name = "Organizations"

    def ready(self) -> None:
        from apps.realms import receivers  # noqa: F401 (registers with apps.events' hooks)
