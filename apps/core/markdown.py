"""Markdown to safe HTML, for user-written text shown to others (profile fields, descriptions)."""

import nh3
from markdown_it import MarkdownIt

# CommonMark with raw HTML disabled; nh3 then removes anything unsafe that slipped through
# (e.g. javascript: links) and adds rel="noopener noreferrer" to links.
# Bare URLs become links, as in Zulip (linkify-it-py).
_markdown = (
    MarkdownIt("commonmark", {"html": False, "linkify": True}).enable("strikethrough").enable("table").enable("linkify")
)

ALLOWED_TAGS = {
    "a", "p", "br", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td", "img",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "ol": {"start"}}


def render_markdown(text: str) -> str:
    html = _markdown.render(text)
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    ).strip()


def without_fenced_code(text: str) -> str:
    """The text with the lines of its fenced code blocks (``` and ~~~, closed or not) left empty:
    what Zulip looks for alert words in (its fenced-code preprocessor runs first)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # as the parser reads lines
    if "```" not in text and "~~~" not in text:
        return text
    lines = text.split("\n")
    for token in _markdown.parse(text):
        if token.type == "fence" and token.map:
            begin, end = token.map
            lines[begin:end] = [""] * (end - begin)
    return "\n".join(lines)
