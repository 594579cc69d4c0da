"""Message content: Markdown to safe HTML, with Zulip's mentions and emoji.

`@**Full Name**` (or `@**Full Name|id**`) mentions a user and sets their `mentioned` flag;
`@_**Full Name**` is a silent mention (shown, no flag); `@**all**`, `@**everyone**`,
`@**channel**` and `@**stream**` mention the channel, `@**topic**` the topic's participants.
`@*group*` mentions a user group (`@_*group*` silently; apps.messages.group_mentions).
Inside a quote (`> ...`, ```` ```quote ````) every mention is silent, as in Zulip: quoting a
message notifies nobody again.
`#**channel**`, `#**channel>topic**` and `#**channel>topic@id**` link a channel, a topic or a
message, as Zulip's do.
The organization's linkifiers link what they match outside code and links (apps.linkifiers).
`:name:` and Unicode emoji outside code are marked as Zulip marks them (apps.messages.emoji).
"""

import html
import re
import secrets
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import quote

from apps.core.converters import is_ascii_digits
from apps.core.markdown import render_markdown
from apps.linkifiers.patterns import LinkifierRules
from apps.messages.emoji import emoji_in_text
from apps.realms.limits import EMPTY_TOPIC_DISPLAY_NAME

MENTION_RE = re.compile(r"@(_?)\*\*([^*\n]+?)\*\*")
# @*group* or @_*group*, after a space, a line's start, a quote or an opening bracket (Zulip's
# BEFORE_MENTION_ALLOWED_REGEX): "a@*b*" mentions nobody.
GROUP_MENTION_RE = re.compile(r"(?<![^\s'\"({\[/<])@(_?)\*([^*\n]+)\*")
# #**channel** or #**channel>topic** (a channel's name has no ">").
CHANNEL_LINK_RE = re.compile(r"#\*\*([^*>\n]+?)(?:>([^*\n]*?))?\*\*")  # the topic may be the empty one
# A topic link's "topic@id": a message of that topic.
MESSAGE_IN_TOPIC_RE = re.compile(r"(.*)@([0-9]+)")
STREAM_WILDCARDS = {"all", "everyone", "channel", "stream"}
TOPIC_WILDCARDS = {"topic"}
# Zulip's global times: <time:2024-05-01T10:00:00Z> (or a Unix time), shown in each reader's zone.
TIME_RE = re.compile(r"<time:([^>]*?)>")
LINK_RE = re.compile(r"<a\s")
# An image that is not an emoji (Zulip's has_image: custom emoji do not count).
IMAGE_RE = re.compile(r'<img\s(?![^>]*class="emoji")')
HTML_TAG_RE = re.compile(r"(<[^>]*>)")
CODE_TAG_RE = re.compile(r"</?code[\s>]")
BLOCKQUOTE_TAG_RE = re.compile(r"</?blockquote[\s>]")
LINK_TAG_RE = re.compile(r"</?a[\s>]")


@dataclass
class Rendered:
    html: str
    mentioned_user_ids: set[int] = field(default_factory=set)
    # The groups mentioned (not silently): their members are mentioned (group_mentions).
    mentioned_group_ids: set[int] = field(default_factory=set)
    stream_wildcard: bool = False
    topic_wildcard: bool = False

    @property
    def has_link(self) -> bool:
        return bool(LINK_RE.search(self.html))

    @property
    def has_image(self) -> bool:
        return bool(IMAGE_RE.search(self.html))


# A group a mention may name: (id, name as shown, deactivated).
GroupTarget = tuple[int, str, bool]


def silent_mention(user) -> str:
    """The syntax of a silent mention of `user` (a User): shown as a mention, notifying nobody, as
    the Notification Bot writes people into its notices (Zulip's silent_mention_syntax_for_user)."""
    return f"@_**{user.full_name}|{user.id}**"


def encode_hash_component(text: str) -> str:
    """Zulip's hash_util_encode: the form of a channel or topic name inside a narrow link."""
    return quote(text, safe="").replace(".", "%2E").replace("%", ".")


def channel_narrow(stream_id: int, name: str, topic: str | None = None) -> str:
    """The narrow of a channel, or of one of its topics, in Zulip's links (`#narrow/channel/...`)."""
    path = f"#narrow/channel/{stream_id}-{encode_hash_component(name.replace(' ', '-'))}"
    return path if topic is None else f"{path}/topic/{encode_hash_component(topic)}"


def topic_link_text(channel: str, topic: str) -> str:
    """What a link to a topic reads, as HTML: `#channel > topic`, the empty topic by its display
    name in italics, as Zulip's (`#**general>**` is a link to "general chat")."""
    shown = html.escape(topic) if topic else f"<em>{EMPTY_TOPIC_DISPLAY_NAME}</em>"
    return f"#{html.escape(channel)} &gt; {shown}"


def render_message(
    content: str,
    users_by_name: dict[str, list[tuple[int, str]]],
    user_ids: set[int],
    linkifiers: LinkifierRules | None = None,
    channels_by_name: dict[str, tuple[int, str]] | None = None,
    custom_emoji: dict[str, str] | None = None,
    groups_by_name: dict[str, GroupTarget] | None = None,
) -> Rendered:
    """Render `content`. `users_by_name` maps lower-cased full names to (id, full name) of the
    organization's active users; `user_ids` is the set of their ids (for `@**Name|id**`);
    `linkifiers` are the organization's; `channels_by_name` maps lower-cased names to (id, name) of
    the channels the content may link (a link to any other is left as written, as in Zulip);
    `custom_emoji` maps names to image URLs of the organization's active custom emoji it may name;
    `groups_by_name` the names of the named groups it may mention to what they are."""
    nonce = secrets.token_hex(8)
    # token -> what it shows, and what it shows inside a quote (a mention's silent form)
    replacements: dict[str, tuple[str, str]] = {}
    # token -> (what the mention does: ("user", id), ("group", id), ("stream", None), ("topic", None)
    # or None, as written)
    effects: dict[str, tuple[tuple[str, int | None] | None, str]] = {}
    result = Rendered(html="")

    def mention(match: re.Match) -> str:
        silent, text = match.group(1) == "_", match.group(2).strip()
        name, _, id_text = text.partition("|")
        span, effect = None, None
        if not id_text and name.lower() in STREAM_WILDCARDS | TOPIC_WILDCARDS:
            if not silent:
                effect = ("stream", None) if name.lower() in STREAM_WILDCARDS else ("topic", None)
            css = "topic-mention" if name.lower() in TOPIC_WILDCARDS else "user-mention channel-wildcard-mention"
            span = (css, "data-user-id", "*", name)
        else:
            target = _find_user(name, id_text, users_by_name, user_ids)
            if target is not None:
                user_id, full_name = target
                if not silent:
                    effect = ("user", user_id)
                span = ("user-mention", "data-user-id", user_id, full_name)
        if span is None:
            return match.group(0)  # not a mention: left as written
        token = f"zmention{nonce}x{len(replacements)}z"
        replacements[token] = (_mention_span(*span, silent), _mention_span(*span, silent=True))
        effects[token] = (effect, match.group(0))
        return token

    def group_mention(match: re.Match) -> str:
        found = (groups_by_name or {}).get(match.group(2))
        if found is None:
            return match.group(0)
        group_id, name, deactivated = found
        silent = match.group(1) == "_" or deactivated
        token = f"zmention{nonce}x{len(replacements)}z"
        span = ("user-group-mention", "data-user-group-id", group_id, name)
        replacements[token] = (_mention_span(*span, silent), _mention_span(*span, silent=True))
        effects[token] = (None if silent else ("group", group_id), match.group(0))
        return token

    def channel_link(match: re.Match) -> str:
        found = (channels_by_name or {}).get(match.group(1).strip().lower())
        topic = match.group(2).strip() if match.group(2) is not None else None
        if found is None:
            return match.group(0)
        stream_id, name = found
        message = MESSAGE_IN_TOPIC_RE.fullmatch(topic) if topic is not None else None
        if message is not None:  # #**channel>topic@id**: a message
            topic = message.group(1).strip()
            href = html.escape(f"/{channel_narrow(stream_id, name, topic)}/near/{message.group(2)}")
            link = f'<a class="message-link" href="{href}">{topic_link_text(name, topic)} @ 💬</a>'
        elif topic is None:
            href = html.escape("/" + channel_narrow(stream_id, name))
            link = f'<a class="stream" data-stream-id="{stream_id}" href="{href}">#{html.escape(name)}</a>'
        else:
            href = html.escape("/" + channel_narrow(stream_id, name, topic))
            text = topic_link_text(name, topic)
            link = f'<a class="stream-topic" data-stream-id="{stream_id}" href="{href}">{text}</a>'
        token = f"zmention{nonce}x{len(replacements)}z"
        replacements[token] = (link, link)
        effects[token] = (None, match.group(0))
        return token

    def global_time(match: re.Match) -> str:
        token = f"zmention{nonce}x{len(replacements)}z"
        shown = _time_element(match.group(1))
        replacements[token] = (shown, shown)
        effects[token] = (None, match.group(0))
        return token

    prepared = TIME_RE.sub(global_time, content)
    prepared = GROUP_MENTION_RE.sub(group_mention, MENTION_RE.sub(mention, prepared))
    prepared = CHANNEL_LINK_RE.sub(channel_link, prepared)
    text_links = _linkifier_links(linkifiers, re.compile(f"zmention{nonce}x[0-9]+z")) if linkifiers else None
    rendered = _with_emoji(render_markdown(prepared, text_links=text_links), custom_emoji or {})
    shown = _put_in(rendered, re.compile(f"zmention{nonce}x[0-9]+z"), replacements, effects)
    for token in shown.mentions:
        effect = effects[token][0]
        if effect == ("stream", None):
            result.stream_wildcard = True
        elif effect == ("topic", None):
            result.topic_wildcard = True
        elif effect is not None and effect[0] == "group":
            result.mentioned_group_ids.add(effect[1])
        elif effect is not None:
            result.mentioned_user_ids.add(effect[1])
    result.html = shown.html
    return result


@dataclass
class _Shown:
    html: str
    mentions: set[str]  # the placeholders shown as live mentions (not in code, a quote or a tag)


def _put_in(rendered: str, token_re: re.Pattern, replacements: dict, effects: dict) -> _Shown:
    """The rendered HTML with its placeholders replaced, each by what its place asks, as in Zulip:
    inside code or a link (a URL written out, whose text is the address), the text as written (it
    mentions nobody, and no link lands in a link); inside a tag (a link's address), the same,
    escaped for the attribute; inside a quote, the silent form; elsewhere, the mention or link."""
    mentions: set[str] = set()

    def live(match: re.Match) -> str:
        mentions.add(match.group(0))
        return replacements[match.group(0)][0]

    parts = HTML_TAG_RE.split(rendered)
    literal = quote = 0  # depths: inside code or a link; inside a quote
    for index, part in enumerate(parts):
        if "zmention" not in part and index % 2 == 0:
            continue
        if index % 2:  # a tag
            step = -1 if part[1] == "/" else 1
            if CODE_TAG_RE.match(part) or LINK_TAG_RE.match(part):
                literal += step
            elif BLOCKQUOTE_TAG_RE.match(part):
                quote += step
            parts[index] = token_re.sub(lambda m: html.escape(effects[m.group(0)][1]), part)
        elif literal:
            parts[index] = token_re.sub(lambda m: html.escape(effects[m.group(0)][1], quote=False), part)
        elif quote:
            parts[index] = token_re.sub(lambda m: replacements[m.group(0)][1], part)
        else:
            parts[index] = token_re.sub(live, part)
    return _Shown("".join(parts), mentions)


def _time_element(written: str) -> str:
    """Zulip's <time datetime="...Z">as written</time> (ISO 8601, without a zone UTC; or a Unix
    time), or its "Invalid time format" error."""
    try:
        try:
            when = datetime.fromisoformat(written.strip())
        except ValueError:
            when = datetime.fromtimestamp(float(written), tz=UTC)
        when = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        return f'<span class="timestamp-error">Invalid time format: {html.escape(written)}</span>'
    return f'<time datetime="{when.isoformat().replace("+00:00", "Z")}">{html.escape(written)}</time>'


# A live mention in rendered HTML, as _mention_span writes it (a silent one, shown so in quotes too,
# has the class "silent" as well; a wildcard's id is "*").
LIVE_MENTION_RE = re.compile(r'<span class="(user-mention|user-group-mention)" data-user(?:-group)?-id="([0-9]+)">')


def live_mentions(rendered_html: str) -> tuple[set[int], set[int]]:
    """(user ids, group ids) the message mentions so that they are notified, read from its HTML
    (for those who have no Rendered at hand: the task worker)."""
    users: set[int] = set()
    groups: set[int] = set()
    for kind, target_id in LIVE_MENTION_RE.findall(rendered_html or ""):
        (users if kind == "user-mention" else groups).add(int(target_id))
    return users, groups


def _mention_span(css: str, id_attribute: str, target_id: int | str, name: str, silent: bool) -> str:
    """A mention as Zulip shows it: "@Name", or "Name" with the class "silent" for a silent one."""
    css, text = (f"{css} silent", name) if silent else (css, f"@{name}")
    return f'<span class="{css}" {id_attribute}="{target_id}">{html.escape(text)}</span>'


def _with_emoji(rendered: str, custom_emoji: dict[str, str]) -> str:
    """The emoji of the HTML's text outside code (before the mentions and channel links are put in:
    a name shown in them is never an emoji)."""
    parts = HTML_TAG_RE.split(rendered)
    in_code = 0
    for index, part in enumerate(parts):
        if index % 2:  # a tag
            if CODE_TAG_RE.match(part):
                in_code += -1 if part[1] == "/" else 1
        elif part and not in_code:
            parts[index] = emoji_in_text(part, custom_emoji)
    return "".join(parts)


def _linkifier_links(linkifiers: LinkifierRules, mention_token: re.Pattern):
    """What the linkifiers link in a piece of text, but never a mention's placeholder."""

    def text_links(text: str) -> list[tuple[int, int, str]]:
        links = [(link.start, link.end, link.url) for link in linkifiers.links(text)]
        tokens = [match.span() for match in mention_token.finditer(text)] if links else []
        if not tokens:
            return links
        kept, index = [], 0  # both in order: one pass
        for start, end, url in links:
            while index < len(tokens) and tokens[index][1] <= start:
                index += 1
            if index == len(tokens) or tokens[index][0] >= end:
                kept.append((start, end, url))
        return kept

    return text_links


def _find_user(
    name: str, id_text: str, users_by_name: dict[str, list[tuple[int, str]]], user_ids: set[int]
) -> tuple[int, str] | None:
    if id_text:
        if not is_ascii_digits(id_text) or int(id_text) not in user_ids:
            return None
        # `@**Name|id**` must name its person; `@**|id**` (Zulip's) names them by id alone.
        candidates = users_by_name.get(name.lower(), []) if name else [c for cs in users_by_name.values() for c in cs]
        matching = [c for c in candidates if c[0] == int(id_text)]
        return matching[0] if matching else None
    candidates = users_by_name.get(name.lower(), [])
    # An ambiguous name (two people called the same) mentions nobody, as in Zulip.
    return candidates[0] if len(candidates) == 1 else None


HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE = '<span class="highlight">', "</span>"
# Tags and character references ("&amp;"): never highlighted inside.
TAG_RE = re.compile(r"(<[^>]*>|&#?\w+;)")
WORD_RE = re.compile(r"\w+")


def search_words(query: str) -> list[str]:
    return WORD_RE.findall(query.lower())


def text_words(text_html: str) -> set[str]:
    """The different words (lower case) of the text of `text_html`, outside its tags."""
    parts = TAG_RE.split(text_html)
    return {word.lower() for part in parts if not part.startswith(("<", "&")) for word in WORD_RE.findall(part)}


def highlight(text_html: str, words: Collection[str], also: Collection[str] = ()) -> str:
    """Wrap the words of the text of `text_html` (never inside a tag) that begin with a word of a
    search (lower case, as search_words gives them), or are among `also` (lower case: the words a
    stemmed search matched), in `<span class="highlight">`.

    One pass over the text, looking each of its words up once per distinct length of the search's
    words: the work grows with the message, not with the search (a pattern of alternatives would
    try every search word at every word of the text).
    """
    wanted, matched = frozenset(words), frozenset(also)
    if not wanted:
        return text_html
    lengths = sorted({len(word) for word in wanted})

    def mark(match: re.Match) -> str:
        word = match.group(0)
        lowered = word.lower()
        if lowered in matched:
            return f"{HIGHLIGHT_OPEN}{word}{HIGHLIGHT_CLOSE}"
        for length in lengths:
            if length > len(lowered):
                break
            if lowered[:length] in wanted:
                return f"{HIGHLIGHT_OPEN}{word}{HIGHLIGHT_CLOSE}"
        return word

    parts = TAG_RE.split(text_html)
    return "".join(part if part.startswith(("<", "&")) else WORD_RE.sub(mark, part) for part in parts)


def with_local_links_relative(rendered_html: str, realm_url: str) -> str:
    """Links written as full addresses of the organization's own files and views made relative, as
    Zulip's rewrite_local_links_to_relative: `https://chat.example.com/user_uploads/...` links the
    file as `/user_uploads/...` does (and shows its preview), `https://chat.example.com/#narrow/...`
    opens in the app."""
    prefix = f'href="{html.escape(realm_url, quote=True)}/'
    if prefix not in rendered_html:
        return rendered_html
    return rendered_html.replace(prefix + "user_uploads/", 'href="/user_uploads/').replace(prefix + "#", 'href="#')
