from django.urls import path

from apps.presence import views

urlpatterns = [
    path("users/me/presence", views.OwnPresenceView.as_view()),
    path("realm/presence", views.RealmPresenceView.as_view()),
    path("users/<id:user_id>/presence", views.UserPresenceView.as_view()),
    path("users/<str:email>/presence", views.UserPresenceView.as_view()),
    path("users/me/status", views.OwnStatusView.as_view()),
    path("users/<id:user_id>/status", views.UserStatusView.as_view()),
]
