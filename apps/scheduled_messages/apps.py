from django.apps import AppConfig


class ScheduledMessagesConfig(AppConfig):
    name = "apps.scheduled_messages"
    label = "scheduled_messages"
    verbose_name = "scheduled messages"

    def ready(self) -> None:
        from apps.scheduled_messages import events, receivers  # noqa: F401 (register with the apps below)
