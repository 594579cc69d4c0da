from django.urls import path

from apps.bot_storage import views

urlpatterns = [
    path("bot_storage", views.BotStorageView.as_view()),
]
