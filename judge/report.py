"""Render verdicts and listings for people. The only core module that imports rich.

Every function takes its ``Console`` as an argument (tests pass
``Console(file=StringIO(), width=80)``), and nothing here builds a global console. When the
console is not a terminal the same content is printed as plain lines, without boxes or colour,
so logs and pipes stay readable.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from judge.models import CheckStatus, Exercise, Status, Verdict
from judge.text import clock_text, safe, safe_data, terminal_safe, until_text  # noqa: F401 - re-exported

if TYPE_CHECKING:
    from judge.practice import Hint, Recorded, Sitting
    from judge.progress import Overview

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
    key: bool = False  # in the watch loop, where h shows the next hint


def compact(value: Any) -> str:
    """An input or a value on one line, whole: JSON with every number as it came (the runner
    and judge.compare already wrote each as the shortest decimal that is exact in its dtype).
    Never cut: a number cut in half, or "<50 items>", is not a failure a learner can re-run.
    Only observations too large to read arrive here already summarised by their shape."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": "), default=str)


def number(value: float) -> str:
    """One float, exactly: the shortest decimal that reads back to it (2**18 is 262144.0)."""
    return repr(float(value))


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
        from judge.compare import magnitude_text  # numpy, only once there is an error to show

        relative = (f", {magnitude_text(failure.max_rel_err)} relative" if failure.max_rel_err is not None
                    else " (the expected value is 0: no relative error)")
        lines.append(("Largest error", f"{magnitude_text(failure.max_abs_err)} absolute{relative}"))
    return lines


def _footer(verdict: Verdict, exercise: Exercise, hints: HintInfo | None) -> str:
    slug = exercise.slug
    if verdict.passed:
        return f"Well done. Compare with the reference: grind solution {slug}"
    if hints is None or hints.total == 0:
        return ""
    if hints.shown < hints.total:
        if hints.key:
            return f"Stuck? Press h for hint {hints.shown + 1} of {hints.total}."
        return f"Stuck? grind hint {slug} shows hint {hints.shown + 1} of {hints.total}."
    return f"All {hints.total} hints shown. Re-read them with grind hint {slug} --all."


def printable(verdict: Verdict, encoding: str = "utf-8") -> Verdict:
    """A copy of ``verdict`` whose learner-made text (messages, check names, inputs, values,
    printed output) the console can encode: a lone surrogate in an exception message would
    otherwise make printing the report fail, and turn the learner's failure into grind's."""
    term = terminal_safe
    checks = [replace(c, name=term(c.name, encoding), message=term(c.message, encoding),
                      input=safe_data(c.input, encoding), expected=safe_data(c.expected, encoding),
                      got=safe_data(c.got, encoding), observation=safe_data(c.observation, encoding))
              for c in verdict.checks]
    return replace(verdict, checks=checks, message=term(verdict.message, encoding),
                   stdout=term(verdict.stdout, encoding), stderr=term(verdict.stderr, encoding),
                   notices=[term(n, encoding) for n in verdict.notices])


def diagnosis_lines(verdict: Verdict) -> list[tuple[str, list[str]]]:
    """Each named mistake: a heading, then its explanation and what it explains. A library's
    convention is introduced as that library's, not as a mistake; differences no known mistake
    explains are said plainly at the end."""
    blocks: list[tuple[str, list[str]]] = []
    many = len(verdict.diagnoses) > 1
    for diagnosis in verdict.diagnoses or ([verdict.diagnosis] if verdict.diagnosis else []):
        if diagnosis.library:
            kind = "convention" if diagnosis.convention else "behaviour"
            head = f"Looks like {diagnosis.library}'s {kind}: {diagnosis.name}"
        else:
            head = f"{'Also' if blocks else 'Diagnosis'}: {diagnosis.name}" if many else f"Diagnosis: {diagnosis.name}"
        body = [diagnosis.explanation]
        if diagnosis.explains and (many or not diagnosis.complete):
            body.append(f"It explains: {diagnosis.explains}.")
        blocks.append((head, body))
    if blocks and verdict.unexplained:
        blocks.append(("And more: differences that are not among the known mistakes",
                       [f"{verdict.unexplained}."]))
    return blocks


def render_verdict(console: Console, verdict: Verdict, exercise: Exercise, hints: HintInfo | None = None,
                   lead: list[str] | None = None) -> None:
    """The verdict as a panel: one line per check, then the first failure in detail, the
    diagnosed pitfall with its explanation, and the next hint on offer. ``lead`` notices say
    what was graded (e.g. the untouched stub, outside a workspace): they come before it all."""
    verdict = printable(verdict, console.encoding)
    lead = [terminal_safe(n, console.encoding) for n in lead or []]
    status_word = verdict.status.value.upper()
    title = f"{exercise.slug} · {exercise.title}"
    details = _detail_lines(verdict)
    footer = _footer(verdict, exercise, hints)
    failure = verdict.first_failure

    if not console.is_terminal:
        out = [f"Note: {n}" for n in lead] + [f"{title}: {status_word}", verdict.message]
        for status, name, kind, message in _check_rows(verdict):
            message = f": {message}" if message else ""
            kind = f" ({kind})" if kind else ""
            out.append(f"  {PLAIN_MARK[status]:5} {name}{kind}{message}")
        if failure is not None and details:
            out.append(f"First failure: {failure.name}")
            out += [f"  {label}: {text}" for label, text in details]
        if failure is not None and failure.series:
            expected, got = failure.series["expected"], failure.series["got"]
            first, base = _first_difference(expected, got), failure.series.get("first_step", 0)
            out.append(f"  {failure.observation} around the first difference (step: expected / yours):")
            out += [f"    {i + base}: {number(expected[i])} / {number(got[i])}{'  <-' if i == first else ''}"
                    for i in range(max(0, first - 2), min(len(expected), first + 4))]
        for head, body in diagnosis_lines(verdict):
            out.append(head)
            out += [f"  {line}" for line in body]
        out += _output_lines(verdict)
        out += [f"Note: {n}" for n in verdict.notices]
        if footer:
            out.append(footer)
        console.print("\n".join(line for line in out if line), markup=False, highlight=False, soft_wrap=True)
        return

    parts: list[Any] = [Text(notice, style="yellow") for notice in lead]
    if verdict.message:
        parts.append(Text(verdict.message, style="bold" if verdict.checks else ""))
    if verdict.checks:
        table = Table.grid(padding=(0, 1))
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True, overflow="ellipsis", max_width=34)
        table.add_column(style="dim", no_wrap=True)
        table.add_column(overflow="fold")
        for status, name, kind, message in _check_rows(verdict):
            mark, style = MARK[status]
            # Learner-made strings (names, exception messages) are Text, never rich markup.
            table.add_row(Text(mark, style=style), Text(name), Text(kind), Text(message))
        parts.append(table)
    if failure is not None and details:
        parts.append(Text(f"\nFirst failure: {failure.name}", style="bold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column(overflow="fold")
        for label, text in details:
            grid.add_row(Text(f"  {label}:"), Text(text))
        parts.append(grid)
    if failure is not None and failure.series:
        parts.append(_series_view(console, failure.series, failure.observation or "value"))
    for head, body in diagnosis_lines(verdict):
        label, _, name = head.partition(": ")
        parts.append(Text.assemble(("\n" + label + ": ", "bold"), (name, "bold red")))
        parts += [Text(line) for line in body]
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


def _series_view(console: Console, series: dict[str, Any], label: str) -> Any:
    """A curve is faster to read than a table: plot yours against the reference's. Without
    colour (NO_COLOR, or a console without colour) the two lines could not be told apart, so
    show the steps around the first divergence as a table instead."""
    expected, got, base = series["expected"], series["got"], series.get("first_step", 0)
    if console.color_system is not None and not console.no_color:
        import plotext as plt

        plt.clear_figure()
        plt.plot_size(max(40, min(console.width - 12, 100)), 14)
        plt.theme("clear")
        # No plotext legend: at 80 columns it sits on the curves. The title names the colours.
        plt.plot(*_stepped(expected, base), color="green")
        plt.plot(*_stepped(got, base), color="red")
        plt.xticks(_whole_ticks(base, base + max(len(expected), len(got)) - 1))
        plt.title(f"{label}: reference (green), yours (red)")
        plt.xlabel("step")
        return Text.from_ansi(plt.build())
    return _series_table(expected, got, label, base)


def _stepped(values: list[float], base: int) -> tuple[list[float], list[float]]:
    """A per-step series as a staircase: each value holds until the next step (a loss scale
    that halves is a drop, not a ramp between two steps)."""
    xs: list[float] = []
    ys: list[float] = []
    for i, value in enumerate(values):
        if i:
            xs.append(i + base)
            ys.append(values[i - 1])
        xs.append(i + base)
        ys.append(value)
    return xs, ys


def _whole_ticks(first: int, last: int, most: int = 8) -> list[int]:
    """Whole-number step ticks, at most ``most`` of them, evenly spaced."""
    stride = max(1, -(-(last - first) // max(1, most - 1)))
    return list(range(first, last + 1, stride))


def _series_table(expected: list[float], got: list[float], label: str, base: int = 0) -> Group:
    first = _first_difference(expected, got)
    table = Table(box=None, padding=(0, 2))
    for column in ("step", "expected", "yours"):
        table.add_column(column, justify="right")
    table.add_column("", width=1, no_wrap=True)  # the marker, in a column of its own: numbers stay aligned
    for i in range(max(0, first - 2), min(len(expected), first + 4)):
        table.add_row(str(i + base), number(expected[i]), number(got[i]), "◀" if i == first else "")
    return Group(Text(f"{label} around the first difference:", style="bold"), table)


def _first_difference(expected: list[float], got: list[float]) -> int:
    return next((i for i, (e, g) in enumerate(zip(expected, got)) if not _close(e, g)), 0)


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


def _check_rows(verdict: Verdict) -> list[tuple[CheckStatus, str, str, str]]:
    """(status, name, kind, message) per line of the check list. A run of checks that fail with
    the previous failure's error is one line with their count (an untouched stub raises the
    same NotImplementedError in every case: once is enough to read it)."""
    rows: list[tuple[CheckStatus, str, str, str]] = []
    repeats = 0

    def flush() -> None:
        nonlocal repeats
        if repeats:
            rows.append((CheckStatus.ERROR, f"… {repeats} more check{'s' if repeats > 1 else ''}", "",
                         "same error"))
        repeats = 0

    for check, message in zip(verdict.checks, _messages(verdict)):
        if message == "same error":
            repeats += 1
            continue
        flush()
        rows.append((check.status, check.name, check.kind, message))
    flush()
    return rows


def _output_lines(verdict: Verdict) -> list[str]:
    lines = []
    for label, text in (("printed", verdict.stdout), ("wrote to stderr", verdict.stderr)):
        shown = [line for line in text.strip().splitlines() if line.strip()][:8]
        if shown:
            lines.append(f"Your code {label}:")
            lines += [f"  {line[:200]}" for line in shown]
    return lines


def render_list(console: Console, rows: list[tuple[Exercise, str]], numbered: bool = False) -> None:
    """The exercises and their status; ``numbered`` (in watch) puts the number that picks each first."""
    table = Table(title="Exercises", expand=False)
    for column in ("#",) * numbered + ("exercise", "title", "topic", "difficulty", "status"):
        table.add_column(column)
    colours = {"passed": "green", "attempted": "yellow", "new": "dim"}
    for number, (exercise, status) in enumerate(rows, start=1):
        table.add_row(*(str(number),) * numbered, exercise.slug, exercise.title, exercise.topic, exercise.difficulty,
                      Text(status, style=colours.get(status, "")))
    if console.is_terminal:
        console.print(table)
    else:
        for number, (exercise, status) in enumerate(rows, start=1):
            console.print(f"{f'{number:>2}. ' if numbered else ''}{exercise.slug:16} {status:10} "
                          f"{exercise.difficulty:7} {exercise.topic:14} {exercise.title}",
                          markup=False, highlight=False, soft_wrap=True)


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


# -- progress, practice sessions and the watch loop -------------------------------------------

def minutes_text(minutes: float) -> str:
    """"1 minute", "1.5 minutes", "25 minutes"."""
    return f"{minutes:g} minute{'' if minutes == 1 else 's'}"


def render_statement(console: Console, title: str, body: str) -> None:
    """An exercise's statement, rendered as Markdown; its own "# heading" is the title, so the
    title is printed only when the statement has none."""
    from rich.markdown import Markdown

    if not body.lstrip().startswith("# "):
        console.print(Text(title, style="bold"))
    console.print(Markdown(body))


def _day(ts: float) -> date:
    return datetime.fromtimestamp(ts).date()


def ago_text(ts: float | None, now: float) -> str:
    if ts is None:
        return "never"
    days = (_day(now) - _day(ts)).days
    return "today" if days <= 0 else "yesterday" if days == 1 else f"{days} days ago"


def render_progress(console: Console, overview: Overview) -> None:
    """``grind progress``: one row per exercise, then the totals and the streak."""
    now = overview.now
    rows = [(e.slug, e.status, clock_text(e.best_time_s), str(e.attempts), ago_text(e.last_practised, now),
             until_text(e.next_review, now)) for e in overview.exercises]
    streak = f"{overview.streak_days} day{'s' if overview.streak_days != 1 else ''}"
    attempts = f"{overview.attempts} attempt{'s' if overview.attempts != 1 else ''}"
    totals = (f"{overview.passed} of {len(overview.exercises)} passed · {attempts} · "
              f"{overview.due} due now · streak: {streak}")
    if not console.is_terminal:
        console.print(f"{'exercise':16} {'status':10} {'best':>7} {'tries':>5}  {'last practised':15} next review",
                      markup=False, highlight=False, soft_wrap=True)
        for slug, status, best, attempts, last, due in rows:
            console.print(f"{slug:16} {status:10} {best:>7} {attempts:>5}  {last:15} {due}",
                          markup=False, highlight=False, soft_wrap=True)
        console.print(totals, markup=False, highlight=False, soft_wrap=True)
        return
    table = Table(title="Progress", caption=totals, expand=False)
    for column, justify in (("exercise", "left"), ("status", "left"), ("best time", "right"), ("attempts", "right"),
                            ("last practised", "left"), ("next review", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    colours = {"passed": "green", "attempted": "yellow", "new": "dim"}
    for slug, status, best, attempts, last, due in rows:
        table.add_row(slug, Text(status, style=colours.get(status, "")),
                      best, attempts, last, Text(due, style="bold cyan" if due == "now" else ""))
    console.print(table)


def _outcome_text(sitting: Sitting) -> str:
    if sitting.passed_at is not None:
        return f"passed in {clock_text(sitting.time_to_pass)}" if sitting.time_to_pass is not None else "passed"
    if sitting.interview is not None and sitting.interview.outcome == "timeout":
        return "time up"
    return "not passed" if sitting.attempts else "skipped"


def render_practice_summary(console: Console, sittings: list[Sitting], now: float) -> None:
    """The end of a practice session: how each exercise went and when it comes back."""
    rows = []
    for s in sittings:
        rating = s.review.rating if s.review else "—"
        back = until_text(s.review.due, now) if s.review else "not rescheduled"
        rows.append((s.slug, _outcome_text(s), str(s.hints_used), rating, back))
    passed = sum(1 for s in sittings if s.passed_at is not None)
    headline = f"Session over: {passed} of {len(sittings)} passed."
    if not console.is_terminal:
        lines = [headline] + [f"  {slug:16} {outcome:18} hints {hints:>2}  {rating:6} comes back {back}"
                              for slug, outcome, hints, rating, back in rows]
        console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)
        return
    table = Table(title=headline, expand=False)
    for column in ("exercise", "result", "hints", "rating", "comes back"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    console.print(table)


KEYS_HELP = "h hint · n next · l list · q quit"


class WatchView:
    """The watch loop's screen. On a terminal a status line stays at the bottom (the exercise,
    the interview countdown, "checking…", the keys) and verdicts print above it; elsewhere the
    same things are plain lines, with the countdown printed once a minute."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live: Any = None
        self._status = ""
        self._minute: int | None = None
        self._manual = False

    def __enter__(self) -> WatchView:
        if self.console.is_terminal:
            from rich.live import Live

            self.live = Live(Text(""), console=self.console, auto_refresh=False, transient=True,
                             redirect_stdout=False, redirect_stderr=False)
            self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def _say(self, text: str, style: str = "") -> None:
        text = safe(text, self.console.encoding)  # paths and messages may come from the learner's files
        if self.console.is_terminal:
            self.console.print(Text(text, style=style))
        else:
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def present(self, sitting: Sitting, manual: bool, position: tuple[int, int] | None) -> None:
        exercise = sitting.exercise
        where = f" ({position[0]} of {position[1]})" if position else ""
        if self.console.is_terminal:
            self.console.rule(Text(f"{exercise.slug} · {exercise.title}{where}", style="bold"))
        else:
            self._say(f"== {exercise.slug} · {exercise.title}{where} ==")
        action = "press Enter to check it" if manual else "save it to check it (Enter checks too)"
        self._say(f"Edit {sitting.path} and {action}. Statement: grind show {exercise.slug}")
        if sitting.backup is not None:
            self._say(f"Started from a fresh file; your previous one is saved as {sitting.backup}.", "dim")
        if sitting.interview is not None and sitting.interview.ended_at is None:
            minutes = (sitting.interview.deadline - sitting.interview.started_at) / 60
            self._say(f"Interview: {minutes_text(minutes)} on the clock, from memory. No hints and no solution until "
                      "you pass or the time is up.", "bold yellow")
        for note in sitting.notes:
            self._say(note, "yellow")
        self._manual = manual
        if self.live is None:  # on a terminal the status line at the bottom lists the keys: once is enough
            self._say(f"Keys: {self._keys()}", "dim")
        self._minute = None

    def _keys(self) -> str:
        return KEYS_HELP + (" · Enter check" if self._manual else "")

    def checking(self, sitting: Sitting) -> None:
        if self.live is None:
            self._say("checking…")
        self._status_line(sitting, None, True)

    def verdict(self, sitting: Sitting, verdict: Verdict, recorded: Recorded, hints_shown: int | None,
                standing: tuple[int, int] | None = None) -> None:
        hints = None if hints_shown is None else HintInfo(hints_shown, len(sitting.exercise.hints), key=True)
        render_verdict(self.console, verdict, sitting.exercise, hints)
        if standing is not None:
            self._say(f"Exercises: {standing[0]} of {standing[1]} passed.", "bold")
        if recorded.interview_passed and sitting.time_to_pass is not None:
            self._say(f"Interview passed in {clock_text(sitting.time_to_pass)}.", "bold green")
        if recorded.review is not None:
            when = until_text(recorded.review.due, recorded.attempt.ended_at)
            self._say(f"{sitting.slug} comes back for review {when}.", "cyan")
        if verdict.passed:
            self._say("n: next exercise · q: quit (nothing moves on until you say so)", "dim")

    def hint(self, sitting: Sitting, hint: Hint | None) -> None:
        if hint is None:
            self._say(f"{sitting.slug} has no hints.")
            return
        suffix = " (the last one)" if hint.last else ""
        render_text(self.console, f"Hint {hint.number} of {hint.total}{suffix}", hint.text)

    def listing(self, rows: list[tuple[Exercise, str]], current: str, pick: bool = False) -> None:
        render_list(self.console, rows, numbered=pick)
        if pick:
            self._say(f"You are on {current}. Type a number and press Enter to switch; n moves to the next one.",
                      "dim")
        else:
            self._say(f"You are on {current}. n moves to the next one.", "dim")

    def message(self, text: str) -> None:
        self._say(text, "yellow")

    def tick(self, sitting: Sitting, now: float, checking: bool) -> None:
        remaining = sitting.interview.remaining(now) if sitting.interview_running(now) else None
        if self.live is None:
            if remaining is not None and int(remaining // 60) != self._minute:
                self._minute = int(remaining // 60)
                self._say(f"{clock_text(remaining)} left")
            return
        self._status_line(sitting, remaining, checking)

    def _status_line(self, sitting: Sitting, remaining: float | None, checking: bool) -> None:
        if self.live is None:
            return
        parts = [sitting.slug]
        if remaining is not None:
            parts.append(f"⏱ {clock_text(remaining)} left")
        if checking:
            parts.append("checking…")
        parts.append(self._keys())
        status = "  ·  ".join(parts)
        if status != self._status:
            self._status = status
            self.live.update(Text(status, style="reverse"), refresh=True)


def render_doctor(console: Console, info: dict[str, Any]) -> None:
    """grind doctor: the isolation level in force, and what every level does and does not give."""
    console.print(Text.assemble(("Isolation level: ", "bold"), (info["level"], "bold green" if info["grading_allowed"]
                                                                 else "bold yellow")))
    console.print(Text("Layers: " + " + ".join(info["layers"])))
    console.print(Text("Submissions run as: " + info["child_user"]))
    if info.get("torch"):
        console.print(Text(f"torch: {info['torch']} ({info['python']})"))
    elif "torch" in info:
        console.print(Text(f"torch: missing in {info['python']}: grading needs it; {info['torch_advice']}",
                           style="bold red"))
    for note in info["notes"]:
        console.print(Text("Note: " + note))
    for level, lines in info["guarantees"].items():
        marker = "▶ " if level == info["level"] else "  "
        console.print(Text(f"{marker}{level}", style="bold" if level == info["level"] else ""))
        for line in lines:
            console.print(Text(f"      - {line}"))
    if info["strengthen"]:
        console.print(Text("Stronger isolation: " + info["strengthen"]))
    if not info["grading_allowed"]:
        console.print(Text("grind grade refuses this level unless given --allow-weak-isolation."))


def render_validation(console: Console, reports: list[Any]) -> None:
    """One row per exercise (cases, pitfalls caught, time), then every problem on its own line."""
    table = Table(title="Exercise validation", box=None if not console.is_terminal else None)
    for column in ("exercise", "cases", "pitfalls caught", "corpus named", "time", "result"):
        table.add_column(column)
    for r in reports:
        corpus = getattr(r, "corpus", None)
        named = "no corpus" if corpus is None else corpus.share_text()
        table.add_row(r.exercise, str(r.cases), f"{r.caught}/{r.pitfalls}", named, f"{r.seconds:.1f} s",
                      Text("adequate", style="green") if r.ok else Text(f"{len(r.problems)} problem(s)", style="red"))
    console.print(table)
    for r in reports:
        if getattr(r, "corpus", None) is not None:
            console.print(f"{r.exercise} corpus: {r.corpus.summary()}", markup=False, emoji=False, highlight=False, soft_wrap=True)
    for r in reports:
        for problem in r.problems:
            console.print(f"{r.exercise}: {problem}", markup=False, emoji=False, highlight=False, soft_wrap=True)


class grading_progress:  # noqa: N801 - used as a context manager, reads like a function
    """Progress for ``grind grade`` on stderr; yields the per-student callback. A rich bar on a
    terminal; elsewhere (a CI log, a pipe, nohup) one plain line per student,
    ``graded 12/40 ann: failed``, flushed as it lands."""

    def __init__(self, console: Console, total: int | None = None) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = console
        self.total = total
        self.done = 0
        self.lock = threading.Lock()
        self.progress = Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.description}"), console=console, transient=True,
                                 disable=not console.is_terminal)
        self.task = self.progress.add_task("", total=total)

    def __enter__(self) -> Any:
        self.progress.start()

        def tick(student: str, row: dict[str, Any], reused: bool) -> None:
            note = " (unchanged, kept)" if reused else ""
            status = f"{safe(student)}: {row['verdict']['status']}{note}"
            with self.lock:
                self.done += 1
                self.progress.update(self.task, advance=1, description=status)
                if not self.console.is_terminal:
                    out_of = f"/{self.total}" if self.total is not None else ""
                    self.console.print(f"graded {self.done}{out_of} {status}", markup=False, highlight=False,
                                       emoji=False, soft_wrap=True)
                    self.console.file.flush()

        return tick

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


def render_class(console: Console, rows: list[dict[str, Any]]) -> None:
    from judge.formats import row_score

    table = Table(title="Class results")
    for column in ("student", "status", "score", "pitfall"):
        table.add_column(column)
    for row in rows:
        verdict = row["verdict"]
        got, total = row_score(row)
        table.add_row(Text(safe(row["student"])), verdict["status"], f"{got}/{total}",
                      verdict["pitfall"]["name"] if verdict.get("pitfall") else "")
    if console.is_terminal:
        console.print(table)
    else:
        for row in rows:
            verdict = row["verdict"]
            got, total = row_score(row)
            console.print(f"{safe(row['student'])}\t{verdict['status']}\t{got}/{total}", markup=False,
                          highlight=False)
