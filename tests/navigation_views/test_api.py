"""Navigation views, as Zulip's: GET and POST /navigation_views, PATCH and DELETE
/navigation_views/{fragment} (fragments with slashes), Zulip's rules and texts, each user's own,
their events and the `navigation_views` state of POST /register."""

from apps.navigation_views.models import NavigationView
from tests.api import api_for, assert_error, assert_success

api = api_for


def listed(user) -> list[dict]:
    return assert_success(api(user).get("/navigation_views"))["navigation_views"]


def refused(user, method: str, path: str, params: dict, msg: str, status: int = 400, code: str = "BAD_REQUEST"):
    before = list(NavigationView.objects.order_by("id").values())
    assert_error(api(user).request(method, path, params), status, code, msg)
    assert list(NavigationView.objects.order_by("id").values()) == before


def test_built_in_and_own_views_are_kept_listed_and_told_to_the_user_alone(member, admin, capture_events):
    with capture_events(member, admin, event_types=["navigation_view"]) as received:
        assert_success(api(member).post("/navigation_views", {"fragment": "inbox", "is_pinned": "false"}))
        assert_success(api(member).post("/navigation_views", {
            "fragment": " narrow/channel/5-design/topic/plans ", "is_pinned": "true", "name": " Plans "}))  # fmt: skip
        assert_success(api(member).patch("/navigation_views/narrow/channel/5-design/topic/plans",
                                          {"name": "Design plans", "is_pinned": "false"}))  # fmt: skip
        assert_success(api(member).delete("/navigation_views/inbox"))
    mine = {"fragment": "narrow/channel/5-design/topic/plans", "is_pinned": False, "name": "Design plans"}
    assert listed(member) == [mine]
    assert listed(admin) == []
    assert received[member.id] == [
        {"type": "navigation_view", "op": "add",
         "navigation_view": {"fragment": "inbox", "is_pinned": False, "name": None}},
        {"type": "navigation_view", "op": "add",
         "navigation_view": {"fragment": "narrow/channel/5-design/topic/plans", "is_pinned": True, "name": "Plans"}},
        {"type": "navigation_view", "op": "update", "fragment": "narrow/channel/5-design/topic/plans",
         "data": {"is_pinned": False, "name": "Design plans"}},
        {"type": "navigation_view", "op": "remove", "fragment": "inbox"},
    ]  # fmt: skip
    assert received[admin.id] == []
    state = assert_success(api(member).post("/register", {"fetch_event_types": '["navigation_views"]'}))
    assert state["navigation_views"] == [mine]


def test_zulips_rules_and_texts(member, admin):
    post = {"fragment": "narrow/is/alerted", "is_pinned": "true", "name": "Alerts"}
    assert_success(api(member).post("/navigation_views", post))
    cases = [
        ({"fragment": "recent", "is_pinned": "true", "name": "Recent"}, "Built-in views cannot have a custom name."),
        ({"fragment": "narrow/is/unread", "is_pinned": "true"}, "Custom views must have a valid name."),
        ({"fragment": "narrow/is/alerted", "is_pinned": "true", "name": "Other"}, "Navigation view already exists."),
        ({"fragment": "narrow/is/unread", "is_pinned": "true", "name": "Alerts"}, "Navigation view already exists."),
        ({"fragment": "  ", "is_pinned": "true", "name": "X"}, "fragment cannot be blank"),
        ({"fragment": "narrow/is/unread", "is_pinned": "true", "name": " "}, "name cannot be blank"),
        ({"fragment": "narrow/is/unread", "is_pinned": "yes", "name": "X"}, "is_pinned is not valid JSON"),
        ({"fragment": "narrow/is/unread", "is_pinned": "true", "name": "x" * 101},
         "name is too long (limit: 100 characters)"),
    ]  # fmt: skip
    for params, msg in cases:
        code = "BAD_REQUEST" if "view" in msg else "REQUEST_VARIABLE_INVALID"
        refused(member, "POST", "/navigation_views", params, msg, code=code)
    refused(member, "POST", "/navigation_views", {"fragment": "x"}, "Missing 'is_pinned' argument",
            code="REQUEST_VARIABLE_MISSING")  # fmt: skip
    path = "/navigation_views/narrow/is/alerted"
    refused(member, "PATCH", path, {"name": "Alerts"}, "Navigation view already exists.")  # its own name too
    refused(member, "PATCH", "/navigation_views/inbox", {"name": "Mine"}, "Built-in views cannot have a custom name.")
    # Another person's view does not exist for them.
    refused(admin, "PATCH", path, {"is_pinned": "false"}, "Navigation view does not exist.", 404)
    refused(admin, "DELETE", path, {}, "Navigation view does not exist.", 404)
    refused(member, "DELETE", "/navigation_views/narrow/is/nothing", {}, "Navigation view does not exist.", 404)
    assert listed(member) == [{"fragment": "narrow/is/alerted", "is_pinned": True, "name": "Alerts"}]


def test_staff_see_them_read_only(staff, member):
    assert_success(api(member).post("/navigation_views", {"fragment": "narrow/is/dm", "is_pinned": "true",
                                                          "name": "People"}))  # fmt: skip
    page = staff.get("/admin/navigation_views/navigationview/")
    assert page.status_code == 200
    assert "People" in page.content.decode()
    view = NavigationView.objects.get()
    assert staff.post(f"/admin/navigation_views/navigationview/{view.id}/delete/", {"post": "yes"}).status_code == 403
    assert NavigationView.objects.filter(id=view.id).exists()
