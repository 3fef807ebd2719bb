"""Plain text renderings: what grind prints when the output is not a terminal (a pipe, a log, a
CI job). No boxes, no colour, one fact per line, every line whole (never wrapped or cut) so it
can be grepped.

``text(view, width)`` returns the screen as one string. Only the statement needs rich, to lay out
its Markdown as text (``width`` is for that); everything else is formatted here by hand.
"""

from __future__ import annotations

from functools import singledispatch
from typing import Any

from judge.models import CheckStatus
from judge.views import (
    ClassView,
    DoctorView,
    ListView,
    PracticeSummaryView,
    ProgressView,
    StatementView,
    TextView,
    ValidationView,
    VerdictView,
)
from judge.views.screens import VALIDATION_COLUMNS

PLAIN_MARK = {CheckStatus.PASSED: "PASS", CheckStatus.FAILED: "FAIL", CheckStatus.ERROR: "ERROR",
              CheckStatus.NOT_RUN: "SKIP"}


@singledispatch
def text(view: Any, width: int = 80) -> str:
    raise TypeError(f"no plain rendering for {type(view).__name__}")


@text.register
def _verdict(view: VerdictView, width: int = 80) -> str:
    out = [f"Note: {n}" for n in view.lead] + [f"{view.title}: {view.status_word}", view.message]
    for row in view.checks:
        message = f": {row.message}" if row.message else ""
        kind = f" ({row.kind})" if row.kind else ""
        out.append(f"  {PLAIN_MARK[row.status]:5} {row.name}{kind}{message}")
    if view.failure is not None and view.details:
        out.append(f"First failure: {view.failure}")
        out += [f"  {label}: {value}" for label, value in view.details]
    if view.series is not None:
        out.append(f"  {view.series.label} around the first difference (step: expected / yours):")
        out += [f"    {step}: {expected} / {got}{'  <-' if first else ''}"
                for step, expected, got, first in view.series.rows]
    for block in view.diagnoses:
        out.append(block.head)
        out += [f"  {line}" for line in block.body]
    out += view.output
    out += [f"Note: {n}" for n in view.notices]
    out.append(view.footer)
    return "\n".join(line for line in out if line)


@text.register
def _list(view: ListView, width: int = 80) -> str:
    return "\n".join(f"{f'{r.number:>2}. ' if view.numbered else ''}{r.slug:16} {r.status:10} "
                     f"{r.difficulty:7} {r.topic:14} {r.title}" for r in view.rows)


@text.register
def _text(view: TextView, width: int = 80) -> str:
    return f"{view.title}\n{view.body}"


@text.register
def _statement(view: StatementView, width: int = 80) -> str:
    from io import StringIO

    from rich.console import Console
    from rich.markdown import Markdown

    out = StringIO()
    Console(file=out, width=width, color_system=None, force_terminal=False).print(Markdown(view.markdown))
    return (f"{view.title}\n" if view.show_title else "") + out.getvalue().rstrip("\n")


@text.register
def _progress(view: ProgressView, width: int = 80) -> str:
    lines = [f"{'exercise':16} {'status':10} {'best':>7} {'tries':>5}  {'last practised':15} next review"]
    lines += [f"{r.slug:16} {r.status:10} {r.best:>7} {r.attempts:>5}  {r.last:15} {r.due}" for r in view.rows]
    return "\n".join(lines + [view.totals])


@text.register
def _practice(view: PracticeSummaryView, width: int = 80) -> str:
    return "\n".join([view.headline] + [f"  {r.slug:16} {r.result:18} hints {r.hints:>2}  {r.rating:6} comes back "
                                        f"{r.back}" for r in view.rows])


@text.register
def _doctor(view: DoctorView, width: int = 80) -> str:
    lines = [f"Isolation level: {view.level}", *view.lines]
    if view.torch is not None:
        lines.append(view.torch)
    lines += view.notes
    for level in view.levels:
        lines.append(f"{'▶ ' if level.current else '  '}{level.name}")
        lines += [f"      - {line}" for line in level.lines]
    return "\n".join(lines + view.after)


@text.register
def _validation(view: ValidationView, width: int = 80) -> str:
    cells = [list(VALIDATION_COLUMNS)] + [[r.exercise, r.cases, r.caught, r.corpus, r.time, r.result]
                                          for r in view.rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(VALIDATION_COLUMNS))]
    table = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(["Exercise validation", *table, *view.lines])


@text.register
def _class(view: ClassView, width: int = 80) -> str:
    """Tab-separated, one student a line, for ``cut`` and spreadsheets."""
    return "\n".join(f"{r.student}\t{r.status}\t{r.score}\t{r.pitfall}" for r in view.rows)
