from django.apps import AppConfig


class BotStorageConfig(AppConfig):
    name = "apps.bot_storage"
    label = "bot_storage"
    verbose_name = "bot storage"
