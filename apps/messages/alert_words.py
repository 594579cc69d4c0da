"""Which recipients' alert words a message contains (the `has_alert_word` flag).

As Zulip's AlertWordNotificationProcessor: the message's Markdown outside fenced code blocks, and
each word, lower-cased (str.lower); a word is found where it is not part of a longer word: at the
start of the text or after whitespace or one of `BEFORE`, and at the end or before whitespace or
one of `AFTER`. So "deploy" is found in "Deploy?", "(deploy)" and "`deploy`", but not in
"redeploy", "deploys" or a URL's ".../deploy/". (Zulip writes `"` after a word as `",` by
mistake: a word in quotes is found here, as its web app highlights it.)

The work grows with the message, not with the words: at each place a word may start, the
substrings ending where a word may end, of the lengths the words have, are looked up in a dict of
the words. A message of n characters takes at most n x (distinct lengths, at most
2 x AlertWord.MAX_LENGTH) lookups however many recipients and words there are; an automaton of the
recipients' words would instead be built anew for each message, in time and memory growing with
every word of every recipient.
"""

from collections.abc import Iterable, Mapping

from apps.core.markdown import without_fenced_code

BEFORE = frozenset("(\".,';[*`>")
AFTER = frozenset(")\"?:.,';]!*`")


def word_key(word: str) -> str:
    """What a word is matched and told apart by."""
    return word.lower()


def alerted_user_ids(content: str, users_by_key: Mapping[str, Iterable[int]]) -> set[int]:
    """The users whose words (`users_by_key`: word_key -> their ids) the message's Markdown contains."""
    if not users_by_key:
        return set()
    text = word_key(without_fenced_code(content))
    size = len(text)
    # Where a word may end: before whitespace or an AFTER character, or at the end.
    may_end = [char.isspace() or char in AFTER for char in text]
    may_end.append(True)
    lengths = sorted({len(key) for key in users_by_key})
    first_chars = {key[0] for key in users_by_key}
    remaining = dict(users_by_key)  # the words not found yet
    found: set[int] = set()
    for start in range(size):
        if text[start] not in first_chars or (start and not (text[start - 1].isspace() or text[start - 1] in BEFORE)):
            continue
        for length in lengths:
            end = start + length
            if end > size:
                break
            if may_end[end] and (user_ids := remaining.pop(text[start:end], None)) is not None:
                found.update(user_ids)
                if not remaining:
                    return found
    return found
