"""The messages admin pages render and change nothing."""

from apps.messages.actions.send import do_send_message


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
