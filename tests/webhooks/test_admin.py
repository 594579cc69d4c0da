"""The Django admin of outgoing webhooks: a bot's service is edited and its token rotated through the
actions; failed deliveries are listed, to look at, and deleted once kept long enough."""

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from apps.core.tasks import PERIODIC_JOBS
from apps.users.models import BotService
from apps.webhooks.models import FailedDelivery
from apps.webhooks.receivers import prune_failed_deliveries


@pytest.fixture
def hook(make_hook_bot):
    return make_hook_bot("https://bots.example.com/hook")


def service_form(bot, service, **changes):
    data = {
        "full_name": bot.full_name,
        "role": bot.role,
        "services-TOTAL_FORMS": "1",
        "services-INITIAL_FORMS": "1",
        "services-MIN_NUM_FORMS": "0",
        "services-MAX_NUM_FORMS": "1000",
        "services-0-id": service.id,
        "services-0-bot": bot.id,
        "services-0-base_url": service.base_url,
        "services-0-interface": service.interface,
    }
    data.update({f"services-0-{name}": value for name, value in changes.items()})
    return data


def test_the_bot_page_shows_its_service_and_edits_its_url(staff, hook):
    service = hook.services.get()
    page = staff.get(f"/admin/users/bot/{hook.id}/change/").content.decode()
    assert "https://bots.example.com/hook" in page
    assert service.token in page
    path = f"/admin/users/bot/{hook.id}/change/"
    response = staff.post(path, service_form(hook, service, base_url="http://other.example.com/x", interface=2))
    assert response.status_code == 302, response.content.decode()[-2000:]
    service.refresh_from_db()
    assert (service.base_url, service.interface) == ("http://other.example.com/x", BotService.Interface.SLACK)
    refused = staff.post(path, service_form(hook, service, base_url="ftp://example.com/"))
    assert refused.status_code == 200
    service.refresh_from_db()
    assert service.base_url == "http://other.example.com/x"


def test_rotating_the_service_token(staff, hook):
    old = hook.services.get().token
    response = staff.post(
        "/admin/users/bot/", {"action": "rotate_service_token", "confirmed": "yes", "_selected_action": [hook.id]}
    )
    assert response.status_code == 302
    new = hook.services.get().token
    assert new != old
    assert re.fullmatch(r"[A-Za-z0-9]{32}", new)


def test_failed_deliveries_are_listed_and_read_only(staff, hook):
    failure = FailedDelivery.objects.create(
        bot=hook, message_id=7, trigger="mention", url="https://bots.example.com/hook", outcome="status",
        status=500, detail="boom", attempts=1,
    )  # fmt: skip
    page = staff.get("/admin/webhooks/faileddelivery/").content.decode()
    assert "non-2xx answer" in page
    assert staff.get(f"/admin/webhooks/faileddelivery/{failure.id}/change/").status_code == 200
    assert staff.get("/admin/webhooks/faileddelivery/add/").status_code == 403


def test_failed_deliveries_are_deleted_once_kept_as_long_as_failed_tasks(hook):
    def failure(message_id):
        return FailedDelivery.objects.create(
            bot=hook, message_id=message_id, trigger="mention", url="https://bots.example.com/hook",
            outcome="unavailable", attempts=3,
        )  # fmt: skip

    old, recent = failure(1), failure(2)
    kept = timedelta(seconds=settings.TASK_KEEP_FAILED_SECONDS)
    FailedDelivery.objects.filter(id=old.id).update(failed_at=timezone.now() - kept - timedelta(minutes=1))
    FailedDelivery.objects.filter(id=recent.id).update(failed_at=timezone.now() - kept + timedelta(minutes=1))
    assert prune_failed_deliveries() == 1
    assert list(FailedDelivery.objects.values_list("message_id", flat=True)) == [2]
    assert prune_failed_deliveries() == 0
    assert (3600, prune_failed_deliveries) in PERIODIC_JOBS  # the task worker runs it hourly
