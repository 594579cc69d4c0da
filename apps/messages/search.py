"""Search results: the match fields (`match_content`, `match_subject`) of messages a search narrow
finds, with the searched words highlighted: the words they begin, and on PostgreSQL, whose search
stems words (English), also the words of the text with the stem of a searched word ("fox" for a
search of "foxes"), as Zulip highlights what its full-text search matched."""

from collections.abc import Collection, Sequence

from django.db import connection
from django.utils.html import escape

from apps.messages.models import Message, UserMessage
from apps.messages.narrow import NarrowBuilder, Term, needs_user_messages, searched_words, with_flag_columns
from apps.messages.rendering import highlight, text_words
from apps.messages.selectors import visible_message_flags
from apps.subscriptions.topics import topic_for_client
from apps.users.models import User


def _match_fields(
    rendered_content: str, topic: str, is_channel: bool, words: set[str], stemmed: Collection[str] = ()
) -> dict[str, str]:
    """Zulip's `match_content` and `match_subject`: the rendered content and the HTML-escaped topic
    ("general chat" for the empty one), search hits highlighted."""
    if is_channel:
        topic = topic_for_client(topic, allow_empty_topic_name=False)
    return {
        "match_content": highlight(rendered_content, words, stemmed),
        "match_subject": highlight(escape(topic), words, stemmed),
    }


def stem_matches(words: set[str], texts: Sequence[str]) -> set[str]:
    """On PostgreSQL: the words of these texts (HTML) whose English stem is the stem of a searched
    word, as the search matched them (one query); elsewhere none (SQLite searches substrings)."""
    if connection.vendor != "postgresql" or not words:
        return set()
    candidates = set().union(*(text_words(text) for text in texts)) if texts else set()
    if not candidates:
        return set()
    every = sorted(candidates | words)
    with connection.cursor() as cursor:
        cursor.execute("SELECT w, (ts_lexize('english_stem', w))[1] FROM unnest(%s::text[]) AS w", [every])
        stems = {word: stem for word, stem in cursor.fetchall() if stem}
    wanted = {stems[word] for word in words if word in stems}
    return {word for word in candidates if stems.get(word) in wanted}


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
    messages = list(Message.objects.filter(id__in=matching).order_by("id"))
    stemmed = stem_matches(words, [text for m in messages for text in (m.rendered_content, escape(m.topic))])
    return {
        str(m.id): _match_fields(m.rendered_content, m.topic, m.stream_id is not None, words, stemmed) for m in messages
    }


def add_search_fields(messages: list[dict], terms: list[Term]) -> None:
    """The match fields on each message (wire shapes) of a search narrow, one query."""
    words = searched_words(terms, highlighted_only=True)
    rows = Message.objects.filter(id__in=[m["id"] for m in messages]).values_list("id", "rendered_content", "topic")
    found = {message_id: (html, topic) for message_id, html, topic in rows}
    stemmed = stem_matches(words, [text for html, topic in found.values() for text in (html, escape(topic))])
    for message in messages:
        html, topic = found[message["id"]]
        message.update(_match_fields(html, topic, message["type"] == "stream", words, stemmed))
