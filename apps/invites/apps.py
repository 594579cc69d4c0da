from django.apps import AppConfig


class InvitesConfig(AppConfig):
    name = "apps.invites"
    label = "invites"
    verbose_name = "invitations"

    def ready(self) -> None:
        from apps.invites import receivers  # noqa: F401 (registers with the hooks of the apps below)
