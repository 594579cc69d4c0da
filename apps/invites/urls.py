from django.urls import path

from apps.invites import views

urlpatterns = [
    path("invites", views.InvitesView.as_view()),
    path("invites/<id:invite_id>", views.InviteView.as_view()),
    path("invites/<id:invite_id>/resend", views.ResendInviteView.as_view()),
    path("invites/multiuse", views.MultiuseInvitesView.as_view()),
    path("invites/multiuse/<id:invite_id>", views.MultiuseInviteView.as_view()),
    path("realm/test_welcome_bot_custom_message", views.TestWelcomeMessageView.as_view()),
]
