"""One graded attempt, start to finish: grade a file, record the attempt, and say what it meant.

``grind run``, ``grind watch`` and ``grind practice`` (and an interview, which is a practice
sitting with a clock) all go through here, so the rules live in one place:

- an interview whose clock ran out is closed before the grade (hints and the solution unlock);
- the attempt is recorded (``judge.practice.record_verdict``): an identical re-grade of the same
  file is not another try, a pass ends a running interview and reviews a due card;
- the notices that say so are worded here, once; the callers only render.

``grade_and_record`` grades and records in one call (``grind run``). The watch loop grades on a
thread of its own and records on the loop's thread (the progress database is not shared across
threads), so it calls the second half, ``record_outcome``, with the verdict it got.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from judge.models import Verdict
from judge.practice import Recorded, Sitting, record_verdict, time_up
from judge.progress import Attempt, Progress
from judge.scheduling import Review
from judge.text import clock_text, read_source, until_text
# pick_file lives with the workspace (a daemon-served `grind run` picks its file before it loads this
# module and the progress database's); known to callers as judge.outcome's too.
from judge.workspace import SCRATCH as SCRATCH, pick_file as pick_file  # noqa: F401

TIME_UP = "Your interview on this exercise ran out of time; hints and the solution are unlocked."
REPEAT = "Same file as your last graded attempt: not counted as another try."


@dataclass
class Outcome:
    """What one grade came to. ``lead`` is said before the verdict (about the sitting),
    ``notices`` after it (about what was recorded)."""

    verdict: Verdict
    recorded: Recorded  # the attempt; when ``stored`` is False, the attempt it would have been
    stored: bool  # False: shown only (no workspace, the untouched stub presented in watch)
    lead: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    interview_expired: bool = False  # this grade's sitting closed its interview (time up)

    @property
    def repeat(self) -> bool:
        """The same file as the last graded attempt, to the same verdict: not another try."""
        return self.stored and self.recorded.repeat

    @property
    def counted(self) -> bool:
        """A new try was stored."""
        return self.stored and not self.recorded.repeat

    @property
    def pass_recorded(self) -> bool:
        return self.counted and self.verdict.passed

    @property
    def timed(self) -> bool:
        """The stored pass has a time to pass (a candidate for the best time). A file that passed
        before, graded again outside a fresh sitting, is recorded but times nothing."""
        return self.pass_recorded and self.recorded.attempt.time_to_pass is not None

    @property
    def interview_passed(self) -> bool:
        return self.stored and self.recorded.interview_passed

    @property
    def review(self) -> Review | None:
        return self.recorded.review if self.stored else None


def record_outcome(progress: Progress, sitting: Sitting, verdict: Verdict, source: str, *, started_at: float,
                   ended_at: float, record: bool = True, now: float | None = None) -> Outcome:
    """Record ``verdict`` for ``sitting`` (unless ``record`` is False) and word the notices."""
    if not record:
        attempt = Attempt.of(verdict, source, started_at=started_at, ended_at=ended_at, hints_used=0,
                             mode=sitting.mode, sitting_started_at=None)
        return Outcome(verdict, Recorded(attempt, None), stored=False)
    recorded = record_verdict(progress, sitting, verdict, source, started_at=started_at, ended_at=ended_at)
    outcome = Outcome(verdict, recorded, stored=True)
    if recorded.repeat:
        outcome.notices.append(REPEAT)
    if recorded.interview_passed:
        outcome.notices.append(f"Interview passed in {clock_text(sitting.time_to_pass)}.")
    if recorded.review is not None:
        why = f"{recorded.review.reason[0].upper()}{recorded.review.reason[1:]}. " if recorded.review.reason else ""
        outcome.notices.append(f"{why}Comes back for review "
                               f"{until_text(recorded.review.due, ended_at if now is None else now)} "
                               "('grind practice' asks for it then).")
    return outcome


GradeCall = Callable[..., Verdict]


def grade_and_record(progress: Progress, sitting: Sitting, *, record: bool = True, source: str | None = None,
                     lead: list[str] | None = None, worker: Any = None, speed: bool = False,
                     grade: GradeCall | None = None, clock: Callable[[], float] = time.time,
                     started_at: float | None = None) -> Outcome:
    """Grade ``sitting.path`` (or ``source``, its text) and record the attempt.

    ``record`` False grades without touching the progress (the untouched stub outside a
    workspace). ``lead`` is what the caller has to say first (where the file came from).
    ``worker`` is a warm worker to grade in; ``grade`` replaces ``judge.grade.grade`` (tests,
    and a daemon-served `grind run`, which sent its job before it loaded this module: judge.fast_run).
    ``started_at``: when that grade began (``clock()``'s time), for the interview's clock and the record."""
    outcome_lead = list(lead or [])
    expired = record and time_up(progress, sitting, clock() if started_at is None else started_at)
    if expired:
        outcome_lead.append(TIME_UP)
    started = clock() if started_at is None else started_at
    unreadable = None
    if source is None and sitting.path.suffix == ".ipynb":
        from judge.notebooks import notebook_source

        # grade() extracts the answer cells itself (and notes what it left out); this copy is
        # what the progress records as the source
        source, unreadable = notebook_source(sitting.path.read_bytes(), sitting.path.name, sitting.exercise.entry).source, "notebook"
    elif source is None:
        source, unreadable = read_source(sitting.path)  # not UTF-8: grade() reads it again and says so
    if grade is None:  # judge.grade loads no pipeline at import: a daemon-served run never loads it
        from judge.grade import grade as front_grade

        grade = front_grade
    kwargs: dict[str, Any] = {"speed": speed}
    if worker is not None:
        kwargs["worker"] = worker
    verdict = grade(sitting.exercise, sitting.path, source=None if unreadable else source, **kwargs)
    outcome = record_outcome(progress, sitting, verdict, source, started_at=started, ended_at=clock(), record=record,
                             now=clock())
    outcome.lead = outcome_lead
    outcome.interview_expired = expired
    return outcome
