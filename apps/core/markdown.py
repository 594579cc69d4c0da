"""Markdown to safe HTML, for user-written text shown to others (profile fields, descriptions)."""

import io
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound

from apps.core.hooks import Hooks

# CommonMark with raw HTML disabled; nh3 then removes anything unsafe that slipped through
# (e.g. javascript: links) and adds rel="noopener noreferrer" to links.
# Bare URLs become links, as in Zulip (linkify-it-py). No image syntax, as in Zulip: `![x](url)` is
# "!" and a link (an image from anywhere would be fetched by every reader's client: a tracking
# pixel); uploaded images get their previews from apps.uploads. A line break is a break (<br>), as
# Zulip's nl2br has it; ~~text~~ is <del>, as Zulip writes it.
_markdown = (
    # Nesting as deep as Zulip's lists go (commonmark's 20 levels are 10 lists: the verify QA pass).
    MarkdownIt("commonmark", {"html": False, "linkify": True, "breaks": True, "maxNesting": 40})
    .enable("strikethrough")
    .enable("table")
    .enable("linkify")
    .disable("image")
)
_validate_link = _markdown.validateLink


def _keeping_what_is_too_deep(tokenize: Callable) -> Callable:
    """markdown-it leaves out what is nested past its `maxNesting` (each quote counts one level, each
    list two: the list and its item): that part is kept as text, the rest of the message as Markdown
    (the hostile QA pass: `> ` 5,000 times then a word showed 20 empty quotes, the word lost)."""

    def tokenize_keeping(state: Any, start_line: int, end_line: int) -> None:
        if state.level < state.md.options.maxNesting:
            tokenize(state, start_line, end_line)
            return
        # The lines of the block at hand: as far as its indentation goes (a list item's), as
        # markdown-it's own loop would stop.
        first = line = state.skipEmptyLines(start_line)
        last = None
        while line < end_line and (state.isEmpty(line) or state.sCount[line] >= state.blkIndent):
            if not state.isEmpty(line):
                last = line + 1
            line += 1
        if last is None:  # nothing of its own: markdown-it's loop ends as it would
            tokenize(state, start_line, end_line)
            return
        text = state.getLines(first, last, state.blkIndent, False)
        state.push("paragraph_open", "p", 1).map = [first, last]
        inline = state.push("inline", "", 0)  # a paragraph's three tokens, as a tight list hides them
        inline.map, inline.children = [first, last], []
        for index, part in enumerate(text.split("\n")):
            if index:
                inline.children.append(Token("softbreak", "br", 0))
            inline.children.append(Token("text", "", 0, content=part))
        state.push("paragraph_close", "p", -1)
        state.line = last

    return tokenize_keeping


_markdown.block.tokenize = _keeping_what_is_too_deep(_markdown.block.tokenize)


def _link_with_its_host(url: str) -> bool:
    """markdown-it's URL parser (mdurl) drops a host longer than 255 characters: the link and its
    text would say `http:///path` or `http://`, the host lost (the hostile-input QA passes). Such a URL is no link:
    it stays as written."""
    return not _HOSTLESS_URL.match(url) and _validate_link(url)


_HOSTLESS_URL = re.compile(r"(?i)[a-z][a-z0-9+.-]*://(?:[/?#]|$)")  # http:// with nothing, /path, ?q or #x
_markdown.validateLink = _link_with_its_host

ALLOWED_TAGS = {
    "a", "p", "br", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td", "img", "div", "span",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
    "div": {"aria-hidden", "data-code-language"},
}
# Zulip's spoilers and code blocks (_fence), with Pygments' classes for highlighted code.
ALLOWED_CLASSES = {
    "div": {"spoiler-block", "spoiler-header", "spoiler-content", "codehilite"},
    "span": {name for name in STANDARD_TYPES.values() if name},
}


# Links to add to a piece of text: (start, end, URL) of its characters, in order, not overlapping.
TextLinks = Callable[[str], Sequence[tuple[int, int, str]]]


# description_renderer(realm_id, text, acting_user) -> str: a channel's or a folder's description as
# HTML, rendered as a message is (Zulip's descriptions: mentions, channel links, emoji, the
# organization's linkifiers; apps.messages, above the apps that own descriptions).
description_renderer = Hooks("description_renderer")


def render_description(realm_id: int, text: str, *, acting_user: Any) -> str:
    """A channel's or a folder's description as HTML (plain Markdown without the messages app)."""
    rendered = description_renderer.call(realm_id, text, acting_user)
    return rendered[-1] if rendered else render_markdown(text)


def render_markdown(text: str, *, text_links: TextLinks | None = None) -> str:
    """`text` as safe HTML. `text_links` (a message's linkifiers) is asked about each piece of
    plain text outside links and code, after Markdown made links of bare URLs."""
    return nh3.clean(
        _html(text, text_links),
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        allowed_classes=ALLOWED_CLASSES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    ).strip()


# Spoilers and quotes held by spoilers and quotes, at most: deeper ones are shown as code (the QA
# pass: 700 nested spoilers ran out of stack, a 500 and the message lost).
MAX_NESTED_FENCES = 20


def _html(text: str, text_links: TextLinks | None, depth: int = 0) -> str:
    env: dict = {"text_links": text_links, "depth": depth}
    tokens = _markdown.parse(text, env)
    if text_links is not None:
        for token in tokens:
            if token.type == "inline" and token.children:
                token.children = _with_links(token.children, text_links)
    return _markdown.renderer.render(tokens, _markdown.options, env)


def _fence(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
    """A fenced block as Zulip writes it: ```spoiler [header] (a header shown, the content hidden
    until opened) and ```quote hold Markdown like the rest (mentions, links); any other is code."""
    token = tokens[idx]
    kind, _, header = token.info.strip().partition(" ")
    header = header.strip()
    depth = env["depth"] + 1
    if kind in ("spoiler", "quote") and depth > MAX_NESTED_FENCES:
        return _code_block(renderer, tokens, idx, options, env)
    if kind == "spoiler":
        header_html = _html(header, env["text_links"], depth) if header else ""
        content_html = _html(token.content, env["text_links"], depth)
        return (
            f'<div class="spoiler-block"><div class="spoiler-header">\n{header_html}</div>'
            f'<div class="spoiler-content" aria-hidden="true">\n{content_html}</div></div>\n'
        )
    if kind == "quote":
        return f"<blockquote>\n{_html(token.content, env['text_links'], depth)}</blockquote>\n"
    return _code_block(renderer, tokens, idx, options, env)


def _code_block(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
    """A code block as Zulip writes one (Pygments' markup, the only form the mobile app reads as
    code), highlighted by Pygments when its language is one Pygments knows: the tokens are spans
    of Pygments' short classes, which the mobile app, zulip-terminal and the web app colour, and
    `data-code-language` is the lexer's name (`js` and `javascript` are `JavaScript`); another
    language is kept as written (Zulip's playgrounds name their own)."""
    token = tokens[idx]
    language = token.info.strip().partition(" ")[0]
    code, language = _highlighted(token.content, language)
    attributes = f' data-code-language="{escapeHtml(language)}"' if language else ""
    return f'<div class="codehilite"{attributes}><pre><span></span><code>{code}</code></pre></div>\n'


# The languages highlighted (Pygments' lexer names): common ones whose lexers, given 10,000
# characters written against them, stop within the time below (benchmarks/highlighting). Some other
# lexers take seconds over one token of such input; a block in another language Pygments knows is
# named as Pygments names it, and shown without colours.
HIGHLIGHTED_LANGUAGES = frozenset({
    "Ada", "ApacheConf", "Awk", "Bash", "Batchfile", "C", "C#", "C++", "CMake", "COBOL", "CSS", "Clojure",
    "Common Lisp", "Dart", "Delphi", "Diff", "Django/Jinja", "Docker", "Elixir", "Elm", "Erlang", "F#",
    "Fortran", "GAS", "GDScript", "Go", "GraphQL", "Groovy", "HTML", "HTTP", "Haskell", "JSON", "JSX",
    "Java", "JavaScript", "Julia", "Kotlin", "Kusto", "LessCss", "Lua", "Makefile", "Markdown", "Matlab",
    "MySQL", "NASM", "Nginx configuration file", "Nix", "OCaml", "Objective-C", "PHP", "Perl",
    "PostgreSQL SQL dialect", "PowerShell", "Prolog", "Protocol Buffer", "Python", "Python Traceback",
    "Python console session", "Racket", "Ruby", "Rust", "S", "SCSS", "SQL", "Scala", "Scheme", "Sed",
    "Solidity", "Swift", "TOML", "TSX", "TeX", "Terraform", "Text only", "TypeScript", "VB.net", "VimL",
    "XML", "YAML", "Zig",
})  # fmt: skip
# How long one block may be highlighted, checked between tokens (Java's and Makefiles' lexers take
# seconds over some input, a little at each token): past it, the block is shown without colours.
HIGHLIGHT_SECONDS = 0.2


def _highlighted(code: str, language: str) -> tuple[str, str]:
    """(`code` as HTML, the language's name) for a code block."""
    try:
        # As Zulip: PHP highlighted without its `<?php` marker (startinline).
        lexer = get_lexer_by_name(language, startinline=True) if language else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return escapeHtml(code), language
    if lexer.name not in HIGHLIGHTED_LANGUAGES:
        return escapeHtml(code), lexer.name
    html = io.StringIO()
    try:
        _CODE_FORMATTER.format(_until(lexer.get_tokens(code), time.monotonic() + HIGHLIGHT_SECONDS), html)
    except _OutOfTime:
        return escapeHtml(code), lexer.name
    return html.getvalue(), lexer.name


class _OutOfTime(Exception):
    pass


def _until(tokens: Iterator, deadline: float) -> Iterator:
    for token in tokens:
        if time.monotonic() > deadline:
            raise _OutOfTime
        yield token


_CODE_FORMATTER = HtmlFormatter(nowrap=True)


_markdown.add_render_rule("fence", _fence)
_markdown.add_render_rule("code_block", _code_block)
_markdown.add_render_rule("s_open", lambda *args: "<del>")
_markdown.add_render_rule("s_close", lambda *args: "</del>")


def _with_links(children: list[Token], text_links: TextLinks) -> list[Token]:
    result: list[Token] = []
    depth = 0  # inside a link: its text is left alone
    for child in children:
        depth += {"link_open": 1, "link_close": -1}.get(child.type, 0)
        links = text_links(child.content) if child.type == "text" and depth == 0 else ()
        if not links:
            result.append(child)
            continue
        content, position = child.content, 0
        for start, end, url in links:
            if start > position:
                result.append(Token("text", "", 0, content=content[position:start]))
            result.append(Token("link_open", "a", 1, attrs={"href": url}))
            result.append(Token("text", "", 0, content=content[start:end]))
            result.append(Token("link_close", "a", -1))
            position = end
        if position < len(content):
            result.append(Token("text", "", 0, content=content[position:]))
    return result


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
