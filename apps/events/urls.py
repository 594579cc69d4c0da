from django.urls import path

from apps.events import views

urlpatterns = [
    path("register", views.RegisterView.as_view()),
    path("events", views.EventsView.as_view()),
]
