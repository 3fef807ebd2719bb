"""Render verdicts and listings for people. The only core module that imports rich.

Every function takes its ``Console`` as an argument (tests pass
``Console(file=StringIO(), width=80)``), and nothing here builds a global console. When the
console is not a terminal the same content is printed as plain lines, without boxes or colour,
so logs and pipes stay readable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from judge.models import CheckStatus, Exercise, Status, Verdict

STATUS_STYLE = {
    Status.PASSED: "bold green",
    Status.FAILED: "bold red",
    Status.FORBIDDEN: "bold magenta",
    Status.ERROR: "bold yellow",
    Status.TIMEOUT: "bold yellow",
    Status.CRASHED: "bold yellow",
}
MARK = {CheckStatus.PASSED: ("✔", "green"), CheckStatus.FAILED: ("✘", "red"),
        CheckStatus.ERROR: ("✘", "red"), CheckStatus.NOT_RUN: ("·", "dim")}
PLAIN_MARK = {CheckStatus.PASSED: "PASS", CheckStatus.FAILED: "FAIL", CheckStatus.ERROR: "ERROR",
              CheckStatus.NOT_RUN: "SKIP"}


@dataclass
class HintInfo:
    shown: int
    total: int


def compact(value: Any, limit: int = 160) -> str:
    """One short line for an input or a value: JSON without spaces, cut with an ellipsis."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, separators=(", ", ": "), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _detail_lines(verdict: Verdict) -> list[tuple[str, str]]:
    """(label, text) pairs explaining the first failure."""
    failure = verdict.first_failure
    lines: list[tuple[str, str]] = []
    if failure is None:
        return lines
    if failure.input is not None:
        lines.append(("Input", compact(failure.input)))
    which = f" {failure.observation}" if failure.observation else ""
    if failure.expected is not None:
        lines.append((f"Expected{which}", compact(failure.expected)))
    if failure.got is not None:
        lines.append((f"Got{which}", compact(failure.got)))
    if failure.max_abs_err is not None:
        lines.append(("Largest error", f"{failure.max_abs_err:.3g} absolute, {failure.max_rel_err:.3g} relative"))
    return lines


def _footer(verdict: Verdict, exercise: Exercise, hints: HintInfo | None) -> str:
    slug = exercise.slug
    if verdict.passed:
        return f"Well done. Compare with the reference: grind solution {slug}"
    if hints is None or hints.total == 0:
        return ""
    if hints.shown < hints.total:
        return f"Stuck? grind hint {slug} shows hint {hints.shown + 1} of {hints.total}."
    return f"All {hints.total} hints shown. Re-read them with grind hint {slug} --all."


def render_verdict(console: Console, verdict: Verdict, exercise: Exercise, hints: HintInfo | None = None) -> None:
    """The verdict as a panel: one line per check, then the first failure in detail, the
    diagnosed pitfall with its explanation, and the next hint on offer."""
    status_word = verdict.status.value.upper()
    title = f"{exercise.slug} · {exercise.title}"
    details = _detail_lines(verdict)
    footer = _footer(verdict, exercise, hints)
    failure = verdict.first_failure

    if not console.is_terminal:
        out = [f"{title}: {status_word}", verdict.message]
        for check, message in zip(verdict.checks, _messages(verdict)):
            message = f": {message}" if message else ""
            out.append(f"  {PLAIN_MARK[check.status]:5} {check.name} ({check.kind}){message}")
        if failure is not None and details:
            out.append(f"First failure: {failure.name}")
            out += [f"  {label}: {text}" for label, text in details]
        if failure is not None and failure.series:
            expected, got = failure.series["expected"], failure.series["got"]
            first = next((i for i, (e, g) in enumerate(zip(expected, got)) if not _close(e, g)), 0)
            out.append(f"  {failure.observation} around the first difference (step: expected / yours):")
            out += [f"    {i}: {expected[i]:.6g} / {got[i]:.6g}{'  <-' if i == first else ''}"
                    for i in range(max(0, first - 2), min(len(expected), first + 4))]
        if verdict.diagnosis:
            out.append(f"Diagnosis: {verdict.diagnosis.name}")
            out.append(f"  {verdict.diagnosis.explanation}")
        out += _output_lines(verdict)
        out += [f"Note: {n}" for n in verdict.notices]
        if footer:
            out.append(footer)
        console.print("\n".join(line for line in out if line), markup=False, highlight=False, soft_wrap=True)
        return

    parts: list[Any] = []
    if verdict.message:
        parts.append(Text(verdict.message, style="bold" if verdict.checks else ""))
    if verdict.checks:
        table = Table.grid(padding=(0, 1))
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True, overflow="ellipsis", max_width=34)
        table.add_column(style="dim", no_wrap=True)
        table.add_column(overflow="fold")
        for check, message in zip(verdict.checks, _messages(verdict)):
            mark, style = MARK[check.status]
            table.add_row(Text(mark, style=style), check.name, check.kind, message)
        parts.append(table)
    if failure is not None and details:
        parts.append(Text(f"\nFirst failure: {failure.name}", style="bold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column(overflow="fold")
        for label, text in details:
            grid.add_row(f"  {label}:", text)
        parts.append(grid)
    if failure is not None and failure.series:
        parts.append(_series_view(console, failure.series, failure.observation or "value"))
    if verdict.diagnosis:
        parts.append(Text.assemble(("\nDiagnosis: ", "bold"), (verdict.diagnosis.name, "bold red")))
        parts.append(Text(verdict.diagnosis.explanation))
    for line in _output_lines(verdict):
        parts.append(Text(line, style="dim"))
    for notice in verdict.notices:
        parts.append(Text(notice, style="yellow"))
    if footer:
        parts.append(Text("\n" + footer, style="cyan"))
    console.print(Panel(
        Group(*parts),
        title=Text(title, style="bold"),
        subtitle=Text(f" {status_word} ", style=STATUS_STYLE[verdict.status]),
        subtitle_align="right",
        expand=True,
    ))


def _series_view(console: Console, series: dict[str, list[float]], label: str) -> Any:
    """A curve is faster to read than a table: plot yours against the reference's. Without
    colour (NO_COLOR, or a console without colour) the two lines could not be told apart, so
    show the steps around the first divergence as a table instead."""
    expected, got = series["expected"], series["got"]
    if console.color_system is not None and not console.no_color:
        import plotext as plt

        plt.clear_figure()
        plt.plot_size(max(40, min(console.width - 12, 100)), 14)
        plt.theme("clear")
        plt.plot(list(range(len(expected))), expected, label="reference", color="green")
        plt.plot(list(range(len(got))), got, label="yours", color="red")
        plt.title(label)
        plt.xlabel("step")
        return Text.from_ansi(plt.build())
    return _series_table(expected, got, label)


def _series_table(expected: list[float], got: list[float], label: str) -> Table:
    first = next((i for i, (e, g) in enumerate(zip(expected, got)) if not _close(e, g)), 0)
    table = Table(title=f"{label} around the first difference", box=None, padding=(0, 2))
    for column in ("step", "expected", "yours"):
        table.add_column(column, justify="right")
    for i in range(max(0, first - 2), min(len(expected), first + 4)):
        marker = " ◀" if i == first else ""
        table.add_row(str(i), f"{expected[i]:.6g}", f"{got[i]:.6g}{marker}")
    return table


def _close(a: float, b: float) -> bool:
    return a == b or (a != a and b != b) or abs(a - b) <= 1e-9 + 1e-6 * abs(a)


def _messages(verdict: Verdict) -> list[str]:
    """Per-check messages, with a repeat of the previous failure's error shortened: an
    unimplemented stub raises the same error in every case, and once is enough to read it."""
    out, previous = [], None
    for check in verdict.checks:
        if check.status is CheckStatus.PASSED:
            out.append("")
            continue
        core = check.message.split("smallest shown. ")[-1]
        out.append("same error" if core == previous and check.status is CheckStatus.ERROR else check.message)
        previous = core
    return out


def _output_lines(verdict: Verdict) -> list[str]:
    lines = []
    for label, text in (("printed", verdict.stdout), ("wrote to stderr", verdict.stderr)):
        shown = [line for line in text.strip().splitlines() if line.strip()][:8]
        if shown:
            lines.append(f"Your code {label}:")
            lines += [f"  {line[:200]}" for line in shown]
    return lines


def render_list(console: Console, rows: list[tuple[Exercise, str]]) -> None:
    table = Table(title="Exercises", expand=False)
    for column in ("exercise", "title", "topic", "difficulty", "status"):
        table.add_column(column)
    colours = {"passed": "green", "attempted": "yellow", "new": "dim"}
    for exercise, status in rows:
        table.add_row(exercise.slug, exercise.title, exercise.topic, exercise.difficulty,
                      Text(status, style=colours.get(status, "")))
    if console.is_terminal:
        console.print(table)
    else:
        for exercise, status in rows:
            console.print(f"{exercise.slug:16} {status:10} {exercise.difficulty:7} {exercise.topic:14} "
                          f"{exercise.title}", markup=False, highlight=False, soft_wrap=True)


def render_text(console: Console, title: str, body: str, syntax: bool = False) -> None:
    """A statement, a hint or a solution: in a panel on a terminal, as is elsewhere."""
    if not console.is_terminal:
        console.print(f"{title}\n{body}", markup=False, highlight=False, soft_wrap=True)
        return
    if syntax:
        from rich.syntax import Syntax

        console.print(Panel(Syntax(body, "python", line_numbers=False), title=title))
    else:
        console.print(Panel(Text(body), title=title))
