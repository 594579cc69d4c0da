from django.urls import path

from apps.realms import views

urlpatterns = [
    path("server_settings", views.ServerSettingsView.as_view()),
]
