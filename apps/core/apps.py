from django.apps import AppConfig
from django.urls import register_converter


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        from apps.core import checks, tasks  # noqa: F401 (check --deploy's checks; background tasks in the metrics)
        from apps.core.converters import IdConverter, TextConverter, TextPathConverter

        register_converter(IdConverter, "id")
        register_converter(TextConverter, "text")
        register_converter(TextPathConverter, "textpath")
