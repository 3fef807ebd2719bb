"""What a learner asks of the workspace as a whole, beside grading one exercise: every exercise
in order (``grind run --all``, like ``rustlings verify``), the diff of a passed file against the
reference, a ``file:line: message`` line for editors, and the progress as CSV or Markdown.

Core code: no typer, no rich. The CLI draws the progress bar (``judge.render``) and calls these.
"""

from __future__ import annotations

import csv
import difflib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from judge.errors import UsageError
from judge.models import Exercise, Verdict
from judge.progress import Overview, Progress, iso


@dataclass
class AllResult:
    """``grind run --all``: the exercises graded, in order, up to the first that does not pass."""

    graded: list[tuple[str, Verdict]] = field(default_factory=list)
    total: int = 0
    stub_untouched: list[str] = field(default_factory=list)  # graded as the untouched stub: not a try
    # Not graded this time (after the stop) but passed before, by the progress: a learner who
    # passed four exercises out of order must not read "1 of 21 pass".
    passed_before: list[str] = field(default_factory=list)

    @property
    def first_failure(self) -> tuple[str, Verdict] | None:
        return next(((slug, v) for slug, v in self.graded if not v.passed), None)

    @property
    def all_passed(self) -> bool:
        return self.first_failure is None and len(self.graded) == self.total


def grade_all(progress: Progress, root: Path, exercises: list[Exercise], *,
              grade_one: Callable[[Exercise, Path, bool], Any],
              on_graded: Callable[[str, str], None] | None = None) -> AllResult:
    """Grade each exercise's workspace file in curriculum order and stop at the first that does
    not pass (as ``rustlings verify`` does: that one is the next thing to work on). Each grade is
    recorded as ``grind run`` records it, except a file still holding the untouched stub, which is
    graded and not counted as a try. ``grade_one(exercise, path, record)`` returns the Outcome."""
    from judge.workspace import learner_file

    result = AllResult(total=len(exercises))
    for exercise in exercises:
        path = learner_file(root, exercise)
        if not path.is_file():
            raise UsageError(f"{path} is missing: 'grind reset {exercise.slug}' puts the stub back")
        untouched = _is_stub(path, exercise)
        if untouched:
            result.stub_untouched.append(exercise.slug)
        outcome = grade_one(exercise, path, not untouched)
        result.graded.append((exercise.slug, outcome.verdict))
        if on_graded is not None:
            on_graded(exercise.slug, outcome.verdict.status.value)
        if not outcome.verdict.passed:
            break
    graded = {slug for slug, _ in result.graded}
    result.passed_before = [e.slug for e in exercises
                            if e.slug not in graded and progress.passed(e.slug)]
    return result


def _is_stub(path: Path, exercise: Exercise) -> bool:
    try:
        return path.read_bytes() == exercise.stub_path.read_bytes()
    except OSError:
        return False


def all_summary(result: AllResult) -> str:
    """The last line of ``grind run --all``."""
    passed = sum(1 for _, v in result.graded if v.passed)
    failing = result.first_failure
    if failing is None:
        return f"All {result.total} exercises pass."
    slug, verdict = failing
    left = result.total - len(result.graded)
    rest = f"; {left} after it not graded now" if left else ""
    before = ""
    if result.passed_before:
        names = ", ".join(result.passed_before[:4]) + (f", … {len(result.passed_before) - 4} more"
                                                       if len(result.passed_before) > 4 else "")
        before = f" ({len(result.passed_before)} of them passed before: {names})"
    return (f"{passed} of {result.total} pass in order; the first that does not is {slug} ({verdict.status.value})"
            f"{rest}{before}. Next: grind run {slug}")


def solution_diff(exercise: Exercise, learner: Path, passed: bool) -> str:
    """A unified diff of the learner's file against the reference. Only after a pass: the
    reference is revealed only then, and a diff reveals it line by line."""
    if not passed:
        raise UsageError(f"the diff shows the reference, which grind reveals only after a pass: pass "
                         f"'{exercise.slug}' first ('grind hint {exercise.slug}' gives a nudge)")
    if not learner.is_file():
        raise UsageError(f"{learner} is missing: nothing to compare")
    mine = learner.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    theirs = exercise.reference_path.read_text(encoding="utf-8").splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(mine, theirs, fromfile=f"yours: {learner}",
                                        tofile=f"reference: {exercise.slug}"))
    return diff or "Your file is the reference, line for line."


def editor_line(verdict: Verdict, path: Path | str) -> str | None:
    """``FILE:LINE: error: MESSAGE``, the form editors' problem matchers (VS Code's ``$gcc``-like
    patterns, vim's errorformat, Emacs' compilation mode) read, when the verdict knows the line
    of the learner's file at fault: a syntax or load error, a forbidden call, an exception in a
    check. None for a pass and for a wrong value (no line is at fault that grind can name)."""
    if verdict.passed or not verdict.learner_line:
        return None
    check = verdict.first_failure
    message = (f"{check.name}: {check.message}" if check is not None and check.message else
               verdict.message or verdict.status.value)
    from judge.text import terminal_safe

    # one line, whatever the message held; a learner's escape codes and lone surrogates shown, not obeyed
    message = " ".join(terminal_safe(message).split())
    return terminal_safe(f"{path}:{verdict.learner_line}: error: {message}")


EXPORT_COLUMNS = ("exercise", "status", "attempts", "best_time_s", "best_interview_s", "last_practised",
                  "next_review", "hints_shown")


def _rows(overview: Overview) -> list[dict[str, Any]]:
    return [{"exercise": e.slug, "status": e.status, "attempts": e.attempts,
             "best_time_s": None if e.best_time_s is None else round(e.best_time_s, 1),
             "best_interview_s": None if e.best_interview_s is None else round(e.best_interview_s, 1),
             "last_practised": iso(e.last_practised), "next_review": iso(e.next_review),
             "hints_shown": e.hints_shown} for e in overview.exercises]


def export_progress(overview: Overview, kind: str) -> str:
    """The progress table as CSV (one row per exercise, ISO times, seconds) or as a Markdown
    table (for a notes file or an issue)."""
    rows = _rows(overview)
    if kind == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)
        return out.getvalue()
    if kind in ("md", "markdown"):
        lines = ["| " + " | ".join(EXPORT_COLUMNS) + " |", "|" + "---|" * len(EXPORT_COLUMNS)]
        for row in rows:
            cells = ["—" if row[c] is None else str(row[c]).replace("|", "\\|") for c in EXPORT_COLUMNS]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines.append(f"{overview.passed} of {len(rows)} passed, {overview.attempts} attempts, "
                     f"{overview.due} due, streak {overview.streak_days} day{'s' if overview.streak_days != 1 else ''}.")
        return "\n".join(lines) + "\n"
    raise UsageError(f"--export {kind!r}: choose csv or md")
