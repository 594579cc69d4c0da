from django.urls import path

from apps.bots import views

urlpatterns = [
    path("bots", views.BotsView.as_view()),
    path("bots/<id:bot_id>", views.BotView.as_view()),
    path("bots/<id:bot_id>/api_key", views.BotApiKeyView.as_view()),
    path("bots/<id:bot_id>/api_key/regenerate", views.RegenerateBotApiKeyView.as_view()),
]
