from django.apps import AppConfig


class GroupsConfig(AppConfig):
    name = "apps.groups"
    label = "groups"
    verbose_name = "user groups"

    def ready(self) -> None:
        from apps.groups import receivers  # noqa: F401 (registers with the hooks of the apps below)
