"""Spaced repetition: ratings from verdict, time and hints; the FSRS outcome of a pass and of a
fail; which exercises a practice session picks; what a pass or a skip does to the schedule."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.catalog import Catalog
from judge.errors import UsageError
from judge.models import Status
from judge.practice import Sitting, leave, record_verdict
from judge.progress import Attempt, Progress
from judge.scheduling import is_due, pick, rating_for, review

from .test_progress import verdict

DAY = 86400.0
T0 = 1_750_000_000.0


@pytest.mark.parametrize("passed, seconds, hints, expected", [
    (False, 60, 0, "again"),     # a fail is a failed recall, however fast
    (True, 60, 1, "hard"),       # a hint did part of the recalling
    (True, 20 * 60, 0, "hard"),  # slower than the 15-minute interview budget
    (True, 10 * 60, 0, "good"),
    (True, 7 * 60, 0, "easy"),   # within half of the budget
    (True, None, 0, "good"),     # a first-try `grind run` pass: grind could not time it
])
def test_rating_from_verdict_time_and_hints(passed: bool, seconds: float | None, hints: int, expected: str) -> None:
    """The FSRS rating of a sitting follows the verdict, then hints, then the time taken."""
    assert rating_for(passed, seconds, hints, interview_minutes=15) == expected


def test_fsrs_schedules_a_pass_later_than_a_fail_and_stretches_repeated_passes(tmp_path: Path) -> None:
    """A first pass (good) comes back in 2 days, a first fail tomorrow; passing again when due
    pushes the next review further out, and failing a learned exercise brings it back sooner."""
    with Progress(tmp_path / "p.db") as progress:
        passed = review(progress, "clipping", "good", T0)
        failed = review(progress, "adam", "again", T0)
        assert passed.due - T0 == 2 * DAY
        assert failed.due - T0 == 1 * DAY
        second = review(progress, "clipping", "good", passed.due)
        assert second.due - passed.due > 2 * DAY
        lapse = review(progress, "clipping", "again", second.due)
        assert lapse.due - second.due < second.due - passed.due  # a lapse shortens the interval
        assert [r[1] for r in progress.reviews("clipping")] == ["good", "good", "again"]
        assert progress.card("clipping").due == lapse.due  # type: ignore[union-attr]


def test_a_run_pass_reviews_once_and_only_when_due(tmp_path: Path) -> None:
    """A pass by `grind run` reviews a new exercise; running the solved file again before it is
    due leaves the schedule alone; a fail never reviews outside a practice session."""
    clipping = Catalog().get("clipping")
    with Progress(tmp_path / "p.db") as progress:
        def run(status: Status, at: float) -> None:
            sitting = Sitting(clipping, tmp_path / "c.py", "run", None)
            record_verdict(progress, sitting, verdict(status, 12 if status is Status.PASSED else 4), "src",
                           started_at=at - 2, ended_at=at)

        run(Status.FAILED, T0)
        assert progress.card("clipping") is None
        run(Status.PASSED, T0 + 600)
        (first,) = progress.reviews("clipping")
        # the failed run before the pass makes it a Hard recall (issue 36): back after a day, not two
        assert first[1] == "hard" and first[2] == T0 + 600 + DAY
        assert progress.attempts("clipping")[-1].time_to_pass == 602  # from the first run's start
        run(Status.PASSED, T0 + 700)
        assert len(progress.reviews("clipping")) == 1
        assert not is_due(progress, "clipping", T0 + DAY) and is_due(progress, "clipping", T0 + 3 * DAY)


def test_leaving_a_practice_sitting_without_a_pass_is_again_but_a_skip_is_not_reviewed(tmp_path: Path) -> None:
    """In a session, trying and moving on without a pass is a failed recall; skipping untouched
    changes nothing."""
    clipping, adam = Catalog().get("clipping"), Catalog().get("adam")
    with Progress(tmp_path / "p.db") as progress:
        tried = Sitting(clipping, tmp_path / "c.py", "practice", T0, fresh=True)
        record_verdict(progress, tried, verdict(), "src", started_at=T0 + 60, ended_at=T0 + 62)
        review_after = leave(progress, tried, T0 + 100)
        assert review_after is not None and review_after.rating == "again"
        skipped = Sitting(adam, tmp_path / "a.py", "practice", T0, fresh=True)
        assert leave(progress, skipped, T0 + 100) is None and progress.card("adam") is None


def _attempted(progress: Progress, slug: str) -> None:
    progress.record_attempt(Attempt(slug, T0, T0, "failed", 0, 1, None, 0, "run", "h"))


def test_pick_takes_due_first_then_started_then_new_with_count_and_topic(tmp_path: Path) -> None:
    """Due exercises come first (most overdue first), then started-but-unfinished ones, then
    never-tried ones in curriculum order; `--count` cuts the list and `--topic` filters it."""
    exercises = Catalog().all()
    slugs = [e.slug for e in exercises]
    a, b, c, d = slugs[:4]
    now = T0 + 10 * DAY
    with Progress(tmp_path / "p.db") as progress:
        progress.save_review(b, "{}", now - DAY, "good", T0)        # due yesterday
        progress.save_review(c, "{}", now - 3 * DAY, "good", T0)    # due three days ago
        progress.save_review(a, "{}", now + DAY, "good", T0)        # not due: left out
        _attempted(progress, d)                                     # started, never passed
        picked = [e.slug for e in pick(progress, exercises, now, count=len(exercises))]
        assert picked[:3] == [c, b, d]
        assert a not in picked and picked[3:] == [s for s in slugs if s not in (a, b, c, d)]
        assert [e.slug for e in pick(progress, exercises, now, count=2)] == [c, b]
        topic = next(e.topic for e in exercises if e.slug == c)
        assert all(e.topic == topic for e in pick(progress, exercises, now, 10, topic=topic.upper()))
        with pytest.raises(UsageError, match="No exercises with topic 'knitting'"):
            pick(progress, exercises, now, 3, topic="knitting")


# -- the rating from the session's struggle (issue 36, point 5) ---------------------------------

from judge.scheduling import Struggle, rate  # noqa: E402


@pytest.mark.parametrize("struggle, expected", [
    (Struggle(failures=2, hints=1, seconds=300), ("hard", "rated Hard: 2 failed attempts, 1 hint")),
    (Struggle(failures=1, timeouts=1, seconds=300), ("hard", "rated Hard: 1 failed attempt, 1 timeout or deadlock")),
    (Struggle(forbidden=1, seconds=60), ("hard", "rated Hard: 1 forbidden-API attempt")),
    (Struggle(failures=2, timeouts=1), ("again", "rated Again: 2 failed attempts, 1 timeout or deadlock")),
    (Struggle(seconds=60), ("easy", "rated Easy: first try, within half of the 15-minute interview time")),
    (Struggle(seconds=10 * 60), ("good", "rated Good: first try, within the 15-minute interview time")),
    (Struggle(), ("good", "rated Good: passed first try")),
])
def test_a_pass_is_rated_from_the_struggle_before_it_and_says_why(struggle: Struggle,
                                                                  expected: tuple[str, str]) -> None:
    """Failures, deadlocks and forbidden-API attempts before a pass lower its rating as hints do;
    three wrong attempts make the pass a lapse; the reason names what was counted."""
    assert rate(True, struggle, interview_minutes=15) == expected


def test_a_pass_after_a_wrong_answer_and_a_deadlock_comes_back_sooner_than_a_first_try(tmp_path: Path) -> None:
    """The walkthrough's case: passed after a failure and a timeout in one sitting is rated Hard
    and scheduled sooner than the first-try pass of another learner."""
    clipping = Catalog().get("clipping")
    dues = {}
    for name, before in (("first-try", []), ("struggled", [Status.FAILED, Status.TIMEOUT])):
        with Progress(tmp_path / f"{name}.db") as progress:
            at = T0
            for status in before:
                record_verdict(progress, Sitting(clipping, tmp_path / "c.py", "run", None), verdict(status, 4),
                               f"src{at}", started_at=at - 2, ended_at=at)
                at += 60
            sitting = Sitting(clipping, tmp_path / "c.py", "run", None)
            record_verdict(progress, sitting, verdict(Status.PASSED, 12), "pass", started_at=at - 2, ended_at=at)
            assert sitting.review is not None
            dues[name] = (sitting.review.due - at, sitting.review.rating, sitting.review.reason)
    assert dues["first-try"][1:] == ("good", "rated Good: passed first try")
    assert dues["struggled"][1:] == ("hard", "rated Hard: 1 failed attempt, 1 timeout or deadlock")
    assert dues["struggled"][0] < dues["first-try"][0]
