from django.apps import AppConfig


class RealmsConfig(AppConfig):
    name = "apps.realms"
    label = "realms"
    verbose_name = "Organizations"
