"""The server's emoji, for reactions and for messages' text: Unicode emoji by Zulip's conventions,
and Zulip's one extra emoji (`zulip`).

A Unicode emoji's `emoji_code` is its code points in lower-case hex of at least four digits joined
by "-", without the variation selector FE0F ("2764" for a red heart, "1f44d" for a thumbs up,
"00a9" for ©, "0031-20e3" for the keycap 1), as Zulip writes them.
The emoji and their names are Zulip's (`zulip-emoji-mapping` has Zulip's table: "+1", "thumbs_up",
"like"; "smile" for 🙂; "working_on_it" for 🛠), so that clients with their own copy of Zulip's
names (zulip-terminal's emoji list, bots written for Zulip) name the same emoji, and the mobile
app's picker offers what it offers on Zulip. Emoji Zulip has no name for (skin tones, say) stay
text in messages and are no reactions, as in Zulip. The `emoji` package finds emoji in text.
"""

import html
import re

import emoji
from zulip_emoji_mapping.emoji_names import EMOJI_NAME_MAPS

ZULIP_EXTRA_EMOJI = "zulip"
# Its picture, where Zulip's clients look for it on the server (zulip-flutter's kZulipEmojiUrl): a
# static file of this app's.
ZULIP_EXTRA_EMOJI_URL = "/static/generated/emoji/images/emoji/unicode/zulip.png"
# Where the server's emoji names are served (config/urls.py; apps.messages.views.conversation.EmojiDataView).
EMOJI_DATA_PATH = "/emoji/emoji_api.json"

# Every Unicode emoji's code with its names, Zulip's canonical name first; and each name's code.
_NAMES_OF = {code: [named["canonical_name"], *named["aliases"]] for code, named in EMOJI_NAME_MAPS.items()}
_CODE_OF = {name: code for code, names in _NAMES_OF.items() for name in names}


def emoji_code(text: str) -> str:
    """Zulip's emoji_code of an emoji's characters."""
    return "-".join(f"{ord(char):04x}" for char in text if char != "\ufe0f")


def unicode_emoji_code(name: str) -> str | None:
    """The code of the Unicode emoji with this name, or None."""
    return _CODE_OF.get(name)


def is_unicode_emoji_code(code: str) -> bool:
    return code in _NAMES_OF


def agreed_emoji(name: str, code: str) -> tuple[str, str] | None:
    """A stored Unicode emoji's (name, code) as Zulip's table pairs them, or None when they agree
    already or the table knows neither. A known code keeps its emoji and takes its canonical name
    (what people saw stays: clients draw the code); an unknown code takes the name's."""
    if code in _NAMES_OF:
        return None if name in _NAMES_OF[code] else (_NAMES_OF[code][0], code)
    if name in _CODE_OF:
        return name, _CODE_OF[name]
    return None


def code_to_names() -> dict[str, list[str]]:
    """Every Unicode emoji's code with its names (Zulip's canonical name first)."""
    return _NAMES_OF


# An emoji written by name in a message (":smile:", ":+1:"), as Zulip's Markdown finds them.
EMOJI_NAME_RE = re.compile(r":([\w+-]+):")
# The emoji characters that stand for themselves: the fully and minimally qualified ones, not those
# shown as text unless followed by FE0F ("©", "↔", a lone "❤"), as in Zulip.
_EMOJI_STATUSES = {emoji.STATUS["fully_qualified"], emoji.STATUS["minimally_qualified"]}


def emoji_in_text(text: str, custom: dict[str, str]) -> str:
    """`text` (a piece of HTML's text, outside any tag) with its emoji as Zulip's message HTML has
    them: a name of a Unicode emoji, or a Unicode emoji itself, becomes a span naming its code
    (`<span class="emoji emoji-1f604" ...>:smile:</span>`), the name of one of the organization's
    custom emoji (`custom`: {name: image URL}, the active ones) or `zulip` an image. Other names stay
    text."""
    if ":" in text:
        text = EMOJI_NAME_RE.sub(lambda match: _named(match, custom), text)
    if text.isascii():
        return text
    parts, last = [], 0
    for found in emoji.emoji_list(text):
        data = emoji.EMOJI_DATA.get(found["emoji"])
        code = emoji_code(found["emoji"])
        names = code_to_names().get(code)
        if data is None or data["status"] not in _EMOJI_STATUSES or not names:
            continue
        parts += [text[last : found["match_start"]], _span(code, names[0])]
        last = found["match_end"]
    return "".join([*parts, text[last:]]) if parts else text


def _named(match: re.Match, custom: dict[str, str]) -> str:
    name = match.group(1)
    if name in custom:  # the organization's emoji come first, as in Zulip
        return _image(name, custom[name])
    if name == ZULIP_EXTRA_EMOJI:  # then Zulip's own (the mobile-app QA pass: ":zulip:" stayed text)
        return _image(name, ZULIP_EXTRA_EMOJI_URL)
    code = unicode_emoji_code(name)
    return _span(code, name) if code is not None else match.group(0)


def _image(name: str, url: str) -> str:
    title = html.escape(name.replace("_", " "))
    return f'<img alt=":{html.escape(name)}:" class="emoji" src="{html.escape(url)}" title="{title}">'


def _span(code: str, name: str) -> str:
    title = html.escape(name.replace("_", " "))
    attributes = f'aria-label="{title}" class="emoji emoji-{code}" role="img" title="{title}"'
    return f"<span {attributes}>:{html.escape(name)}:</span>"


def emoji_names_in(content: str) -> set[str]:
    """The names written as emoji (":name:") in the content: those a custom emoji may be."""
    return set(EMOJI_NAME_RE.findall(content)) if ":" in content else set()
