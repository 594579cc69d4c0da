from django.apps import AppConfig


class DraftsConfig(AppConfig):
    name = "apps.drafts"
    label = "drafts"
    verbose_name = "drafts"

    def ready(self) -> None:
        from apps.drafts import receivers  # noqa: F401 (registers with the hooks of the apps below)
