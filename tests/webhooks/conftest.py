import pytest
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from apps.users.actions.create_user import do_create_user
from apps.users.models import BotType
from tests.tasks import run_ready_tasks
from tests.webhooks.fake_service import start_fake_service


@pytest.fixture(autouse=True)
def no_email_notifications(settings):
    """These tests count the tasks a message queues: email notifications (the bots' answers are
    direct messages to people who are offline) would add theirs (tests/email_notifications)."""
    settings.EMAIL_NOTIFICATIONS = False


@pytest.fixture
def service(settings):
    """A bot's service on 127.0.0.1, the only network the server may post to besides public ones."""
    settings.OUTGOING_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    settings.OUTGOING_WEBHOOK_TIMEOUT_SECONDS = 2.0
    fake = start_fake_service()
    yield fake
    fake.stop()


@pytest.fixture
def make_hook_bot(realm, owner):
    def make(url, *, full_name="Hook Bot", email="hook-bot@example.com"):
        return do_create_user(
            realm, email, full_name, bot_type=BotType.OUTGOING_WEBHOOK, bot_owner=owner, service_url=url,
            acting_user=None,
        )  # fmt: skip

    return make


@pytest.fixture
def hook_bot(make_hook_bot, service):
    return make_hook_bot(service.url)


def run_tasks_and_retries() -> int:
    """Runs the queued tasks, and the retries they queue for later as if their time had come;
    returns how many ran."""
    ran = 0
    while True:
        ran += run_ready_tasks()
        later = DBTaskResult.objects.filter(status=TaskResultStatus.READY)
        if not later.exists():
            return ran
        later.update(run_after=timezone.now())
