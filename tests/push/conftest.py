import pytest

from tests.push.fake_bouncer import start_fake_bouncer


@pytest.fixture(autouse=True)
def push_service(settings):
    """The log backend stands for a push service set up (it records what a real one would send):
    registrations for encrypted notifications are accepted, as they are where notifications reach
    phones (test_devices.py checks the refusal where they cannot)."""
    settings.PUSH_NOTIFICATIONS_ENABLED = True


@pytest.fixture
def bouncer(settings):
    fake, stop = start_fake_bouncer()
    settings.PUSH_BACKEND = "apps.push.backends.BouncerBackend"
    settings.PUSH_BOUNCER_URL = fake.url
    settings.ZULIP_ORG_ID = "6cde5f7a-1f7e-4978-9716-49f69ebfc9fe"
    settings.ZULIP_ORG_KEY = "org-key"
    yield fake
    stop()
