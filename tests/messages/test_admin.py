"""The messages admin pages (messages, reactions, muted users, alert words) render and change nothing."""

from apps.messages.actions.alert_words import check_add_alert_words
from apps.messages.actions.send import do_send_message
from apps.messages.models import AlertWord, Reaction
from tests.api import api_for, assert_success


def test_message_admin_lists_and_searches_read_only(staff, member, admin):
    message = do_send_message(member, dm_with=[admin], content="findable words", acting_user=member)
    page = staff.get("/admin/chat_messages/message/?q=findable")
    assert page.status_code == 200
    assert f"/admin/chat_messages/message/{message.id}/" in page.content.decode()
    detail = staff.get(f"/admin/chat_messages/message/{message.id}/change/")
    assert detail.status_code == 200
    assert b'name="_save"' not in detail.content  # read-only
    assert staff.get("/admin/chat_messages/message/add/").status_code == 403
    assert staff.get("/admin/chat_messages/muteduser/").status_code == 200


def test_alert_word_admin_lists_and_searches_read_only(staff, member, admin):
    check_add_alert_words(member, ["Deploy", "outage"], acting_user=member)
    check_add_alert_words(admin, ["lunch"], acting_user=admin)
    page = staff.get("/admin/chat_messages/alertword/?q=deploy").content.decode()
    assert "Deploy" in page
    assert "lunch" not in page
    word = AlertWord.objects.get(word="Deploy")
    detail = staff.get(f"/admin/chat_messages/alertword/{word.id}/change/")
    assert detail.status_code == 200
    assert b'name="_save"' not in detail.content  # changes go through the API, which tells the user's clients
    assert staff.get("/admin/chat_messages/alertword/add/").status_code == 403
    assert staff.post(f"/admin/chat_messages/alertword/{word.id}/delete/", {"post": "yes"}).status_code == 403
    assert AlertWord.objects.count() == 3


def test_reactions_are_listed_read_only(staff, member, admin):
    message = do_send_message(member, dm_with=[admin], content="react to me", acting_user=member)
    assert_success(api_for(admin).post(f"/messages/{message.id}/reactions", {"emoji_name": "octopus"}))
    page = staff.get("/admin/chat_messages/reaction/?q=octopus").content.decode()
    assert "1f419" in page
    assert staff.get("/admin/chat_messages/reaction/add/").status_code == 403
    reaction = Reaction.objects.get()
    detail = staff.get(f"/admin/chat_messages/reaction/{reaction.id}/change/")
    assert detail.status_code == 200
    assert b'name="_save"' not in detail.content
    assert staff.post(f"/admin/chat_messages/reaction/{reaction.id}/delete/", {"post": "yes"}).status_code == 403
    # The message's page lists its reactions too, read-only.
    page = staff.get(f"/admin/chat_messages/message/{message.id}/change/").content.decode()
    assert "octopus" in page
    assert admin.full_name in page
    assert 'name="reactions-0-DELETE"' not in page
    assert Reaction.objects.count() == 1


def test_message_admin_shows_the_edit_history(staff, make_stream, member, admin):
    design, kitchen = make_stream("design", member, admin), make_stream("kitchen", member, admin)
    message = do_send_message(member, stream=design, topic="lunch", content="hello", acting_user=member)
    params = {"stream_id": kitchen.id, "topic": "food", "send_notification_to_new_thread": "false"}
    assert_success(api_for(admin).patch(f"/messages/{message.id}", params))
    detail = staff.get(f"/admin/chat_messages/message/{message.id}/change/").content.decode()
    assert (
        f"by user {admin.id}: topic &#x27;lunch&#x27; → &#x27;food&#x27;, channel {design.id} → {kitchen.id}" in detail
    )
    assert staff.get("/admin/chat_messages/notificationbot/").status_code == 200
