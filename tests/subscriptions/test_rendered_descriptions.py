"""Channel and folder descriptions are rendered as messages are, as Zulip renders them: mentions (that
notify nobody), links to the channels the one writing knows of, emoji and the organization's
linkifiers, besides Markdown."""

from django.core.management import call_command

from apps.subscriptions.models import Stream
from tests.api import api_for, assert_success


def channel_link(stream) -> str:
    href = f"/#narrow/channel/{stream.id}-{stream.name}"
    return f'<a class="stream" data-stream-id="{stream.id}" href="{href}">#{stream.name}</a>'


def test_a_channels_description_renders_mentions_links_and_emoji(make_stream, member, admin):
    design = make_stream("design", member, admin)
    secret = make_stream("secret", admin, private=True)
    text = "Ask @**Adam Admin** in #**design** :tada: (not #**secret**), *please*"
    assert_success(
        api_for(member).post("/users/me/subscriptions", {"subscriptions": [{"name": "ops", "description": text}]})
    )
    ops = Stream.objects.get(name="ops")
    tada = '<span aria-label="tada" class="emoji emoji-1f389" role="img" title="tada">:tada:</span>'
    assert ops.rendered_description == (
        f'<p>Ask <span class="user-mention" data-user-id="{admin.id}">@Adam Admin</span> in {channel_link(design)} '
        f"{tada} (not #<strong>secret</strong>), <em>please</em></p>"
    )
    assert secret.id  # the member cannot know it exists: left as written
    assert_success(api_for(admin).patch(f"/streams/{ops.id}", {"description": "see #**secret**"}))
    ops.refresh_from_db()
    assert ops.rendered_description == f"<p>see {channel_link(secret)}</p>"  # the administrator knows it


def test_a_folders_description_renders_emoji_and_mentions(admin):
    body = {"name": "Ops", "description": "Run by @**Adam Admin** :wrench:"}
    folder_id = assert_success(api_for(admin).post("/channel_folders/create", body))["channel_folder_id"]
    [folder] = [
        f for f in assert_success(api_for(admin).get("/channel_folders"))["channel_folders"] if f["id"] == folder_id
    ]
    assert f'data-user-id="{admin.id}"' in folder["rendered_description"]
    assert 'class="emoji emoji-1f527"' in folder["rendered_description"]


def test_a_description_the_servers_tools_write_links_only_public_channels(make_stream, member, admin):
    design = make_stream("design", member, admin)
    make_stream("secret", admin, private=True)
    call_command("create_stream", "ops", "--realm", "", "--description", "see #**design**, not #**secret**")
    assert Stream.objects.get(name="ops").rendered_description == (
        f"<p>see {channel_link(design)}, not #<strong>secret</strong></p>"
    )
