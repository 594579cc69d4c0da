"""The users app's HTML pages, outside /api/v1 (config/urls.py mounts them under /accounts/)."""

from django.urls import path

from apps.users import pages

urlpatterns = [
    path("confirm_new_email/<str:key>", pages.ConfirmEmailChangeView.as_view(), name="confirm_email_change"),
]
