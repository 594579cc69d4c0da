import pytest

from tests.push.fake_bouncer import start_fake_bouncer


@pytest.fixture
def bouncer(settings):
    fake, stop = start_fake_bouncer()
    settings.PUSH_BACKEND = "apps.push.backends.BouncerBackend"
    settings.PUSH_BOUNCER_URL = fake.url
    settings.ZULIP_ORG_ID = "6cde5f7a-1f7e-4978-9716-49f69ebfc9fe"
    settings.ZULIP_ORG_KEY = "org-key"
    yield fake
    stop()
