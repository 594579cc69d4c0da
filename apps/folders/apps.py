from django.apps import AppConfig


class FoldersConfig(AppConfig):
    name = "apps.folders"
    label = "folders"
    verbose_name = "channel folders"
