"""GET /avatar/{user_id_or_email} and /avatar/{user_id_or_email}/medium: Zulip's redirect to a
person's picture (config/urls.py mounts them under /avatar/)."""

from django.urls import path

from apps.users import pages

urlpatterns = [
    path("<str:email_or_id>", pages.AvatarRedirectView.as_view()),
    path("<str:email_or_id>/medium", pages.AvatarRedirectView.as_view(medium=True)),
]
