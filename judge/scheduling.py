"""When each exercise comes back: spaced repetition with the ``fsrs`` package's scheduler.

Every review turns one sitting on an exercise into an FSRS rating, from how much the learner
struggled before the pass (``Struggle``: the sitting's failed attempts, timeouts and deadlocks,
forbidden-API attempts, hints seen, and the time taken). FSRS's ratings mean "how well did you
recall it", so:

- not passed (failed, gave up, or the interview clock ran out): *again*;
- passed after three or more wrong attempts: *again* (the recall failed; the sitting re-learned
  it, which is what a lapse is);
- passed after one or two wrong attempts, or with any hint: *hard* (recalled, with effort or help);
- passed first try, slower than the exercise's interview time: *hard*;
- passed first try within half of the interview time: *easy*; otherwise *good*;
- passed first try when grind could not time it (a first-try ``grind run``): *good*.

The rating comes with its reason in words ("rated Hard: 2 failed attempts, 1 hint"), which the
verdict's notices repeat, so a schedule is never a silent number.

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


AGAIN_AFTER = 3  # wrong attempts before a pass that make it a lapse rather than a hard recall


@dataclass(frozen=True)
class Struggle:
    """What a sitting cost before its pass: the attempts that did not pass, by kind, the hints
    seen, and the seconds from the start of the sitting (None: grind did not see it start)."""

    failures: int = 0  # wrong answers, code that did not load, crashes
    timeouts: int = 0  # time limits and deadlocks
    forbidden: int = 0  # called the built-in it was asked to write
    hints: int = 0
    seconds: float | None = None

    @classmethod
    def of(cls, verdicts: list[str], hints: int, seconds: float | None) -> Struggle:
        """From the verdicts (``Status`` values) of the sitting's attempts before the pass."""
        return cls(failures=sum(1 for v in verdicts if v in ("failed", "error", "crashed")),
                   timeouts=sum(1 for v in verdicts if v == "timeout"),
                   forbidden=sum(1 for v in verdicts if v == "forbidden"), hints=hints, seconds=seconds)

    @property
    def wrong(self) -> int:
        return self.failures + self.timeouts + self.forbidden

    def words(self) -> list[str]:
        kinds = ((self.failures, "failed attempt", "failed attempts"),
                 (self.timeouts, "timeout or deadlock", "timeouts or deadlocks"),
                 (self.forbidden, "forbidden-API attempt", "forbidden-API attempts"),
                 (self.hints, "hint", "hints"))
        return [f"{count} {one if count == 1 else many}" for count, one, many in kinds if count]


def rate(passed: bool, struggle: Struggle, interview_minutes: int) -> tuple[str, str]:
    """The FSRS rating for one sitting and why, in words ("rated Hard: 2 failed attempts, 1
    hint"). See the module docstring for why each threshold."""
    rating, why = _rate(passed, struggle, interview_minutes)
    return rating, f"rated {rating.capitalize()}: {why}"


def _rate(passed: bool, struggle: Struggle, interview_minutes: int) -> tuple[str, str]:
    if not passed:
        return "again", "not passed"
    effort = struggle.words()
    if struggle.wrong >= AGAIN_AFTER:
        return "again", ", ".join(effort)
    if effort:
        return "hard", ", ".join(effort)
    seconds = struggle.seconds
    if seconds is None:
        return "good", "passed first try"
    budget = interview_minutes * 60.0
    if seconds > budget:
        return "hard", f"first try, but slower than the {interview_minutes}-minute interview time"
    if seconds <= budget / 2:
        return "easy", f"first try, within half of the {interview_minutes}-minute interview time"
    return "good", f"first try, within the {interview_minutes}-minute interview time"


def rating_for(passed: bool, seconds: float | None, hints_used: int, interview_minutes: int) -> str:
    """The rating of a sitting known only by its time and hints (no failed attempts)."""
    return rate(passed, Struggle(hints=hints_used, seconds=seconds), interview_minutes)[0]


@dataclass(frozen=True)
class Review:
    slug: str
    rating: str
    due: float
    reason: str = ""  # "rated Hard: 2 failed attempts, 1 hint"; empty where no one is told


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


def review(progress: Progress, slug: str, rating: str, at: float, reason: str = "") -> Review:
    """Apply one review to the exercise's card and store the card and when it is due."""
    stored = progress.card(slug)
    card, due = next_card(stored.card if stored else None, rating, at)
    progress.save_review(slug, card, due, rating, at)
    return Review(slug, rating, due, reason)


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
