"""Background tasks of push registrations: a push bouncer must know which tokens are whose."""

from apps.core.tasks import retried_task
from apps.push.backends import push_backend
from apps.users.models import User

# Attempts while the push service is down.
MAX_ATTEMPTS = 6


@retried_task(max_attempts=MAX_ATTEMPTS)
def register_token_with_service(user_id: int, kind: int, token: str, ios_app_id: str | None) -> None:
    user = User.objects.select_related("realm").filter(id=user_id).first()
    if user is not None:
        push_backend().register_token(user, kind, token, ios_app_id)


@retried_task(max_attempts=MAX_ATTEMPTS)
def unregister_token_with_service(user_id: int, kind: int, token: str) -> None:
    user = User.objects.select_related("realm").filter(id=user_id).first()
    if user is not None:
        push_backend().unregister_token(user, kind, token)
