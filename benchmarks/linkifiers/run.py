"""Rendering a message with adversarial linkifiers: time against the message's length.

    .venv/bin/python benchmarks/linkifiers/run.py

Renders messages of 12,500 to 100,000 characters with the message renderer Parley uses when a
message is sent (apps.messages.rendering.render_message: Markdown, mentions, linkifiers), each
case with its linkifier as an organization would store it; the median of 5 renderings. Then, for
comparison, the two things Parley does not do: Python's `re` on a catastrophic pattern, and RE2's
str interface searched match after match (it re-encodes the whole text on every search).
No database is needed.
"""

import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

import django

django.setup()

import re2  # noqa: E402

from apps.linkifiers.patterns import CompiledLinkifier, LinkifierFields, LinkifierRules, check_linkifier_fields  # noqa: E402
from apps.messages.rendering import render_message  # noqa: E402

SIZES = (12_500, 25_000, 50_000, 100_000)
URL = "https://x.example.com/{x}"

# (name, pattern, what the message is made of, repeated to the size)
CASES = [
    ("nested quantifier (a+)+$", r"(?P<x>(a+)+)$", "a"),
    ("nested quantifier, one letter short", r"(?P<x>(a+)+)b", "a"),
    ("alternation (x|x)*y", r"(?P<x>(x|x)*y)", "x"),
    ("words (\\w+\\s?)*$", r"(?P<x>(\w+\s?)*)$", "word "),
    ("counted repetition [a-z]{1000}", r"(?P<x>[a-z]{1000})", "abcdefghij"),
    ("many matches #(?P<id>\\d+)", r"#(?P<x>[0-9]+)", "#1234 "),
]


def text_of(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def median_seconds(function, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def render(text: str, rules: LinkifierRules):
    return lambda: render_message(text, {}, set(), rules)


def main() -> None:
    print(f"{'case':<38}" + "".join(f"{size:>12,}" for size in SIZES) + "   100k / 12.5k")
    for name, pattern, unit in CASES:
        checked = check_linkifier_fields(LinkifierFields(pattern, URL))  # an administrator could save it
        rules = LinkifierRules([CompiledLinkifier(checked.pattern, checked.url_template)])
        row = [median_seconds(render(text_of(unit, size), rules)) for size in SIZES]
        print(f"{name:<38}" + "".join(f"{t * 1000:>10.1f}ms" for t in row) + f"   {row[-1] / row[0]:.1f}x")

    print("\nFor comparison (not what Parley runs):")
    for size in (20, 22, 24):
        text = "a" * size + "!"
        seconds = median_seconds(lambda t=text: re.search(r"(a+)+$", t), runs=1)
        print(f"  Python re, (a+)+$ on {size + 1} characters: {seconds * 1000:,.0f} ms")
    regex = re2.compile(r"(?P<b>^|\s)(?P<m>#[0-9]+)(?P<a>$|[^\pL\pN])")
    for size in (12_500, 25_000, 50_000):
        text = text_of("#1234 ", size)

        def str_loop(t=text) -> None:
            pos = 0
            while (match := regex.search(t, pos)) is not None:
                pos = match.end() - len(match.group("a"))

        seconds = median_seconds(str_loop, 1)
        print(f"  RE2's str interface, match after match, {size:,} characters: {seconds * 1000:,.0f} ms")


if __name__ == "__main__":
    main()
