"""The models of every other screen: the exercise list, progress, a statement, hint or solution,
the end of a practice session, the watch loop's lines, grind doctor, grind validate and the
class results of grind grade.

Each builder takes the core's data and returns a NamedTuple of display strings. Where a line
carries emphasis, it says what kind (``Tone``), never how it looks: that is the rich renderer's.
"""

from __future__ import annotations

import re

from datetime import date, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

from judge.models import Exercise, Verdict
from judge.text import clock_text, safe, until_text

if TYPE_CHECKING:
    from judge.practice import Recorded, Sitting
    from judge.progress import Overview
    from judge.decks import DeckReport
    from judge.quiz import Answered, Card, CardProgress, Session

KEYS_HELP = "h hint · n next · l list · q quit"


def watch_keys(manual: bool, hints: bool = True) -> str:
    """The loop's keys. No ``h hint`` while an interview refuses hints: a key that answers
    "locked" is not one to offer."""
    keys = KEYS_HELP if hints else KEYS_HELP.replace("h hint · ", "")
    return keys + (" · Enter check" if manual else "")


class Tone(str, Enum):
    """What a line means to the reader; the rich renderer picks a style for each."""

    PLAIN = "plain"
    DIM = "dim"  # an aside: the keys, where an old file went
    NOTE = "note"  # worth noticing: a notice, a message from the loop
    STRONG = "strong"  # a standing: "x of N passed"
    GOOD = "good"  # a success
    INFO = "info"  # what happens next: a review date
    WARN = "warn"  # a constraint in force: the interview clock


class Line(NamedTuple):
    text: str
    tone: Tone = Tone.PLAIN


# -- the exercise list, progress, text and statements -----------------------------------------

class ListRow(NamedTuple):
    number: int
    slug: str
    title: str
    topic: str
    difficulty: str
    status: str  # new | attempted | passed


class ListView(NamedTuple):
    rows: list[ListRow]
    numbered: bool = False  # in watch, the number picks the exercise


def list_view(rows: list[tuple[Exercise, str]], numbered: bool = False) -> ListView:
    """The exercises and their status; ``numbered`` (in watch) puts the number that picks each first."""
    return ListView([ListRow(n, e.slug, e.title, e.topic, e.difficulty, status)
                     for n, (e, status) in enumerate(rows, start=1)], numbered)


class ProgressRow(NamedTuple):
    slug: str
    status: str
    best: str
    attempts: str
    last: str
    due: str


class ProgressView(NamedTuple):
    rows: list[ProgressRow]
    totals: str


def _day(ts: float) -> date:
    return datetime.fromtimestamp(ts).date()


def ago_text(ts: float | None, now: float) -> str:
    if ts is None:
        return "never"
    days = (_day(now) - _day(ts)).days
    return "today" if days <= 0 else "yesterday" if days == 1 else f"{days} days ago"


def minutes_text(minutes: float) -> str:
    """"1 minute", "1.5 minutes", "25 minutes"."""
    return f"{minutes:g} minute{'' if minutes == 1 else 's'}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def progress_view(overview: Overview) -> ProgressView:
    """``grind progress``: one row per exercise, then the totals and the streak."""
    now = overview.now
    rows = [ProgressRow(e.slug, e.status, clock_text(e.best_time_s), str(e.attempts), ago_text(e.last_practised, now),
                        until_text(e.next_review, now)) for e in overview.exercises]
    totals = (f"{overview.passed} of {len(overview.exercises)} passed · {_count(overview.attempts, 'attempt')} · "
              f"{overview.due} due now · streak: {_count(overview.streak_days, 'day')}")
    return ProgressView(rows, totals)


class TextView(NamedTuple):
    """A hint or a solution: a title over text shown as it is (``syntax``: Python source).
    ``emphasis`` holds the words the text's Markdown emphasised (``*before*``), already without
    their asterisks: a terminal shows them in italics, plain text as they are."""

    title: str
    body: str
    syntax: bool = False
    emphasis: tuple[str, ...] = ()


# *word* or *a few words*: asterisks that hug text, not the spaced ones of "beta1 * m" or "**"
_EMPHASIS = re.compile(r"(?<![\w*])\*([^\s*](?:[^*]*?[^\s*])?)\*(?![\w*])")


def text_view(title: str, body: str, syntax: bool = False) -> TextView:
    """A hint (or any prose) with its Markdown emphasis taken out of the words and kept aside:
    a learner read literal "*squared*" before. Source code (``syntax``) is left as it is."""
    if syntax:
        return TextView(title, body, True)
    words: list[str] = []

    def strip(match: re.Match[str]) -> str:
        words.append(match.group(1))
        return match.group(1)

    return TextView(title, _EMPHASIS.sub(strip, body), False, tuple(dict.fromkeys(words)))


def hint_view(number: int, total: int, text: str, last: bool = False) -> TextView:
    return text_view(f"Hint {number} of {total}{' (the last one)' if last else ''}", text)


class StatementView(NamedTuple):
    """An exercise's statement, Markdown; its own "# heading" is the title, so the title is
    shown only when the statement has none."""

    title: str
    markdown: str
    show_title: bool


def statement_view(title: str, body: str) -> StatementView:
    return StatementView(title, body, not body.lstrip().startswith("# "))


# -- practice sessions and the watch loop -----------------------------------------------------

class PracticeRow(NamedTuple):
    slug: str
    result: str
    hints: str
    rating: str
    back: str


class PracticeSummaryView(NamedTuple):
    headline: str
    rows: list[PracticeRow]


def _outcome_text(sitting: Sitting) -> str:
    if sitting.passed_at is not None:
        return f"passed in {clock_text(sitting.time_to_pass)}" if sitting.time_to_pass is not None else "passed"
    if sitting.interview is not None and sitting.interview.outcome == "timeout":
        return "time up"
    return "not passed" if sitting.attempts else "skipped"


def practice_summary_view(sittings: list[Sitting], now: float) -> PracticeSummaryView:
    """The end of a practice session: how each exercise went and when it comes back."""
    rows = [PracticeRow(s.slug, _outcome_text(s), str(s.hints_used), s.review.rating if s.review else "—",
                        until_text(s.review.due, now) if s.review else "not rescheduled") for s in sittings]
    passed = sum(1 for s in sittings if s.passed_at is not None)
    return PracticeSummaryView(f"Session over: {passed} of {len(sittings)} passed.", rows)


def watch_intro(sitting: Sitting, manual: bool, position: tuple[int, int] | None,
                keys: str | None) -> tuple[str, list[Line]]:
    """An exercise presented in the watch loop: a heading, then what to do. ``keys`` is listed
    when given (not on a terminal, where the status line at the bottom lists them: once is enough)."""
    exercise = sitting.exercise
    where = f" ({position[0]} of {position[1]})" if position else ""
    action = "press Enter to check it" if manual else "save it to check it (Enter checks too)"
    lines = [Line(f"Edit {sitting.path} and {action}. Statement: grind show {exercise.slug}")]
    if sitting.backup is not None:
        lines.append(Line(f"Started from a fresh file; your previous one is saved as {sitting.backup}.", Tone.DIM))
    if sitting.interview is not None and sitting.interview.ended_at is None:
        minutes = (sitting.interview.deadline - sitting.interview.started_at) / 60
        lines.append(Line(f"Interview: {minutes_text(minutes)} on the clock, from memory. No hints and no solution "
                          "until you pass or the time is up.", Tone.WARN))
    lines += [Line(note, Tone.NOTE) for note in sitting.notes]
    if keys is not None:
        lines.append(Line(f"Keys: {keys}", Tone.DIM))
    return f"{exercise.slug} · {exercise.title}{where}", lines


def watch_after_verdict(sitting: Sitting, verdict: Verdict, recorded: Recorded,
                        standing: tuple[int, int] | None) -> list[Line]:
    """What follows a verdict in the loop: the standing, an interview passed, the next review."""
    lines = []
    if standing is not None:
        lines.append(Line(f"Exercises: {standing[0]} of {standing[1]} passed.", Tone.STRONG))
    if recorded.interview_passed and sitting.time_to_pass is not None:
        lines.append(Line(f"Interview passed in {clock_text(sitting.time_to_pass)}.", Tone.GOOD))
    if recorded.review is not None:
        when = until_text(recorded.review.due, recorded.attempt.ended_at)
        why = f" ({recorded.review.reason})" if recorded.review.reason else ""
        lines.append(Line(f"{sitting.slug} comes back for review {when}{why}.", Tone.INFO))
    if verdict.passed:  # the one footer after a pass (the verdict's own is dropped in the loop)
        lines.append(Line(f"Well done. n: next exercise · q: quit (nothing moves on until you say so) · "
                          f"compare with the reference: grind solution {sitting.slug}", Tone.DIM))
    return lines


def watch_pick_note(current: str, pick: bool) -> Line:
    if pick:
        return Line(f"You are on {current}. Type a number and press Enter to switch; n moves to the next one.",
                    Tone.DIM)
    return Line(f"You are on {current}. n moves to the next one.", Tone.DIM)


# -- grind doctor, grind validate, grind grade ------------------------------------------------

class DoctorLevel(NamedTuple):
    name: str
    current: bool
    lines: list[str]


class DoctorView(NamedTuple):
    level: str
    grading_allowed: bool
    lines: list[str]  # layers, the child's user
    torch: str | None  # the torch line, or None when torch was not asked about
    torch_ok: bool
    notes: list[str]
    levels: list[DoctorLevel]
    after: list[str]  # how to strengthen, and what grind grade refuses


def doctor_view(info: dict[str, Any]) -> DoctorView:
    """grind doctor: the isolation level in force, and what every level does and does not give."""
    torch = None
    if info.get("torch"):
        torch = f"torch: {info['torch']} ({info['python']})"
    elif "torch" in info:
        torch = f"torch: missing in {info['python']}: grading needs it; {info['torch_advice']}"
    after = []
    if info["strengthen"]:
        after.append("Stronger isolation: " + info["strengthen"])
    if not info["grading_allowed"]:
        after.append("grind grade refuses this level unless given --allow-weak-isolation.")
    return DoctorView(
        level=info["level"], grading_allowed=info["grading_allowed"],
        lines=["Layers: " + " + ".join(info["layers"]), *("  " + line for line in info.get("stops", [])),
               "Submissions run as: " + info["child_user"]],
        torch=torch, torch_ok=bool(info.get("torch")),
        notes=["Note: " + note for note in info["notes"]],
        levels=[DoctorLevel(level, level == info["level"], list(lines)) for level, lines in info["guarantees"].items()],
        after=after,
    )


class ValidationRow(NamedTuple):
    exercise: str
    cases: str
    caught: str
    corpus: str
    wrong_names: str  # rejected corpus files named with a mistake their header does not give
    time: str
    result: str
    ok: bool


class ValidationView(NamedTuple):
    rows: list[ValidationRow]
    lines: list[str]  # each corpus summary, then every problem


VALIDATION_COLUMNS = ("exercise", "cases", "pitfalls caught", "corpus named", "named wrongly", "time", "result")


def validation_view(reports: list[Any]) -> ValidationView:
    """One row per exercise (cases, pitfalls caught, the corpus named right and named wrongly,
    time), then its notes (each pitfall's margin against the tolerance; what checks the
    reference), its warnings (which never fail it) and every problem, each on its own line."""
    rows, lines = [], []
    for r in reports:
        corpus = getattr(r, "corpus", None)
        rows.append(ValidationRow(r.exercise, str(r.cases), f"{r.caught}/{r.pitfalls}",
                                  "no corpus" if corpus is None else corpus.share_text(),
                                  "" if corpus is None else corpus.wrong_name_text(), f"{r.seconds:.1f} s",
                                  "adequate" if r.ok else f"{len(r.problems)} problem(s)", r.ok))
    lines += [f"{r.exercise} corpus: {r.corpus.summary()}" for r in reports if getattr(r, "corpus", None) is not None]
    lines += [f"{r.exercise}: {note}" for r in reports for note in getattr(r, "notes", [])]
    lines += [f"{r.exercise}: warning: {warning}" for r in reports for warning in getattr(r, "warnings", [])]
    lines += [f"{r.exercise}: {problem}" for r in reports for problem in r.problems]
    return ValidationView(rows, lines)


class ClassRow(NamedTuple):
    student: str
    status: str
    score: str
    note: str  # the named pitfall; for a submission that could not be graded, why (one short line)


class ClassView(NamedTuple):
    rows: list[ClassRow]


def class_view(rows: list[dict[str, Any]]) -> ClassView:
    """grind grade's summary: each student's status, score and named pitfall, or, for a
    submission that errored, crashed or timed out, the first line of why (the whole message is in
    the CSV and JSON): an instructor reading the table sees "SyntaxError at line 1", not a bare
    "error"."""
    from judge.formats import row_score

    out = []
    for row in rows:
        verdict = row["verdict"]
        got, total = row_score(row)
        if verdict.get("pitfall"):
            note = verdict["pitfall"]["name"]
        elif verdict["status"] in ("passed", "failed"):
            note = ""
        else:
            first = (str(verdict.get("message") or "").strip().splitlines() or [""])[0]
            note = first if len(first) <= 70 else first[:69] + "…"
        out.append(ClassRow(safe(row["student"]), verdict["status"], f"{got}/{total}", safe(note)))
    return ClassView(out)


def grading_line(student: str, status: str, reused: bool) -> str:
    """One student graded: "ann: failed", or "ann: passed (unchanged, kept)" when resumed."""
    return f"{safe(student)}: {status}{' (unchanged, kept)' if reused else ''}"


# -- the quiz ---------------------------------------------------------------------------------

KIND_WORDS = {"number": "number", "choice": "choice", "short": "short answer"}


class QuizListRow(NamedTuple):
    id: str
    topic: str
    kind: str
    exercise: str
    question: str


class QuizListView(NamedTuple):
    rows: list[QuizListRow]
    footer: str


def quiz_list_view(cards: list[Card]) -> QuizListView:
    """``grind quiz list``: each card's id, topic, kind of answer (predict cards say so), the
    exercise that practises it and the question."""
    rows = [QuizListRow(c.id, c.topic, ("predict " if c.predict else "") + KIND_WORDS[c.kind], c.exercise or "—",
                        safe(c.question)) for c in cards]
    topics = sorted({c.topic for c in cards})
    footer = (f"{_count(len(cards), 'card')} in {_count(len(topics), 'topic')} ({', '.join(topics)}). "
              "'grind quiz TOPIC' asks them; 'grind quiz answer ID ANSWER' grades one.")
    return QuizListView(rows, footer)


class QuizCardView(NamedTuple):
    """One card in front of the learner, before the answer."""

    heading: str
    code: str | None  # a predict card's lines
    question: str
    choices: list[str]  # "a) ..." for a choice card
    how: str  # what to type


def quiz_card_view(card: Card, index: int, total: int) -> QuizCardView:
    from judge.quiz import LETTERS

    what = "predict the output" if card.predict else KIND_WORDS[card.kind]
    choices = [f"{LETTERS[i]}) {safe(text)}" for i, text in enumerate(card.choices())] if card.kind == "choice" else []
    how = {"number": "Type a number (1/13, 3e-4, sqrt(2) work)", "choice": f"Type {card.answer_hint()}",
           "short": "Type a few words"}[card.kind]
    return QuizCardView(f"Card {index} of {total} · {card.topic} · {what}", card.code, safe(card.question), choices,
                        f"{how} · ? shows the answer · q quits")


class QuizFeedbackView(NamedTuple):
    """What follows an answer: right or not (and which mistake), the answer, why, and what next."""

    correct: bool
    verdict: str
    why: str | None  # the named mistake's own explanation
    expected: str
    explanation: str
    lines: list[Line]


def quiz_feedback_view(answered: Answered) -> QuizFeedbackView:
    graded = answered.graded
    card = graded.card
    if graded.correct:
        verdict = "Right."
    elif graded.gave_up:
        verdict = "Shown (counted as not known)."
    elif graded.wrong is not None:
        verdict = f"Not quite: {safe(graded.wrong.name)}."
    else:
        verdict = "Not quite."
    lines = []
    if card.exercise:
        lines.append(Line(f"Practise it: grind run {card.exercise}", Tone.INFO))
    if answered.review is not None:
        lines.append(Line(f"Comes back {until_text(answered.review.due, answered.at)}.", Tone.DIM))
    else:
        lines.append(Line("Not due yet, so its schedule stays as it was.", Tone.DIM))
    return QuizFeedbackView(graded.correct, verdict, safe(graded.wrong.why) if graded.wrong else None,
                            f"Answer: {safe(card.expected_text())}", safe(card.explanation), lines)


class QuizSummaryRow(NamedTuple):
    id: str
    result: str
    back: str


class QuizSummaryView(NamedTuple):
    headline: str
    rows: list[QuizSummaryRow]


def quiz_summary_view(session: Session, now: float) -> QuizSummaryView:
    """The end of a quiz: each card's result and when it comes back."""
    rows = []
    for item in session.items:
        answered = item.answered
        if answered is None:
            continue
        graded = answered.graded
        result = ("right" if graded.correct else "shown" if graded.gave_up
                  else f"wrong: {graded.wrong.name}" if graded.wrong else "wrong")
        rows.append(QuizSummaryRow(item.card.id, safe(result),
                                   until_text(answered.review.due, now) if answered.review else "not rescheduled"))
    right = sum(1 for item in session.items if item.answered is not None and item.answered.graded.correct)
    if not rows:  # q or Ctrl-D at the first card: still an answer to "what happened?"
        return QuizSummaryView("Quiz over: no card answered, so nothing was recorded or rescheduled.", [])
    ended = " (ended early; every answer so far is saved)" if session.quit_early else ""
    return QuizSummaryView(f"Quiz over: {right} of {_count(len(rows), 'card')} right{ended}.", rows)


class QuizProgressRow(NamedTuple):
    topic: str
    cards: str
    answered: str
    right: str  # right the last time they were answered
    due: str
    next: str


class QuizProgressView(NamedTuple):
    rows: list[QuizProgressRow]
    totals: str


def quiz_progress_view(rows: list[CardProgress], now: float) -> QuizProgressView:
    """``grind progress``'s quiz part: one row per topic (forty card rows would bury the exercises)."""
    topics: dict[str, list[CardProgress]] = {}
    for row in rows:
        topics.setdefault(row.topic, []).append(row)
    out = [_topic_row(topic, group, now) for topic, group in topics.items()]
    answered = sum(1 for r in rows if r.answers)
    due = sum(1 for r in rows if r.next_review is not None and r.next_review <= now)
    totals = (f"{answered} of {_count(len(rows), 'card')} answered · {sum(1 for r in rows if r.last_correct)} right "
              f"last time · {due} due now (grind quiz)")
    return QuizProgressView(out, totals)


def _topic_row(topic: str, group: list[CardProgress], now: float) -> QuizProgressRow:
    scheduled = [r.next_review for r in group if r.next_review is not None]
    due = sum(1 for t in scheduled if t <= now)
    return QuizProgressRow(topic, str(len(group)), str(sum(1 for r in group if r.answers)),
                           str(sum(1 for r in group if r.last_correct)), str(due),
                           until_text(min(scheduled), now) if scheduled else "—")


class QuizValidationRow(NamedTuple):
    deck: str
    cards: str
    result: str
    ok: bool


class QuizValidationView(NamedTuple):
    rows: list[QuizValidationRow]
    lines: list[str]  # every problem


def quiz_validation_view(reports: list[DeckReport]) -> QuizValidationView:
    """``grind validate``'s quiz part: one row per deck, then every problem on its own line."""
    rows = [QuizValidationRow(f"quiz/{r.path.name}", str(r.cards),
                              "valid" if r.ok else f"{len(r.problems)} problem(s)", r.ok) for r in reports]
    lines = [f"quiz/{r.path.name}: {problem}" for r in reports for problem in r.problems]
    if not reports:
        lines.append("No quiz decks (quiz/*.toml) to check.")
    return QuizValidationView(rows, lines)
