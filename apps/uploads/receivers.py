"""What the uploads app does for the apps below it (registered in UploadsConfig.ready)."""

from apps.messages.hooks import custom_emoji, message_content_saved
from apps.messages.models import Message
from apps.uploads.actions import do_sync_message_attachments
from apps.uploads.models import RealmEmoji
from apps.uploads.selectors import emoji_url


@message_content_saved.register
def claim_linked_files(message: Message) -> dict[str, bool]:
    """A message sent or edited claims the uploaded files it links (and releases the others)."""
    return do_sync_message_attachments(message)


@custom_emoji.register
def organization_emoji(realm_id: int) -> dict[str, dict]:
    """Reactions name custom emoji by id (emoji_code) and name; messages show their images."""
    rows = RealmEmoji.objects.filter(realm_id=realm_id).exclude(file_name="")
    return {
        str(emoji_id): {"name": name, "deactivated": deactivated, "source_url": emoji_url(realm_id, file_name)}
        for emoji_id, name, deactivated, file_name in rows.values_list("id", "name", "deactivated", "file_name")
    }
