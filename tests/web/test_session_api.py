"""The browser's API: the same endpoints under /json/, authenticated by the session /login/ opens,
with the CSRF token required on unsafe methods; API keys are not accepted there, nor sessions on
/api/v1. The event queue too: POST /json/register, GET and DELETE /json/events."""

from urllib.parse import urlencode

import pytest
from django.test import Client

from apps.messages.models import Message, UserMessage
from tests.api import ApiClient, assert_error, assert_success, encode_params
from tests.web.conftest import browser, submit

RIGHT = "correct horse battery"  # the factories' password (tests.factories.UserFactory)


def logged_in(user, host: str = "testserver") -> Client:
    client = browser(host)
    response = submit(client, "/login/", {"email": user.delivery_email, "password": RIGHT})
    assert response.status_code == 302
    return client


def token(client: Client) -> str:
    """The CSRF token the page's script sends (Django renews it at login)."""
    return client.cookies["csrftoken"].value


def send(client: Client, content: str, stream, **headers):
    params = {"type": "stream", "to": stream.id, "topic": "web", "content": content}
    return client.post("/json/messages", encode_params(params), **headers)


def test_a_session_reads_and_writes_through_json(member, realm, make_stream):
    general = make_stream("general", member)
    client = logged_in(member)
    me = assert_success(client.get("/json/users/me"))
    assert (me["user_id"], me["full_name"]) == (member.id, member.full_name)
    sent = assert_success(send(client, "from the browser", general, HTTP_X_CSRFTOKEN=token(client)))
    message = Message.objects.get(id=sent["id"])
    assert (message.sender_id, message.content) == (member.id, "from the browser")
    # The same view answers both URL spaces alike.
    fetched = assert_success(client.get("/json/messages", {"anchor": "newest", "num_before": 5, "num_after": 0}))
    assert [m["id"] for m in fetched["messages"]][-1] == sent["id"]


def test_a_browser_is_the_website_client_and_its_messages_are_read_by_their_sender(member, make_stream):
    """As Zulip's process_client names browsers (the web app QA pass: the sender's own messages were
    unread, sent by client "Mozilla"); Zulip's own apps keep their names."""
    general = make_stream("general", member)
    client = logged_in(member)
    browser_agent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/156.0 Safari/537.36"
    for agent, expected in ((browser_agent, "website"), ("", "website"), ("ZulipElectron/5.12.0", "ZulipElectron")):
        sent = assert_success(send(client, "hi", general, HTTP_X_CSRFTOKEN=token(client), HTTP_USER_AGENT=agent))
        message = Message.objects.get(id=sent["id"])
        assert message.sending_client == expected
        assert UserMessage.objects.get(message=message, user=member).flags & UserMessage.READ
    shown = assert_success(client.get("/json/messages", {"anchor": "newest", "num_before": 1, "num_after": 0}))
    assert shown["messages"][0]["client"] == "ZulipElectron"
    params = {"type": "stream", "to": general.id, "topic": "web", "content": "hi"}
    sent = assert_success(ApiClient(member).post("/messages", params, HTTP_USER_AGENT=browser_agent))
    assert Message.objects.get(id=sent["id"]).sending_client == "Mozilla"  # an API key's client is its own


def test_an_unsafe_request_without_the_csrf_token_is_refused(member, make_stream):
    general = make_stream("general", member)
    client = logged_in(member)
    before = Message.objects.count()
    assert_error(send(client, "forged", general), 403, "CSRF_FAILED", "CSRF error: CSRF token missing.")
    wrong = send(client, "forged", general, HTTP_X_CSRFTOKEN="x" * 32)
    assert_error(wrong, 403, "CSRF_FAILED", "CSRF error: CSRF token from the 'X-Csrftoken' HTTP header incorrect.")
    assert Message.objects.count() == before
    # A safe method needs none.
    assert_success(client.get("/json/users/me"))


def test_the_csrf_token_may_come_in_the_form(member, make_stream):
    """As Django takes it (a form's `csrfmiddlewaretoken`): read by the CSRF check, so never
    reported as an ignored parameter (the hostile QA pass)."""
    general = make_stream("general", member)
    client = logged_in(member)
    params = {"type": "stream", "to": general.id, "topic": "web", "content": "hi", "csrfmiddlewaretoken": token(client)}
    sent = assert_success(client.post("/json/messages", encode_params(params)))
    assert "ignored_parameters_unsupported" not in sent
    assert Message.objects.get(id=sent["id"]).content == "hi"


def test_an_api_key_is_not_accepted_on_json(member):
    response = ApiClient(member).client.get("/json/users/me", **ApiClient(member).headers)
    assert_error(response, 401, "UNAUTHORIZED", "Not logged in: API authentication or user session required")
    # A challenge no browser answers with its password dialog.
    assert response["WWW-Authenticate"] == 'Session realm="zulip"'
    assert_success(ApiClient(member).get("/users/me"))  # the key itself is good


def test_a_session_is_not_accepted_on_api_v1(member):
    client = logged_in(member)
    response = client.get("/api/v1/users/me")
    assert_error(response, 401, "UNAUTHORIZED")
    assert response["WWW-Authenticate"] == 'Basic realm="zulip"'


def test_logged_out_requests_are_401(member):
    assert_error(browser().get("/json/users/me"), 401, "UNAUTHORIZED")
    assert_error(browser().post("/json/messages", {}), 401, "UNAUTHORIZED")
    client = logged_in(member)
    assert_success(client.get("/json/users/me"))
    assert client.post("/logout/", {"csrfmiddlewaretoken": token(client)}).status_code == 302
    assert_error(client.get("/json/users/me"), 401, "UNAUTHORIZED")


def test_a_session_counts_in_its_own_organization_only(member, foreign_user):
    client = logged_in(member)
    assert_error(client.get("/json/users/me", HTTP_HOST="zephyr.testserver"), 401, "UNAUTHORIZED")


def test_a_deactivated_users_session_ends(member):
    client = logged_in(member)
    member.is_active = False
    member.save()
    assert_error(client.get("/json/users/me"), 401, "UNAUTHORIZED")


@pytest.mark.django_db(transaction=True)
def test_the_event_queue_over_json(event_backend, member, make_stream):
    general = make_stream("general", member)
    client = logged_in(member)
    csrf = {"HTTP_X_CSRFTOKEN": token(client)}
    assert_error(client.post("/json/register", {}), 403, "CSRF_FAILED")
    queue = assert_success(
        client.post("/json/register", encode_params({"event_types": ["message"], "apply_markdown": True}), **csrf)
    )
    queue_id = queue["queue_id"]
    assert_success(send(client, "live", general, **csrf))
    poll = {"queue_id": queue_id, "last_event_id": -1, "dont_block": "true"}
    events = assert_success(client.get("/json/events", poll))["events"]
    assert [(e["type"], e["message"]["content"]) for e in events] == [("message", "<p>live</p>")]
    # No session, no events; a key does not open the browser's queue either.
    assert_error(browser().get("/json/events", poll), 401, "UNAUTHORIZED")
    assert_error(ApiClient(member).client.get("/json/events", poll, **ApiClient(member).headers), 401, "UNAUTHORIZED")
    # Deleting the queue is unsafe: the token is required.
    delete = f"queue_id={queue_id}"
    form = "application/x-www-form-urlencoded"
    assert_error(client.delete("/json/events", delete, content_type=form), 403, "CSRF_FAILED")
    assert_success(client.delete("/json/events", delete, content_type=form, **csrf))
    assert_error(client.get("/json/events", poll), 400, "BAD_EVENT_QUEUE_ID")


def test_a_browsers_polls_have_the_budget_of_polls(event_backend, member, settings):
    """As an API key's polls (the web app QA pass: counted in the general budget, a busy channel's
    events left the page's own requests refused, and the page's spent budget stopped its polls)."""
    settings.RATE_LIMIT_API_BY_USER = (2, 60)
    settings.RATE_LIMIT_EVENTS_BY_USER = (2, 60)
    client = logged_in(member)
    csrf = {"HTTP_X_CSRFTOKEN": token(client)}
    queue_id = assert_success(client.post("/json/register", encode_params({"event_types": ["message"]}), **csrf))[
        "queue_id"
    ]
    assert_success(client.get("/json/users/me"))
    assert_error(client.get("/json/users/me"), 429, "RATE_LIMIT_HIT")  # the general budget is spent
    poll = {"queue_id": queue_id, "last_event_id": -1, "dont_block": "true"}
    for remaining in ("1", "0"):
        response = client.get("/json/events", poll)
        assert_success(response)
        assert response["X-RateLimit-Remaining"] == remaining
    assert_error(client.get("/json/events", poll), 429, "RATE_LIMIT_HIT")  # and now the polls' one


def test_a_new_password_keeps_this_browser_logged_in_and_ends_the_others(member):
    """As Zulip's json_change_settings (update_session_auth_hash); through the API, every session ends."""
    client, other = logged_in(member), logged_in(member)
    first, second = "a brand new and unusual passphrase 51", "and yet another unusual passphrase 52"
    answer = client.patch("/json/settings", urlencode({"old_password": RIGHT, "new_password": first}),
                          content_type="application/x-www-form-urlencoded", HTTP_X_CSRFTOKEN=token(client))  # fmt: skip
    assert_success(answer)
    assert_success(client.get("/json/users/me"))
    assert_error(other.get("/json/users/me"), 401, "UNAUTHORIZED")
    assert_success(ApiClient(member).patch("/settings", {"old_password": first, "new_password": second}))
    assert_error(client.get("/json/users/me"), 401, "UNAUTHORIZED")


def test_fetch_api_key_over_json_is_ones_own_key_for_ones_password(member, admin):
    """Zulip's json_fetch_api_key (the security QA pass: /json/fetch_api_key took anyone's email and
    password with no session and no CSRF token, so any page could make browsers guess passwords)."""
    url = "/json/fetch_api_key"
    guess = encode_params({"username": admin.delivery_email, "password": RIGHT})
    assert_error(browser().post(url, guess), 401, "UNAUTHORIZED")
    client = logged_in(member)
    assert_error(client.post(url, guess), 403, "CSRF_FAILED")
    csrf = {"HTTP_X_CSRFTOKEN": token(client)}
    wrong = encode_params({"password": "not it"})
    assert_error(client.post(url, wrong, **csrf), 400, "BAD_REQUEST", "Password is incorrect.")
    # The session's own key, whoever the username names.
    answer = assert_success(client.post(url, guess, **csrf))
    assert (answer["api_key"], answer["email"], answer["user_id"]) == (member.api_key, member.delivery_email, member.id)
