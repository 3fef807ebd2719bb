"""The screens that change in place: the watch loop (a status line at the bottom of a terminal)
and grind grade's progress bar. Their words come from ``judge.views`` like every other screen's;
what is here is the live machinery, and the plain fallback for when there is no terminal."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from judge.render.styled import line as styled_line
from judge.text import clock_text, safe
from judge.views.screens import Line, Tone, grading_line, hint_view, list_view, watch_after_verdict, \
    watch_intro, watch_keys, watch_pick_note
from judge.views.verdict import HintInfo, verdict_view

if TYPE_CHECKING:
    from judge.models import Exercise, Verdict
    from judge.practice import Hint, Recorded, Sitting


class WatchView:
    """The watch loop's screen. On a terminal a status line stays at the bottom (the exercise,
    the interview countdown, "checking…", the keys) and each verdict replaces the screen above
    it (cleared, the exercise's heading redrawn); elsewhere the same things are plain lines,
    appended, with the countdown printed once a minute."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live: Any = None
        self._status = ""
        self._minute: int | None = None
        self._manual = False
        self._intro: tuple[str, list[Line]] | None = None  # the exercise's heading and lines, redrawn with each verdict

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

    def _say(self, line: Line) -> None:
        text = safe(line.text, self.console.encoding)  # paths and messages may come from the learner's files
        if self.console.is_terminal:
            self.console.print(styled_line(text, line.tone))
        else:
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _show(self, view: Any) -> None:
        from judge.render.screen import show

        show(self.console, view)

    def present(self, sitting: Sitting, manual: bool, position: tuple[int, int] | None) -> None:
        self._manual = manual
        # On a terminal the status line at the bottom lists the keys: once is enough.
        heading, lines = watch_intro(sitting, manual, position,
                                     None if self.live is not None else self._keys(sitting))
        self._intro = (heading, lines)
        self._heading(heading, lines)
        self._minute = None

    def _heading(self, heading: str, lines: list[Line]) -> None:
        if self.console.is_terminal:
            self.console.rule(Text(heading, style="bold"))
        else:
            self._say(Line(f"== {heading} =="))
        for line in lines:
            self._say(line)

    def _keys(self, sitting: Sitting) -> str:
        return watch_keys(self._manual, hints=not sitting.interview_running(time.time()))

    def checking(self, sitting: Sitting) -> None:
        if self.live is None:
            self._say(Line("checking…"))
        self._status_line(sitting, None, True)

    def verdict(self, sitting: Sitting, verdict: Verdict, recorded: Recorded, hints_shown: int | None,
                standing: tuple[int, int] | None = None) -> None:
        hints = None if hints_shown is None else HintInfo(hints_shown, len(sitting.exercise.hints), key=True)
        if self.live is not None:
            # As rustlings does: each re-grade replaces the screen (the exercise's heading, then
            # this verdict) instead of scrolling the last one up; plain output appends.
            self.console.clear()
            if self._intro is not None:
                self._heading(*self._intro)
        view = verdict_view(verdict, sitting.exercise, hints, encoding=self.console.encoding, width=self.console.width)
        if verdict.passed:  # watch_after_verdict ends a pass with the loop's own footer: one, not two
            view = view._replace(footer="")
        after = watch_after_verdict(sitting, verdict, recorded, standing)
        # The screen also holds the heading above the verdict and these lines below it: a plot
        # is drawn only if all of it fits with them (the status line takes the prompt's row).
        heading = 1 + len(self._intro[1]) if self.live is not None and self._intro is not None else 0
        self._show(view._replace(reserved_rows=heading + len(after)))
        for line in after:
            self._say(line)

    def hint(self, sitting: Sitting, hint: Hint | None) -> None:
        if hint is None:
            self._say(Line(f"{sitting.slug} has no hints."))
            return
        self._show(hint_view(hint.number, hint.total, hint.text, hint.last))

    def listing(self, rows: list[tuple[Exercise, str]], current: str, pick: bool = False) -> None:
        self._show(list_view(rows, numbered=pick))
        self._say(watch_pick_note(current, pick))

    def message(self, text: str) -> None:
        self._say(Line(text, Tone.NOTE))

    def tick(self, sitting: Sitting, now: float, checking: bool) -> None:
        interview = sitting.interview
        remaining = interview.remaining(now) if interview is not None and sitting.interview_running(now) else None
        if self.live is None:
            if remaining is not None and int(remaining // 60) != self._minute:
                self._minute = int(remaining // 60)
                self._say(Line(f"{clock_text(remaining)} left"))
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
        parts.append(self._keys(sitting))
        status = "  ·  ".join(parts)
        if status != self._status:
            self._status = status
            self.live.update(Text(status, style="reverse"), refresh=True)


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
            status = grading_line(student, row["verdict"]["status"], reused)
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
