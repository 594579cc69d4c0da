from django.apps import AppConfig


class LinkifiersConfig(AppConfig):
    name = "apps.linkifiers"
    label = "linkifiers"
    verbose_name = "linkifiers"
