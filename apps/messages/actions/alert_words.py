"""Alert words: the words and phrases that flag, for a user, the messages containing them
(`has_alert_word`, found on send by apps.messages.alert_words)."""

from collections.abc import Iterable

from django.db import transaction

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.messages.actions.acting import check_acting_for
from apps.messages.alert_words import word_key
from apps.messages.models import AlertWord
from apps.messages.selectors import alert_words_of
from apps.users.models import User


def _send_alert_words(user: User) -> list[str]:
    """Emits: alert_words {alert_words: the whole list} to the user. Returns the list."""
    words = alert_words_of(user)
    send_event_on_commit(user.realm_id, {"type": "alert_words", "alert_words": words}, [user.id])
    return words


def clean_alert_words(words: Iterable[str]) -> list[str]:
    """As Zulip: each word stripped, the empty ones dropped; then one of each (in any case, the
    first spelling)."""
    cleaned: dict[str, str] = {}
    for word in words:
        word = word.strip()
        if word:
            cleaned.setdefault(word_key(word), word)
    return list(cleaned.values())


def check_add_alert_words(user: User, words: Iterable[str], *, acting_user: User | None) -> list[str]:
    """POST /users/me/alert_words (whose parameters limit each word, as sent, to
    AlertWord.MAX_LENGTH characters, as Zulip): the words cleaned, then do_add_alert_words.
    Returns the user's words."""
    check_acting_for(user, acting_user)
    words = clean_alert_words(words)
    for word in words:  # the API checked the words as sent; commands and tests call this too
        if len(word) > AlertWord.MAX_LENGTH:
            raise JsonableError(f"Alert word too long (limit: {AlertWord.MAX_LENGTH} characters)")
    return do_add_alert_words(user, words, acting_user=acting_user)


@transaction.atomic
def do_add_alert_words(user: User, words: Iterable[str], *, acting_user: User | None) -> list[str]:
    """Add these cleaned words (clean_alert_words); those the user has, in any case, are ignored.
    Refused if the user would have more than AlertWord.MAX_PER_USER words, counted under a lock on
    the user (two concurrent requests cannot both pass the cap). Returns the user's words.

    Emits: alert_words, if a word was added.
    """
    check_acting_for(user, acting_user)
    User.objects.select_for_update().filter(id=user.id).values_list("id", flat=True).first()
    have = set(AlertWord.objects.filter(user=user).values_list("key", flat=True))
    new: dict[str, str] = {}
    for word in words:
        key = word_key(word)
        if key not in have:
            new.setdefault(key, word)
    if len(have) + len(new) > AlertWord.MAX_PER_USER:
        raise JsonableError(f"Too many alert words (limit: {AlertWord.MAX_PER_USER})")
    if not new:
        return alert_words_of(user)
    AlertWord.objects.bulk_create(AlertWord(user=user, word=word, key=key) for key, word in new.items())
    return _send_alert_words(user)


def do_remove_alert_words(user: User, words: Iterable[str], *, acting_user: User | None) -> list[str]:
    """DELETE /users/me/alert_words: remove the user's words that are among these, in any case and
    stripped (those added were stripped); the others are ignored, as in Zulip. Returns the user's
    words.

    Emits: alert_words, if a word was removed.
    """
    check_acting_for(user, acting_user)  # before the transaction, which this joins without a savepoint
    keys = {key for key in (word_key(word.strip()) for word in words) if len(key) <= AlertWord.MAX_KEY_LENGTH}
    return _remove_alert_words(user, keys)


@transaction.atomic(savepoint=False)
def _remove_alert_words(user: User, keys: set[str]) -> list[str]:
    removed, _ = AlertWord.objects.filter(user=user, key__in=keys).delete()
    if not removed:
        return alert_words_of(user)
    return _send_alert_words(user)
