"""Saved snippets (Zulip's /saved_snippets): text a user keeps to insert into messages. A user's
snippets are their own: changed by that user (a request) or by the server, never by someone else;
events go to the owner's queues only."""

from django.db import transaction

from apps.events.publish import send_event_on_commit
from apps.messages.actions.acting import check_acting_for
from apps.snippets.errors import TooManySavedSnippetsError
from apps.snippets.models import SavedSnippet
from apps.snippets.selectors import access_saved_snippet_by_id, saved_snippet_to_dict
from apps.users.models import User


@transaction.atomic
def do_create_saved_snippet(user: User, *, title: str, content: str, acting_user: User | None) -> SavedSnippet:
    """Keep a snippet (title and content checked by the caller). Refused past
    SavedSnippet.MAX_PER_USER, counted under a lock on the user.

    Emits: saved_snippets/add {saved_snippet} to the user.
    """
    check_acting_for(user, acting_user)
    User.objects.select_for_update().filter(id=user.id).first()
    if SavedSnippet.objects.filter(user=user).count() >= SavedSnippet.MAX_PER_USER:
        raise TooManySavedSnippetsError(SavedSnippet.MAX_PER_USER)
    snippet = SavedSnippet.objects.create(user=user, title=title, content=content)
    event = {"type": "saved_snippets", "op": "add", "saved_snippet": saved_snippet_to_dict(snippet)}
    send_event_on_commit(user.realm_id, event, [user.id])
    return snippet


@transaction.atomic
def do_edit_saved_snippet(
    user: User, snippet_id: int, *, title: str | None, content: str | None, acting_user: User | None
) -> None:
    """Change the user's snippet's title or content (nothing to change: no event, as in Zulip).
    "Saved snippet does not exist." for none such, deleted meanwhile included.

    Emits: saved_snippets/update {saved_snippet} to the owner.
    """
    check_acting_for(user, acting_user)
    snippet = access_saved_snippet_by_id(user, snippet_id, lock=True)
    if title is None and content is None:
        return
    snippet.title = snippet.title if title is None else title
    snippet.content = snippet.content if content is None else content
    snippet.save(update_fields=["title", "content"])
    event = {"type": "saved_snippets", "op": "update", "saved_snippet": saved_snippet_to_dict(snippet)}
    send_event_on_commit(user.realm_id, event, [user.id])


@transaction.atomic
def do_delete_saved_snippet(user: User, snippet_id: int, *, acting_user: User | None) -> None:
    """Delete the user's snippet: once ("Saved snippet does not exist." for none such, deleted
    meanwhile included).

    Emits: saved_snippets/remove {saved_snippet_id} to the owner.
    """
    check_acting_for(user, acting_user)
    access_saved_snippet_by_id(user, snippet_id, lock=True).delete()
    event = {"type": "saved_snippets", "op": "remove", "saved_snippet_id": snippet_id}
    send_event_on_commit(user.realm_id, event, [user.id])
