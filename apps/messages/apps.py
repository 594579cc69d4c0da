from django.apps import AppConfig


class MessagesConfig(AppConfig):
    name = "apps.messages"
    label = "chat_messages"  # "messages" is Django's own messages framework
    verbose_name = "messages"

    def ready(self) -> None:
        from apps.messages import (  # noqa: F401
            receivers,  # registers with the hooks of the apps below
            retention,  # registers its periodic job
        )
