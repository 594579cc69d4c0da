from django.apps import AppConfig


class PushConfig(AppConfig):
    name = "apps.push"
    label = "push"
    verbose_name = "push notifications"

    def ready(self) -> None:
        from apps.push import notifications  # noqa: F401 (registers with the hooks of the apps below)
