from django.apps import AppConfig


class UploadsConfig(AppConfig):
    name = "apps.uploads"
    label = "uploads"
    verbose_name = "uploads and custom emoji"

    def ready(self) -> None:
        from apps.uploads import events, receivers  # noqa: F401 (registrations)
