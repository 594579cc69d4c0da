"""The server's emoji, for reactions: Unicode emoji by Zulip's conventions, and Zulip's one extra
emoji (`zulip`).

A Unicode emoji's `emoji_code` is its code points in lower-case hex joined by "-", without the
variation selector FE0F ("2764" for a red heart, "1f44d" for a thumbs up), as Zulip writes them.
Its names are lower case with underscores: the CLDR name and the common aliases the `emoji`
package has for it ("thumbs_up", "+1", "thumbsup"; "party_popper", "tada"), the first one found
keeping a name two emoji would share.
"""

import re
from functools import cache

import emoji

ZULIP_EXTRA_EMOJI = "zulip"
# Where the server's emoji names are served (config/urls.py; apps.messages.views.EmojiDataView).
EMOJI_DATA_PATH = "/emoji/emoji_api.json"

_NOT_IN_NAMES = re.compile(r"[^a-z0-9_+-]")


def emoji_code(text: str) -> str:
    """Zulip's emoji_code of an emoji's characters."""
    return "-".join(f"{ord(char):x}" for char in text if char != "\ufe0f")


@cache
def _tables() -> tuple[dict[str, str], dict[str, list[str]]]:
    """(name -> code, code -> names)."""
    code_of: dict[str, str] = {}
    names_of: dict[str, list[str]] = {}
    for text, data in emoji.EMOJI_DATA.items():
        code = emoji_code(text)
        for written in (data["en"], *data.get("alias", ())):
            name = _NOT_IN_NAMES.sub("", written.strip(":").lower().replace(" ", "_"))
            if name and name not in code_of:
                code_of[name] = code
                names_of.setdefault(code, []).append(name)
    return code_of, names_of


def unicode_emoji_code(name: str) -> str | None:
    """The code of the Unicode emoji with this name, or None."""
    return _tables()[0].get(name)


def is_unicode_emoji_code(code: str) -> bool:
    return code in _tables()[1]


def code_to_names() -> dict[str, list[str]]:
    """Every Unicode emoji's code with its names (the first is the one the server lists first)."""
    return _tables()[1]
