"""Drawing the view models: the one package that imports rich (besides the cli package, which makes the console).

Layout of the output layer:

- ``judge.views`` computes one plain-data model per screen from the core's data (no rich, no
  typer): every word the reader sees is decided there;
- ``judge.render.plain`` turns a model into lines of text, for pipes and logs;
- ``judge.render.styled`` turns the same model into rich panels and tables, for a terminal;
- ``judge.render.live`` holds the two screens that change in place: the watch loop's status
  line and grind grade's progress bar.

``show(console, view)`` picks the rendering: styled on a terminal, plain elsewhere, so a log and a
terminal cannot disagree on content, only on looks. The ``render_*`` functions are the call
sites' shorthand: build the model, show it. Every function takes its ``Console`` as an argument
(tests pass ``Console(file=StringIO(), width=80)``); nothing here builds a global console.
Importing this package, or ``judge.render.plain``, loads no rich: a plain verdict can be drawn
by a grind run that never imports it (``styled`` loads when a terminal is drawn on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judge.render.screen import show
from judge.views.verdict import HintInfo, verdict_view

if TYPE_CHECKING:
    from rich.console import Console

    from judge.models import Exercise, Verdict
    from judge.practice import Sitting
    from judge.progress import Overview
    from judge.render.live import WatchView, grading_progress

__all__ = ["HintInfo", "WatchView", "grading_progress", "render_class", "render_doctor", "render_list",
           "render_practice_summary", "render_progress", "render_statement", "render_text", "render_validation",
           "render_verdict", "show"]


def __getattr__(name: str) -> Any:
    """The live screens (watch, the grading bar) load when asked for: grind run needs neither."""
    if name in ("WatchView", "grading_progress"):
        from judge.render import live

        return getattr(live, name)
    if name == "styled":  # rich loads with it: `grind run` over the daemon draws plain text without it
        import importlib

        return importlib.import_module("judge.render.styled")  # not `from judge.render import`: that asks here again
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def render_verdict(console: Console, verdict: Verdict, exercise: Exercise, hints: HintInfo | None = None,
                   lead: list[str] | None = None) -> None:
    show(console, verdict_view(verdict, exercise, hints, lead, console.encoding, console.width))


def render_list(console: Console, rows: list[tuple[Exercise, str]], numbered: bool = False) -> None:
    from judge.views.screens import list_view

    show(console, list_view(rows, numbered))


def render_text(console: Console, title: str, body: str, syntax: bool = False) -> None:
    """A hint or a solution: in a panel on a terminal, as is elsewhere."""
    from judge.views.screens import text_view

    show(console, text_view(title, body, syntax))


def render_statement(console: Console, title: str, body: str) -> None:
    from judge.views.screens import statement_view

    show(console, statement_view(title, body))


def render_progress(console: Console, overview: Overview) -> None:
    from judge.views.screens import progress_view

    show(console, progress_view(overview))


def render_practice_summary(console: Console, sittings: list[Sitting], now: float) -> None:
    from judge.views.screens import practice_summary_view

    show(console, practice_summary_view(sittings, now))


def render_doctor(console: Console, info: dict[str, Any]) -> None:
    from judge.views.screens import doctor_view

    show(console, doctor_view(info))


def render_validation(console: Console, reports: list[Any]) -> None:
    from judge.views.screens import validation_view

    show(console, validation_view(reports))


def render_class(console: Console, rows: list[dict[str, Any]]) -> None:
    from judge.views.screens import class_view

    show(console, class_view(rows))
