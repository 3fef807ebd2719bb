"""What happens around a grade, whichever command asked for it: ``grind run``, the watch loop,
a practice session or an interview.

A *sitting* is one exercise in front of the learner, from when grind presents it until they
move on. Recording a verdict stores the attempt and, on a pass, settles what the pass means:
the interview ends (its time to pass recorded), and the exercise's card is reviewed when the
pass is evidence of recall (see ``judge.scheduling`` for the rating). Leaving a sitting of a
practice session without a pass reviews the card as *again*.

Practice and interview sittings start from a fresh file: a review of a solved exercise is only
a test of memory if the solution is not already on screen. The previous file is kept in
``.grind/backups/`` (``judge.workspace.start_fresh``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from judge import interview as interviews
from judge import scheduling
from judge.models import Exercise, Verdict
from judge.progress import SITTING_GAP_S, Attempt, Interview, Progress, source_hash
from judge.scheduling import Review
from judge.workspace import learner_file, start_fresh


@dataclass
class Sitting:
    """One exercise in front of the learner."""

    exercise: Exercise
    path: Path
    mode: str  # run | watch | practice | interview
    started_at: float | None  # when grind presented it; None for a one-shot `grind run`
    fresh: bool = False  # the file was reset at presentation, so earlier activity does not count
    interview: Interview | None = None
    attempts: int = 0
    passed_at: float | None = None
    time_to_pass: float | None = None
    hints_used: int = 0
    review: Review | None = None
    backup: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def slug(self) -> str:
        return self.exercise.slug

    def interview_running(self, now: float) -> bool:
        return self.interview is not None and self.interview.running(now)


@dataclass
class Recorded:
    attempt: Attempt
    review: Review | None
    interview_passed: bool = False
    repeat: bool = False  # the same file as the sitting's last attempt: not stored again


def _repeat_of(progress: Progress, sitting: Sitting, verdict: Verdict, source_digest: str,
               at: float) -> Attempt | None:
    """The sitting's latest attempt, when it graded exactly this source to the same verdict:
    re-grading an unchanged file (a save without a change, a second ``grind run``) is not
    another try. A different verdict on the same file (a timeout on a busy machine, then a
    pass) is recorded."""
    previous = progress.last_attempt(sitting.slug)
    if previous is None or previous.submission_hash != source_digest or at - previous.ended_at > SITTING_GAP_S \
            or previous.verdict != verdict.status.value:
        return None
    if sitting.fresh and sitting.started_at is not None and previous.ended_at < sitting.started_at:
        return None  # grind reset the file for this sitting: typing it again is a new try
    return previous


def _sitting_start(progress: Progress, sitting: Sitting, at: float) -> float | None:
    if sitting.interview is not None and sitting.interview.running(at):
        return sitting.interview.started_at
    if sitting.fresh:
        return sitting.started_at
    known = [t for t in (progress.sitting_start(sitting.slug, at), sitting.started_at) if t is not None]
    return min(known) if known else None


def _tries_before(progress: Progress, slug: str, begun: float | None) -> list[str]:
    """The verdicts of the sitting's attempts so far (none passed: a pass closes a sitting), for
    the rating of the pass that ends it. No known start: no earlier tries in this sitting."""
    if begun is None:
        return []
    return [a.verdict for a in progress.attempts(slug) if a.ended_at >= begun and not a.passed
            and a.ended_at > (progress.last_pass(slug) or -1.0)]


def record_verdict(progress: Progress, sitting: Sitting, verdict: Verdict, source: str, *,
                   started_at: float, ended_at: float) -> Recorded:
    """Store the attempt that ``verdict`` stands for and settle a pass (interview, review)."""
    slug = sitting.slug
    repeat = _repeat_of(progress, sitting, verdict, source_hash(source), started_at)
    if repeat is not None:
        return Recorded(repeat, None, repeat=True)
    in_interview = sitting.interview_running(started_at)
    begun = _sitting_start(progress, sitting, started_at)
    tries = _tries_before(progress, slug, begun) if verdict.passed else []  # before this pass is stored
    if verdict.passed and not sitting.fresh and progress.passed_with(slug, source_hash(source)):
        # a file that passed before, graded again in a sitting grind did not start from the stub:
        # recorded, but it times nothing (else re-saving a known answer would set a best time)
        begun = None
    hints = progress.hints_shown(slug, since=begun)  # read before the pass closes the sitting
    # after the clock ran out, an interview sitting goes on as practice: it no longer counts as
    # an interview time
    mode = "interview" if in_interview else "practice" if sitting.mode == "interview" else sitting.mode
    attempt = Attempt.of(verdict, source, started_at=started_at, ended_at=ended_at, hints_used=hints,
                         mode=mode, sitting_started_at=begun)
    first_pass = verdict.passed and sitting.passed_at is None
    due = scheduling.is_due(progress, slug, ended_at)
    progress.record_attempt(attempt)
    sitting.attempts += 1
    sitting.hints_used = hints
    recorded = Recorded(attempt, None)
    if not first_pass:
        return recorded
    sitting.passed_at, sitting.time_to_pass = ended_at, attempt.time_to_pass
    if in_interview:
        assert sitting.interview is not None
        progress.finish_interview(sitting.interview.id, ended_at, "passed")
        sitting.interview = replace(sitting.interview, ended_at=ended_at, outcome="passed")
        recorded.interview_passed = True
    if (due or in_interview) and sitting.review is None:
        struggle = scheduling.Struggle.of(tries, hints, attempt.time_to_pass)
        rating, reason = scheduling.rate(True, struggle, sitting.exercise.interview_minutes)
        sitting.review = recorded.review = scheduling.review(progress, slug, rating, ended_at, reason)
    return recorded


def time_up(progress: Progress, sitting: Sitting, now: float) -> bool:
    """Close the sitting's interview if its clock has run out (once): hints and the solution
    unlock, and the exercise is reviewed as *again*. True when this call closed it."""
    if sitting.interview is None or sitting.passed_at is not None:
        return False
    expired = interviews.expire(progress, sitting.slug, now)
    if expired is None or expired.id != sitting.interview.id:
        return False
    sitting.interview = replace(sitting.interview, ended_at=expired.deadline, outcome="timeout")
    if sitting.review is None:
        sitting.review = scheduling.review(progress, sitting.slug, "again", now,
                                           "rated Again: the interview clock ran out")
    return True


def leave(progress: Progress, sitting: Sitting, now: float) -> Review | None:
    """The learner moves on. In a practice session a sitting with attempts but no pass is a
    failed recall (*again*); one left untouched is not reviewed (skipping is not forgetting)."""
    if sitting.mode in ("practice", "interview") and sitting.passed_at is None and sitting.attempts \
            and sitting.review is None:
        sitting.review = scheduling.review(progress, sitting.slug, "again", now,
                                           "rated Again: left without a pass")
    return sitting.review


def present(progress: Progress, root: Path, exercise: Exercise, now: float, *, interview: bool = False,
            minutes: float | None = None) -> Sitting:
    """Put an exercise in front of the learner for a practice session or an interview: a fresh
    stub (blanked to signatures and docstrings in an interview), with the old file backed up.
    A running interview is resumed with its clock and the learner's file as they left them."""
    path = learner_file(root, exercise)
    if progress.running_interview(exercise.slug, now) is not None:
        interview = True  # its clock is still running: a plain session must not unlock the hints
    if not interview:
        backup = start_fresh(root, exercise, exercise.stub_path.read_text(encoding="utf-8"))
        return Sitting(exercise, path, "practice", now, fresh=True, backup=backup)
    running, new = interviews.start_or_resume(progress, exercise, now, minutes)
    backup = None
    if new or not path.is_file():
        backup = start_fresh(root, exercise, interviews.blank(exercise.stub_path.read_text(encoding="utf-8")))
    sitting = Sitting(exercise, path, "interview", running.started_at, fresh=True, interview=running, backup=backup)
    if not new:
        sitting.notes.append("Resumed the interview already running on this exercise (same clock, same file).")
    return sitting


@dataclass
class Hint:
    number: int  # 1-based
    total: int
    text: str
    last: bool  # no more to reveal


def next_hint(progress: Progress, exercise: Exercise) -> Hint | None:
    """Reveal the next hint (and remember it); past the last one, show the last one again.
    None when the exercise has no hints."""
    total = len(exercise.hints)
    if total == 0:
        return None
    shown = progress.hints_shown(exercise.slug)
    if shown >= total:
        return Hint(total, total, exercise.hints[-1], True)
    progress.record_hint(exercise.slug)
    return Hint(shown + 1, total, exercise.hints[shown], shown + 1 == total)
