"""Plain text renderings: what grind prints when the output is not a terminal (a pipe, a log, a
CI job). No boxes, no colour, one fact per line, every line whole (never wrapped or cut) so it
can be grepped.

``text(view, width)`` returns the screen as one string. Only the statement needs rich, to lay out
its Markdown as text (``width`` is for that); everything else is formatted here by hand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from judge.models import CheckStatus

if TYPE_CHECKING:
    from judge.views.screens import (
        ClassView,
        DoctorView,
        ListView,
        PracticeSummaryView,
        ProgressView,
        StatementView,
        TextView,
        ValidationView,
    )
    from judge.views.verdict import VerdictView

PLAIN_MARK = {CheckStatus.PASSED: "PASS", CheckStatus.FAILED: "FAIL", CheckStatus.ERROR: "ERROR",
              CheckStatus.NOT_RUN: "SKIP"}


_DRAW: dict[str, Callable[[Any, int], str]] = {}


def _draws(model: str) -> Callable[[Callable[[Any, int], str]], Callable[[Any, int], str]]:
    """Register the plain rendering of the model class named ``model``. By name, not by class:
    ``grind run`` then never loads the models of screens it does not show."""
    def register(draw: Callable[[Any, int], str]) -> Callable[[Any, int], str]:
        _DRAW[model] = draw
        return draw
    return register


def text(view: Any, width: int = 80) -> str:
    """``view`` as plain text (``width`` lays out Markdown only)."""
    draw = _DRAW.get(type(view).__name__)
    if draw is None:
        raise TypeError(f"no plain rendering for {type(view).__name__}")
    return draw(view, width)


@_draws("VerdictView")
def _verdict(view: VerdictView, width: int = 80) -> str:
    out = [f"Note: {n}" for n in view.lead] + [f"{view.title}: {view.status_word}", view.message]
    for row in view.checks:
        message = f": {row.message}" if row.message else ""
        kind = f" ({row.kind})" if row.kind else ""
        out.append(f"  {PLAIN_MARK[row.status]:5} {row.name}{kind}{message}")
    out += _failure_lines(view)
    for block in view.diagnoses:
        out.append(block.head)
        out += [f"  {line}" for line in block.body]
    out += view.output
    out += [f"Note: {n}" for n in view.notices]
    out.append(view.footer)
    return "\n".join(line for line in out if line)


def _failure_lines(view: VerdictView) -> list[str]:
    """The failure shown: its details, then its entries or its series around the first difference."""
    out = []
    if view.failure is not None and view.details:
        note = f" {view.failure_note}" if view.failure_note else ""
        out.append(f"First failure: {view.failure}{note}")
        out += [f"  {label}: {value}" if label else f"  {value}" for label, value in view.details]
    if view.entries is not None:
        out.append(f"  {view.entries.heading} (index: expected / yours):")
        out += [f"    {index}: {expected} / {got}{'  <-' if first else ''}"
                for index, expected, got, first in view.entries.rows]
    if view.series is not None:
        out.append(f"  {view.series.label} around the first difference ({view.series.axis}: expected / yours):")
        out += [f"    {step}: {expected} / {got}{'  <-' if first else ''}"
                for step, expected, got, first in view.series.rows]
    return out


def _slug_column(rows: Any) -> int:
    """The width of the exercise column: the longest slug (rank0-checkpoint, no-sync-accumulation),
    at least 16, so piped tables stay in line however long the catalog's names grow."""
    return max([16, *(len(r.slug) for r in rows)])


@_draws("ListView")
def _list(view: ListView, width: int = 80) -> str:
    w = _slug_column(view.rows)
    return "\n".join(f"{f'{r.number:>2}. ' if view.numbered else ''}{r.slug:{w}} {r.status:10} "
                     f"{r.difficulty:7} {r.topic:14} {r.title}" for r in view.rows)


@_draws("TextView")
def _text(view: TextView, width: int = 80) -> str:
    return f"{view.title}\n{view.body}"


@_draws("StatementView")
def _statement(view: StatementView, width: int = 80) -> str:
    from io import StringIO

    from rich.console import Console
    from rich.markdown import Markdown

    out = StringIO()
    Console(file=out, width=width, color_system=None, force_terminal=False).print(Markdown(view.markdown))
    return (f"{view.title}\n" if view.show_title else "") + out.getvalue().rstrip("\n")


@_draws("ProgressView")
def _progress(view: ProgressView, width: int = 80) -> str:
    w = _slug_column(view.rows)
    lines = [f"{'exercise':{w}} {'status':10} {'best':>7} {'tries':>5}  {'last practised':15} next review"]
    lines += [f"{r.slug:{w}} {r.status:10} {r.best:>7} {r.attempts:>5}  {r.last:15} {r.due}" for r in view.rows]
    return "\n".join(lines + [view.totals])


@_draws("PracticeSummaryView")
def _practice(view: PracticeSummaryView, width: int = 80) -> str:
    w = _slug_column(view.rows)
    return "\n".join([view.headline] + [f"  {r.slug:{w}} {r.result:18} hints {r.hints:>2}  {r.rating:6} comes back "
                                        f"{r.back}" for r in view.rows])


@_draws("DoctorView")
def _doctor(view: DoctorView, width: int = 80) -> str:
    lines = [f"Isolation level: {view.level}", *view.lines]
    if view.torch is not None:
        lines.append(view.torch)
    lines += view.notes
    for level in view.levels:
        lines.append(f"{'▶ ' if level.current else '  '}{level.name}")
        lines += [f"      - {line}" for line in level.lines]
    return "\n".join(lines + view.after)


@_draws("ValidationView")
def _validation(view: ValidationView, width: int = 80) -> str:
    from judge.views.screens import VALIDATION_COLUMNS

    cells = [list(VALIDATION_COLUMNS)] + [[r.exercise, r.cases, r.caught, r.corpus, r.wrong_names, r.time, r.result]
                                          for r in view.rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(VALIDATION_COLUMNS))]
    table = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(["Exercise validation", *table, *view.lines])


@_draws("ClassView")
def _class(view: ClassView, width: int = 80) -> str:
    """Tab-separated, one student a line, for ``cut`` and spreadsheets."""
    return "\n".join(f"{r.student}\t{r.status}\t{r.score}\t{r.note}" for r in view.rows)


# -- the quiz -----------------------------------------------------------------------------------

@_draws("QuizListView")
def _quiz_list(view: Any, width: int = 80) -> str:
    w = max([8, *(len(r.id) for r in view.rows)])
    t = max([5, *(len(r.topic) for r in view.rows)])
    k = max([4, *(len(r.kind) for r in view.rows)])
    x = max([8, *(len(r.exercise) for r in view.rows)])
    lines = [f"{'id':{w}}  {'topic':{t}}  {'kind':{k}}  {'exercise':{x}}  question"]
    lines += [f"{r.id:{w}}  {r.topic:{t}}  {r.kind:{k}}  {r.exercise:{x}}  {r.question}" for r in view.rows]
    return "\n".join(lines + [view.footer])


@_draws("QuizCardView")
def _quiz_card(view: Any, width: int = 80) -> str:
    lines = [view.heading, view.question]
    if view.code:
        lines += ["  " + line for line in view.code.splitlines()]
    lines += ["  " + choice for choice in view.choices]
    return "\n".join(lines + [view.how])


@_draws("QuizFeedbackView")
def _quiz_feedback(view: Any, width: int = 80) -> str:
    return "\n".join([view.verdict, *([view.why] if view.why else []), view.expected, view.explanation,
                      *(line.text for line in view.lines)])


@_draws("QuizSummaryView")
def _quiz_summary(view: Any, width: int = 80) -> str:
    w = max([8, *(len(r.id) for r in view.rows)])
    return "\n".join([view.headline] + [f"  {r.id:{w}}  {r.result:30}  comes back {r.back}" for r in view.rows])


@_draws("QuizProgressView")
def _quiz_progress(view: Any, width: int = 80) -> str:
    t = max([12, *(len(r.topic) for r in view.rows)])
    lines = [f"{'quiz topic':{t}} {'cards':>5} {'answered':>8} {'right':>5} {'due':>4}  next review"]
    lines += [f"{r.topic:{t}} {r.cards:>5} {r.answered:>8} {r.right:>5} {r.due:>4}  {r.next}" for r in view.rows]
    return "\n".join(lines + [view.totals])


@_draws("QuizValidationView")
def _quiz_validation(view: Any, width: int = 80) -> str:
    w = max([4, *(len(r.deck) for r in view.rows)])
    lines = ["Quiz validation", f"{'deck':{w}}  cards  result"]
    lines += [f"{r.deck:{w}}  {r.cards:>5}  {r.result}" for r in view.rows]
    return "\n".join(lines + view.lines)
