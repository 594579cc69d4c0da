from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class EventsConfig(AppConfig):
    name = "apps.events"
    label = "events"

    def ready(self) -> None:
        from apps.events import receivers  # noqa: F401 (registers with apps.core's hooks)

        # Each app declares its event types and initial state in its own `events.py`.
        autodiscover_modules("events")
