"""The verdict screen without a console object: rich loads only when it must draw.

``judge.render.render_verdict`` takes a rich ``Console``; making one means importing rich (and
its console module alone is a good part of a daemon-served ``grind run``). The fast ``grind
run`` (judge/entry.py) draws here instead, to the same bytes: on a terminal, through rich,
exactly as the CLI does; elsewhere the plain renderer's text, which rich would have printed
unchanged (no markup, no highlighting, no wrapping), is written as it is. A text holding one
of the characters rich's print rewrites, or an environment that makes rich take a pipe for a
terminal, goes through rich as well. tests/test_fast_path.py holds the two to the same output.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judge.models import Exercise, Verdict
    from judge.views.verdict import HintInfo

# Characters rich's print rewrites in plain text (it expands tabs; it drops BEL, BS, VT, FF and
# CR): text holding one is printed by rich itself, so that both paths print the same bytes.
RICH_REWRITES = re.compile("[\t\x07\x08\x0b\x0c\r]")
# rich decides by these that a stream is (or is not) a terminal, whatever isatty says.
RICH_TERMINAL_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_TERMINAL")


def draw_verdict(verdict: Verdict, exercise: Exercise, hints: HintInfo | None, lead: list[str]) -> None:
    """``render_verdict`` on a console of ``sys.stdout`` (as ``judge.cli.console()`` makes it),
    loading rich only to draw on a terminal or to print a text it would rewrite."""
    out = sys.stdout
    isatty = getattr(out, "isatty", None)
    if not (isatty is not None and isatty()) and not any(k in os.environ for k in RICH_TERMINAL_ENV):
        from judge.render import plain
        from judge.views.verdict import verdict_view

        encoding = (getattr(out, "encoding", "utf-8") or "utf-8").lower()
        text = plain.text(verdict_view(verdict, exercise, hints, lead, encoding), _rich_width())
        if not RICH_REWRITES.search(text):
            if text:
                out.write(text + "\n")
            out.flush()
            return
    from rich.console import Console

    from judge.render import render_verdict

    render_verdict(Console(file=sys.stdout, highlight=False), verdict, exercise, hints, lead=lead)
    sys.stdout.flush()


def _rich_width() -> int:
    """The width rich's console takes when its stream is not a terminal: COLUMNS, else the first
    of stdin, stdout and stderr that is a terminal, else 80 (only Markdown is laid out by it)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns)
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80
