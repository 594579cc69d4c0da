"""The bot storage admin page: staff list and search a bot's entries, and change nothing."""

from django.test import Client

from apps.bot_storage.actions import do_set_bot_storage
from apps.bot_storage.models import BotStorageEntry
from tests.factories import BotFactory


def test_staff_list_and_search_entries_by_bot(staff, bot, realm, member):
    other = BotFactory(realm=realm, bot_owner=member, full_name="Counter Bot")
    do_set_bot_storage(bot, entries={"number": "3"}, acting_user=bot)
    do_set_bot_storage(other, entries={"ticket_id": "7"}, acting_user=other)
    mine, theirs = BotStorageEntry.objects.get(bot=bot), BotStorageEntry.objects.get(bot=other)

    page = staff.get("/admin/bot_storage/botstorageentry/").content.decode()
    assert f"/admin/bot_storage/botstorageentry/{mine.id}/" in page
    assert f"/admin/bot_storage/botstorageentry/{theirs.id}/" in page

    for query in (other.delivery_email, "Counter Bot"):
        found = staff.get("/admin/bot_storage/botstorageentry/", {"q": query}).content.decode()
        assert f"/admin/bot_storage/botstorageentry/{theirs.id}/" in found
        assert f"/admin/bot_storage/botstorageentry/{mine.id}/" not in found


def test_long_keys_and_values_are_shortened_in_the_list(staff, bot):
    """A bot may store millions of characters under one key (the bots QA pass: a page of 2 MB)."""
    do_set_bot_storage(bot, entries={"k" * 100_000: "v" * 100_000}, acting_user=bot)
    page = staff.get("/admin/bot_storage/botstorageentry/").content.decode()
    assert "k" * 79 + "…" in page
    assert "v" * 79 + "…" in page
    assert len(page) < 50_000


def test_entries_are_read_only(staff, bot):
    do_set_bot_storage(bot, entries={"number": "3"}, acting_user=bot)
    entry = BotStorageEntry.objects.get(bot=bot)
    detail = staff.get(f"/admin/bot_storage/botstorageentry/{entry.id}/change/")
    assert detail.status_code == 200
    assert b'name="_save"' not in detail.content
    url = f"/admin/bot_storage/botstorageentry/{entry.id}/change/"
    assert staff.post(url, {"key": "number", "value": "4"}).status_code == 403
    assert staff.get("/admin/bot_storage/botstorageentry/add/").status_code == 403
    assert staff.post(f"/admin/bot_storage/botstorageentry/{entry.id}/delete/", {"post": "yes"}).status_code == 403
    entry.refresh_from_db()
    assert entry.value == "3"


def test_no_page_for_people_who_are_not_staff(member, bot):
    do_set_bot_storage(bot, entries={"number": "3"}, acting_user=bot)
    browser = Client()
    browser.force_login(member)
    entry = BotStorageEntry.objects.get(bot=bot)
    for page in ("", f"{entry.id}/change/"):
        assert browser.get(f"/admin/bot_storage/botstorageentry/{page}")["Location"].startswith("/admin/login/")
