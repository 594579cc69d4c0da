from django.apps import AppConfig


class PushConfig(AppConfig):
    name = "apps.push"
    label = "push"
    verbose_name = "push notifications"

    def ready(self) -> None:
        from apps.push import checks, notifications  # noqa: F401 (registers the checks, and with the hooks of the apps below)
