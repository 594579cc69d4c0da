"""Search results: the match fields (`match_content`, `match_subject`) of messages a search narrow
finds, with the searched words highlighted."""

from collections.abc import Sequence

from django.utils.html import escape

from apps.messages.models import Message, UserMessage
from apps.messages.narrow import NarrowBuilder, Term, needs_user_messages, searched_words, with_flag_columns
from apps.messages.rendering import highlight
from apps.messages.selectors import visible_message_flags
from apps.subscriptions.topics import topic_for_client
from apps.users.models import User


def _match_fields(rendered_content: str, topic: str, is_channel: bool, words: set[str]) -> dict[str, str]:
    """Zulip's `match_content` and `match_subject`: the rendered content and the HTML-escaped topic
    ("general chat" for the empty one), search hits highlighted."""
    if is_channel:
        topic = topic_for_client(topic, allow_empty_topic_name=False)
    return {"match_content": highlight(rendered_content, words), "match_subject": highlight(escape(topic), words)}


def matching_ids(user: User, message_ids: Sequence[int], terms: list[Term]) -> set[int]:
    """Those of the messages the user may see that match the narrow."""
    visible = visible_message_flags(user, message_ids)
    if needs_user_messages(terms):
        query = with_flag_columns(UserMessage.objects.filter(user=user, message_id__in=visible))
        builder = NarrowBuilder(user, on_user_messages=True)
        return set(builder.apply(query, terms).values_list("message_id", flat=True))
    builder = NarrowBuilder(user, on_user_messages=False)
    return set(builder.apply(Message.objects.filter(id__in=visible), terms).values_list("id", flat=True))


def matches_narrow(user: User, message_ids: Sequence[int], terms: list[Term]) -> dict[str, dict[str, str]]:
    """GET /messages/matches_narrow: {id: match fields} for those of the messages the user may see
    that match the narrow."""
    matching = matching_ids(user, message_ids, terms)
    words = searched_words(terms, highlighted_only=True)
    return {
        str(message.id): _match_fields(message.rendered_content, message.topic, message.stream_id is not None, words)
        for message in Message.objects.filter(id__in=matching).order_by("id")
    }


def add_search_fields(messages: list[dict], terms: list[Term]) -> None:
    """The match fields on each message (wire shapes) of a search narrow, one query."""
    words = searched_words(terms, highlighted_only=True)
    rows = Message.objects.filter(id__in=[m["id"] for m in messages]).values_list("id", "rendered_content", "topic")
    found = {message_id: (html, topic) for message_id, html, topic in rows}
    for message in messages:
        html, topic = found[message["id"]]
        message.update(_match_fields(html, topic, message["type"] == "stream", words))
