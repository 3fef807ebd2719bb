"""When each exercise comes back: spaced repetition with the ``fsrs`` package's scheduler.

Every review turns one sitting on an exercise into an FSRS rating:

- not passed (failed, gave up, or the interview clock ran out): *again*;
- passed with any hint: *hard* (the hint did part of the recalling);
- passed, without hints, slower than the exercise's interview time: *hard*;
- passed within half of the interview time: *easy*; otherwise *good*;
- passed when grind could not time it (a first-try ``grind run``): *good*.

The scheduler works in days: no learning steps (a same-day "again in 10 minutes" means nothing
when the learner is already retrying in the watch loop) and no fuzzing (with a handful of
exercises there is no pile-up to spread, and "comes back in 2 days" should mean exactly that).

All fsrs imports stay in this module; the rest of grind sees ratings as words and cards as
JSON text in the progress database.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from judge.errors import UsageError
from judge.models import Exercise
from judge.progress import Progress

if TYPE_CHECKING:
    from fsrs import Scheduler

# fsrs loads when a card is reviewed, not with this module: every `grind run` records through
# judge.practice, and most runs (a failing file, a file not due) review nothing.


def scheduler() -> Scheduler:
    from fsrs import Scheduler

    return Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False, maximum_interval=365)


def rating_for(passed: bool, seconds: float | None, hints_used: int, interview_minutes: int) -> str:
    """The FSRS rating for one sitting (see the module docstring for why each threshold)."""
    if not passed:
        return "again"
    if hints_used > 0:
        return "hard"
    if seconds is None:
        return "good"
    budget = interview_minutes * 60.0
    if seconds > budget:
        return "hard"
    return "easy" if seconds <= budget / 2 else "good"


@dataclass(frozen=True)
class Review:
    slug: str
    rating: str
    due: float


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, timezone.utc)


def next_card(stored: str | None, rating: str, at: float) -> tuple[str, float]:
    """The card (its JSON) and due time after one review of ``stored`` (None: never reviewed).
    Computed without storing, so a caller can store it in the same transaction as what caused it
    (a quiz answer, see ``judge.quiz.answer_card``)."""
    from fsrs import Card, Rating

    ratings = {"again": Rating.Again, "hard": Rating.Hard, "good": Rating.Good, "easy": Rating.Easy}
    card = Card.from_json(stored) if stored else Card(card_id=int(at * 1000), due=_utc(at))
    card, _log = scheduler().review_card(card, ratings[rating], review_datetime=_utc(at))
    return card.to_json(), card.due.timestamp()


def review(progress: Progress, slug: str, rating: str, at: float) -> Review:
    """Apply one review to the exercise's card and store the card and when it is due."""
    stored = progress.card(slug)
    card, due = next_card(stored.card if stored else None, rating, at)
    progress.save_review(slug, card, due, rating, at)
    return Review(slug, rating, due)


def is_due(progress: Progress, slug: str, now: float) -> bool:
    """New (never reviewed) or past its due time: a pass now should count as a review. A pass
    on an exercise that is not due (running a solved file again) leaves its schedule alone."""
    card = progress.card(slug)
    return card is None or card.due <= now


def pick(progress: Progress, exercises: list[Exercise], now: float, count: int,
         topic: str | None = None) -> list[Exercise]:
    """A session's exercises: the due ones, most overdue first; then the ones started but never
    passed (no card yet); then the never-tried ones, in curriculum order."""
    if topic is not None:
        topics = sorted({e.topic for e in exercises})
        exercises = [e for e in exercises if e.topic.lower() == topic.lower()]
        if not exercises:
            raise UsageError(f"No exercises with topic '{topic}'. Topics: {', '.join(topics)}.")
    due, started, fresh = [], [], []
    for order, exercise in enumerate(exercises):
        card = progress.card(exercise.slug)
        if card is not None:
            if card.due <= now:
                due.append((card.due, order, exercise))
        elif progress.status(exercise.slug) != "new":
            started.append((order, exercise))
        else:
            fresh.append((order, exercise))
    ordered = [e for *_, e in sorted(due, key=lambda t: t[:2])] + [e for _, e in started] + [e for _, e in fresh]
    return ordered[:max(0, count)]


def next_due(progress: Progress, exercises: list[Exercise]) -> tuple[Exercise, float] | None:
    """The exercise that comes back first, for "nothing is due; next: ..."."""
    cards = [(card.due, e) for e in exercises if (card := progress.card(e.slug)) is not None]
    if not cards:
        return None
    due, exercise = min(cards, key=lambda t: t[0])
    return exercise, due
