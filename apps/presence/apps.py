from django.apps import AppConfig


class PresenceConfig(AppConfig):
    name = "apps.presence"
    label = "presence"
    verbose_name = "presence"
