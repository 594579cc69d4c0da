from django.apps import AppConfig


class SnippetsConfig(AppConfig):
    name = "apps.snippets"
    label = "snippets"
    verbose_name = "saved snippets"
