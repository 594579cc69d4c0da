"""Every Pygments lexer, over code blocks of 10,000 characters written against lexers (runs of one
quote, bracket, word or symbol), through the renderer's own highlighting with its time budget
(apps.core.markdown.HIGHLIGHT_SECONDS): prints each block that took longer than --report seconds,
and the slowest. Run: .venv/bin/python benchmarks/highlighting/fuzz.py [--lexers python,java]."""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

import django

django.setup()

from pygments.lexers import get_all_lexers  # noqa: E402

from apps.core.markdown import HIGHLIGHT_SECONDS, _highlighted  # noqa: E402

SIZE = 10_000  # a message's longest content
UNITS = ['"', "'", "/*", "<", "(", "a", "\\", "{", "$", " ", "#", "a ", "%", "`", "-", "=", "[", "0.", "\t"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lexers", help="aliases, comma-separated (default: every lexer)")
    parser.add_argument("--report", type=float, default=2 * HIGHLIGHT_SECONDS)
    args = parser.parse_args()
    aliases = args.lexers.split(",") if args.lexers else [a[0] for _, a, *_ in get_all_lexers() if a]
    slowest, count, start = (0.0, ""), 0, time.perf_counter()
    for alias in aliases:
        for unit in UNITS:
            code = (unit * (SIZE // len(unit)))[: SIZE - 1] + "x"
            began = time.perf_counter()
            _highlighted(code, alias)
            took = time.perf_counter() - began
            count += 1
            slowest = max(slowest, (took, f"{alias} {unit!r}"))
            if took > args.report:
                print(f"{took:.2f} s  {alias} {unit!r}", flush=True)
    print(
        f"{count} blocks of {len(aliases)} lexers in {time.perf_counter() - start:.0f} s; "
        f"slowest {slowest[0]:.2f} s ({slowest[1]}); budget {HIGHLIGHT_SECONDS} s"
    )


if __name__ == "__main__":
    main()
