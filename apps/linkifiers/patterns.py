"""Linkifier patterns and URL templates: checked when an administrator saves them, run on every
message and topic.

Patterns are RE2 regular expressions (google-re2), as in Zulip: RE2 refuses what cannot run in
linear time (back-references, look-arounds) and bounds a compiled pattern's memory, so no pattern
can stall the server. They run on UTF-8 bytes: the str interface of the RE2 binding re-encodes the
whole text on every search, which makes a text with many matches quadratic.

A pattern matches as in Zulip (`prepare_linkifier_pattern`): after the start of the text,
whitespace or an opening delimiter, and not directly before a letter or digit. Its named groups
fill the RFC 6570 URL template (uri_template, the library Zulip uses), which must expand to an
http(s) URL and use exactly the pattern's groups. Where several linkifiers match overlapping text,
the earlier one (in the organization's order) wins; between them, the earlier match.
"""

import re
import string
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import urlsplit

import re2
import uri_template
from linkify_it import LinkifyIt

from apps.core.errors import JsonableError

# The groups the pattern is wrapped in (no administrator's pattern may name one: it would not compile).
BEFORE = "linkifier_before_match"
OUTER = "linkifier_actual_match"
AFTER = "linkifier_after_match"

MAX_PATTERN_LENGTH = 500  # its unique index holds it: at most 2,000 bytes of UTF-8
MAX_TEMPLATE_LENGTH = 1000
MAX_EXAMPLE_LENGTH = 1000
MAX_ALTERNATIVE_URL_TEMPLATES = 20

# \s in RE2 is ASCII whitespace only: \pZ and NEL (U+0085) add the rest, as in Zulip.
_WRAPPED = "(?P<{before}>^|\\s|\u0085|\\pZ|['\"\\(,:<])(?P<{outer}>{pattern})(?P<{after}>$|[^\\pL\\pN])"


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is the administrator's error, not a log line
    return options


_OPTIONS = _options()
# A named group, as RE2 writes them: (?P<name>...) and (?<name>...).
_GROUP_NAME = re.compile(r"\(\?P?<(\w+)>")
_NEVER = re2.compile(b"a^", options=_OPTIONS)


# What an organization's linkifiers may spend on one text, as Zulip's 5 s for rendering a message:
# past it the text is refused (the expensive-request QA pass: 1,000 broad linkifiers took 41 s over
# 10,000 characters). A module value, so tests can lower it.
LINKIFIERS_SECONDS = 5.0


# A match: its start and end (byte offsets) and, made when asked for, its URL.
Span = tuple[int, int, Callable[[], str]]


class LinkifiersTooSlow(JsonableError):
    def __init__(self) -> None:
        super().__init__("Unable to render message: the organization's linkifiers took too long")


class LinkifierInvalid(Exception):
    """What is wrong with a linkifier, by field ("__all__": the fields together), in the order
    found; the first message is the one to show."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(next(iter(errors.values()))[0])
        self.errors = errors


@dataclass(frozen=True)
class LinkifierFields:
    pattern: str
    url_template: str
    example_input: str | None = None
    reverse_template: str | None = None
    alternative_url_templates: tuple[str, ...] = ()


# --- checking what an administrator saves ---------------------------------------------------------


def compile_pattern(pattern: str) -> "re2._Regexp":
    """The pattern as RE2 compiles it; "Bad regular expression: ..." when it cannot, or when it
    names two groups alike or takes a name of the wrapper's (RE2 allows both; a URL would take
    the value of either)."""
    try:
        regex = re2.compile(pattern, options=_OPTIONS)
        re2.compile(_wrap(pattern), options=_OPTIONS)  # as it runs
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "unknown error"
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        raise ValueError(f"Bad regular expression: {reason}") from None
    names = _GROUP_NAME.findall(pattern)
    if duplicated := sorted({name for name in names if names.count(name) > 1}):
        raise ValueError(f"Bad regular expression: duplicate capture group name: {duplicated[0]}")
    if reserved := sorted(set(names) & {BEFORE, OUTER, AFTER}):
        raise ValueError(f"Bad regular expression: the group name {reserved[0]} is reserved")
    return regex


def _wrap(pattern: str) -> str:
    return _WRAPPED.format(before=BEFORE, outer=OUTER, after=AFTER, pattern=pattern)


def template_variables(template: str) -> list[str]:
    """The variables of an RFC 6570 URL template that expands to an http(s) URL."""
    if not uri_template.validate(template):
        raise ValueError("Invalid URL template.")
    parsed = uri_template.URITemplate(template)
    url = urlsplit(str(parsed.expand(**dict.fromkeys(parsed.variable_names, "1"))))
    if url.scheme not in ("http", "https") or not url.netloc:
        raise ValueError("URL template must expand to an http or https URL.")
    return list(parsed.variable_names)


def reverse_template_variables(template: str) -> list[str]:
    """The {variable}s of a reverse template ({{ and }} are literal braces)."""
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError:
        raise ValueError("Invalid reverse template.") from None
    names = []
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError("Invalid reverse template.")
        names.append(name)
    return names


def check_linkifier_fields(fields: LinkifierFields) -> LinkifierFields:
    """The linkifier as stored (pattern and templates stripped; an empty example input or reverse
    template is none), or LinkifierInvalid with everything that is wrong with it."""
    errors: dict[str, list[str]] = {}

    def error(name: str, message: str) -> None:
        errors.setdefault(name, []).append(message)

    pattern, url_template = fields.pattern.strip(), fields.url_template.strip()
    example, reverse = fields.example_input or None, fields.reverse_template or None
    alternatives = tuple(template.strip() for template in fields.alternative_url_templates)

    regex = None
    if not pattern:
        error("pattern", "This field cannot be blank.")
    elif len(pattern) > MAX_PATTERN_LENGTH:
        error("pattern", f"Ensure this value has at most {MAX_PATTERN_LENGTH} characters (it has {len(pattern)}).")
    else:
        try:
            regex = compile_pattern(pattern)
        except ValueError as exc:
            error("pattern", str(exc))
    groups = set(regex.groupindex) if regex is not None else None

    templates = [("url_template", url_template)] + [("alternative_url_templates", t) for t in alternatives]
    if len(alternatives) > MAX_ALTERNATIVE_URL_TEMPLATES:
        error("alternative_url_templates", f"At most {MAX_ALTERNATIVE_URL_TEMPLATES} alternative URL templates.")
        templates = templates[:1]
    for name, template in templates:
        if not template:
            error(name, "This field cannot be blank.")
            continue
        if len(template) > MAX_TEMPLATE_LENGTH:
            error(name, f"Ensure this value has at most {MAX_TEMPLATE_LENGTH} characters (it has {len(template)}).")
            continue
        try:
            variables = set(template_variables(template))
        except ValueError as exc:
            error(name, str(exc))
            continue
        if groups is not None:
            _check_groups(groups, variables, error)

    for name, value in (("example_input", example), ("reverse_template", reverse)):
        if value is not None and len(value) > MAX_EXAMPLE_LENGTH:
            error(name, f"Ensure this value has at most {MAX_EXAMPLE_LENGTH} characters (it has {len(value)}).")
    if not errors:
        _check_example(regex, example, reverse, error)
    if errors:
        raise LinkifierInvalid(errors)
    return LinkifierFields(pattern, url_template, example, reverse, alternatives)


def _check_groups(groups: set[str], variables: set[str], error) -> None:
    """Zulip's rule: the template's variables are exactly the pattern's groups."""
    if missing := variables - groups:
        error("__all__", f"Group {min(missing)!r} in URL template is not present in linkifier pattern.")
    elif missing := groups - variables:
        error("__all__", f"Group {min(missing)!r} in linkifier pattern is not present in URL template.")


def _check_example(regex, example: str | None, reverse: str | None, error) -> None:
    """The example input is all matched by the pattern; the reverse template, given the groups it
    matches, gives it back (what makes a pasted URL turn into the text the linkifier links)."""
    if example is None:
        if reverse is not None:
            error("example_input", "An example input is required for a reverse template.")
        return
    match = regex.fullmatch(example)
    if match is None:
        error("example_input", "The example input does not match the pattern.")
        return
    if reverse is None:
        return
    try:
        names = reverse_template_variables(reverse)
    except ValueError as exc:
        error("reverse_template", str(exc))
        return
    if missing := set(names) - set(regex.groupindex):
        error("reverse_template", f"Group {min(missing)!r} in reverse template is not present in linkifier pattern.")
        return
    values = {name: match.group(name) or "" for name in names}
    produced = reverse.format(**values)
    if produced != example:
        error("reverse_template", f"The reverse template gives {produced!r}, not the example input {example!r}.")


# --- running them ---------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Link:
    """Text of a message or topic that a linkifier (or a raw URL) turns into a link: the
    characters [start, end) of the text, and where they lead."""

    start: int
    end: int
    url: str = field(compare=False)
    text: str = field(compare=False)


class CompiledLinkifier:
    """One linkifier, ready to run: its wrapped pattern (matching nothing if it no longer compiles,
    as in Zulip) and its URL template."""

    def __init__(self, pattern: str, url_template: str) -> None:
        try:
            self.regex = re2.compile(_wrap(pattern).encode(), options=_OPTIONS)
        except re2.error:
            self.regex = _NEVER
        self.template = uri_template.URITemplate(url_template)
        index = {name.decode(): number for name, number in self.regex.groupindex.items()}
        self.outer, self.after = index.pop(OUTER, 0), index.pop(AFTER, 0)
        index.pop(BEFORE, None)
        self.groups = index  # the administrator's groups: name -> number

    def spans(self, data: bytes, deadline: float = float("inf")) -> Iterator[Span]:
        """(start, end, url) of each match in UTF-8 `data`, in byte offsets, in order; the URL is
        made when asked for (only the matches kept are). The character after a match is looked at
        but not taken: the next match may start after it. Past `deadline`, LinkifiersTooSlow."""
        pos, size = 0, len(data)
        while pos <= size:
            if time.monotonic() > deadline:
                raise LinkifiersTooSlow()
            match = self.regex.search(data, pos)
            if match is None:
                return
            start, end = match.span(self.outer)
            # Never stand still: an empty match (a pattern that may match nothing) links nothing.
            pos = max(match.end() - len(match.group(self.after)), end, pos + 1)
            if start == end:
                continue
            values = {name: match.group(number) for name, number in self.groups.items()}
            variables = {name: value.decode() for name, value in values.items() if value is not None}
            yield start, end, partial(self._url, variables)

    def _url(self, variables: dict[str, str]) -> str:
        return str(self.template.expand(**variables))


_raw_urls = LinkifyIt()


class LinkifierRules:
    """An organization's linkifiers, in their order."""

    def __init__(self, linkifiers: Sequence[CompiledLinkifier]) -> None:
        self.linkifiers = tuple(linkifiers)

    def __bool__(self) -> bool:
        return bool(self.linkifiers)

    def links(self, text: str) -> list[Link]:
        """The links the linkifiers make of `text`, in order. Each linkifier in turn keeps its
        matches that overlap none kept before (Zulip's rule, in web/src/markdown.js too); the time
        grows with the text times the linkifiers, however many matches."""
        if not self.linkifiers:
            return []
        data = text.encode()
        kept: list[Span] = []
        deadline = time.monotonic() + LINKIFIERS_SECONDS
        for linkifier in self.linkifiers:
            kept = _merge(kept, linkifier.spans(data, deadline))
        return _as_links(data, kept)

    def topic_links(self, topic: str) -> list[dict[str, str]]:
        """The message's `topic_links`: the linkifiers' links, then raw URLs where no linkifier
        linked (a URL without a scheme gets https, as in Zulip), in order of appearance."""
        links = self.links(topic)
        for match in _raw_urls.match(topic) or ():
            if match.schema not in ("", "http:", "https:"):
                continue
            start, end = match.index, match.last_index
            if any(link.start < end and start < link.end for link in links):
                continue
            url = match.url if match.schema else f"https://{match.raw}"
            links.append(Link(start, end, url, match.raw))
        return [{"text": link.text, "url": link.url} for link in sorted(links)]


def _merge(kept: list[Span], spans: Iterator[Span]) -> list[Span]:
    """`kept` (sorted, not overlapping) with the spans (in order, not overlapping each other) that
    overlap none of it, in one pass over both."""
    merged: list[Span] = []
    index = 0
    for span in spans:
        start, end, _ = span
        while index < len(kept) and kept[index][1] <= start:
            merged.append(kept[index])
            index += 1
        if index < len(kept) and kept[index][0] < end:
            continue  # overlaps a link kept before
        merged.append(span)
    merged.extend(kept[index:])
    return merged


def _as_links(data: bytes, spans: list[Span]) -> list[Link]:
    """The spans (byte offsets, in order) as Links in character offsets, decoding each part once."""
    links, char, byte = [], 0, 0
    for start, end, url in spans:
        char += len(data[byte:start].decode())
        text = data[start:end].decode()
        links.append(Link(char, char + len(text), url(), text))
        char, byte = char + len(text), end
    return links
