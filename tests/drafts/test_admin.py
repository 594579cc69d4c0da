"""The drafts admin page: staff list, search and filter drafts, and change nothing."""

from django.test import Client

from apps.drafts.actions import check_create_drafts
from apps.drafts.serializers import DraftFields


def make_draft(user, content: str):
    fields = DraftFields(type="", to=(), topic="", content=content)
    [draft] = check_create_drafts(user, drafts=[fields], acting_user=user)
    return draft


def test_staff_list_search_and_filter_drafts(staff, member, foreign_user):
    mine = make_draft(member, "the member's")
    foreign = make_draft(foreign_user, "another organization's")
    page = staff.get("/admin/drafts/draft/")
    assert page.status_code == 200
    assert f"/admin/drafts/draft/{mine.id}/" in page.content.decode()
    assert f"/admin/drafts/draft/{foreign.id}/" in page.content.decode()

    found = staff.get("/admin/drafts/draft/", {"q": "member@example.com"}).content.decode()
    assert f"/admin/drafts/draft/{mine.id}/" in found
    assert f"/admin/drafts/draft/{foreign.id}/" in found  # the same address, in another organization
    by_name = staff.get("/admin/drafts/draft/", {"q": "Zed"}).content.decode()
    assert f"/admin/drafts/draft/{mine.id}/" not in by_name
    assert f"/admin/drafts/draft/{foreign.id}/" in by_name

    filtered = staff.get("/admin/drafts/draft/", {"user__realm__id__exact": member.realm_id}).content.decode()
    assert f"/admin/drafts/draft/{mine.id}/" in filtered
    assert f"/admin/drafts/draft/{foreign.id}/" not in filtered


def test_drafts_are_read_only(staff, member):
    draft = make_draft(member, "kept as is")
    detail = staff.get(f"/admin/drafts/draft/{draft.id}/change/")
    assert detail.status_code == 200
    assert b'name="_save"' not in detail.content
    assert staff.post(f"/admin/drafts/draft/{draft.id}/change/", {"content": "changed"}).status_code == 403
    assert staff.get("/admin/drafts/draft/add/").status_code == 403
    assert staff.post(f"/admin/drafts/draft/{draft.id}/delete/", {"post": "yes"}).status_code == 403
    draft.refresh_from_db()
    assert draft.content == "kept as is"


def test_only_staff(member):
    browser = Client()
    browser.force_login(member)
    response = browser.get("/admin/drafts/draft/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
