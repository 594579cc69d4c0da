"""Background tasks of the users app: the email answering a forgotten password
(apps/users/actions/password_reset.py), sent by the task worker."""

from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from apps.core.mail import send_or_retry, templated_email
from apps.core.tasks import retried_task
from apps.core.text import duration_text
from apps.realms.models import Realm
from apps.users.models import User
from apps.users.selectors import user_with_delivery_email

# Attempts while the mail server is down or refuses for now (the waits add up to about 10 minutes).
MAX_ATTEMPTS = 6


@retried_task(max_attempts=MAX_ATTEMPTS)
def send_password_reset_email(realm_id: int, email: str) -> None:
    """Email `email` a link setting a new password when it is the address of an active person of
    the organization, else why there is none (a deactivated account, or none with this address).
    Nothing for a deactivated organization, or one that no longer takes passwords."""
    realm = Realm.objects.filter(id=realm_id, deactivated=False, password_auth_enabled=True).first()
    if realm is None:
        return
    user = user_with_delivery_email(User.objects.filter(realm=realm, bot_type__isnull=True), email)
    context = {"realm_name": realm.name, "realm_url": realm.url, "email": email, "user": user}
    if user is not None and user.is_active:
        context["link"] = _link(realm, user)
        context["valid_for"] = duration_text(settings.PASSWORD_RESET_TIMEOUT)
    to = user.delivery_email if user is not None else email
    send_or_retry(templated_email("users/emails/password_reset", context, to), f"a password reset to {to}")


def _link(realm: Realm, user: User) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return f"{realm.url}{reverse('password_reset_confirm', kwargs={'uidb64': uid, 'token': token})}"
