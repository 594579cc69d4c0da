from django.apps import AppConfig


class EmailNotificationsConfig(AppConfig):
    name = "apps.email_notifications"
    label = "email_notifications"
    verbose_name = "email notifications"

    def ready(self) -> None:
        from apps.email_notifications import notifications  # noqa: F401 (registers its hook and periodic job)
