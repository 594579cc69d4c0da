"""The web app (/) and the sign-in pages, outside /api/v1 (config/urls.py mounts them at the root). A link's path is
Zulip's (/join/<key>/); the others without their trailing slash redirect to it."""

from django.urls import path
from django.views.generic import RedirectView

from apps.web import pages

urlpatterns = [
    path("", pages.AppView.as_view(), name="app"),
    path("join/<str:key>/", pages.JoinView.as_view(), name="join"),
    path("login/", pages.LoginView.as_view(), name="login"),
    path("login", RedirectView.as_view(url="/login/")),
    path("account/", pages.AccountView.as_view(), name="account"),
    path("account", RedirectView.as_view(url="/account/")),
    path("account/api_key/regenerate", pages.RegenerateApiKeyView.as_view(), name="regenerate_api_key"),
    path("account/bots/", pages.CreateBotView.as_view(), name="create_bot"),
    path("logout/", pages.LogoutView.as_view(), name="logout"),
    # A forgotten password, at Zulip's addresses.
    path("accounts/password/reset/", pages.PasswordResetView.as_view(), name="password_reset"),
    path("accounts/password/reset/done/", pages.PasswordResetSentView.as_view(), name="password_reset_sent"),
    path(
        "accounts/password/reset/<str:uidb64>/<str:token>/",
        pages.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
]
