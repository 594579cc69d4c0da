from django.apps import AppConfig


class DirectoryConfig(AppConfig):
    name = "apps.directory"
    label = "directory"
