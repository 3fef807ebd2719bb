"""Quiz cards: the reasoning half of the course (the numbers and the "why"), practised and
scheduled like the exercises.

An interview tests "what is the clip coefficient for g1 = [3, 4], g2 = [12]?" and "why does
AdamW decouple weight decay?" as hard as it tests the code, so those questions get the same
treatment as an exercise: graded exactly, with the plausible wrong answers named like pitfalls,
and brought back by the same FSRS scheduler, in the same progress database.

**Where cards live.** ``quiz/*.toml`` beside ``exercises/`` under the content root (so
``GRIND_CONTENT`` courses carry their own decks, and the wheel ships them like the exercises).
One file is one deck, and its name is the cards' topic unless it sets ``topic``. A folder of
its own rather than ``exercises/<slug>/quiz.toml`` because half the cards have no exercise
behind them (fp16's range, a 7B model's memory, the stability limit of gradient descent), and a
card may point at any exercise (``exercise = "clipping"``) without the exercise's folder, which
``grind validate`` keeps free of stray files, having to know.

**Kinds.** ``number`` (a value with a tolerance, optionally the ``formula`` it comes from, which
``grind validate`` recomputes), ``choice`` (the right answer among plausible wrong ones) and
``short`` (a few words, matched against accepted forms). Every kind can list ``[[card.wrong]]``
answers, each with its own ``name`` ("that is the per-tensor coefficient") and ``why``: a wrong
answer that matches one is told which mistake it is, as a failing submission is told its
pitfall. A card with ``code`` (and an ``exercise``) is a *predict* card: the learner sees a few
lines calling the exercise's function and predicts what they print before the reveal.

**Scheduling.** Each card has an FSRS card in the progress database under ``quiz:<id>`` (an
exercise slug cannot contain a colon, so the two never collide). A wrong answer is a failed
recall (*again*) whenever it happens; a right one is a review (*good*) only when the card is
new or due, so answering a card you just saw again cannot push it weeks out. Every answer is
stored, with its schedule change, in one transaction.

This module imports neither rich nor typer nor torch: the CLI asks and renders, this grades.
"""

from __future__ import annotations

import ast
import math
import random
import re
import time
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path
from typing import Any, Callable, TypeGuard

from judge import scheduling
from judge.catalog import content_root, unknown_name_message
from judge.errors import UsageError
from judge.progress import Progress, QuizAnswer
from judge.scheduling import Review
from judge.text import safe

KINDS = ("number", "choice", "short")
DECK_KEYS = {"topic", "order", "card"}
CARD_KEYS = {"id", "kind", "question", "code", "exercise", "answer", "formula", "tolerance", "rel_tolerance",
             "unit", "explanation", "wrong"}
WRONG_KEYS = {"answer", "name", "why", "tolerance"}
DEFAULT_REL_TOLERANCE = 0.01  # a number right to 2-3 significant figures, as it would be said aloud
LETTERS = "abcdef"
KEY_PREFIX = "quiz:"
GIVE_UP = "?"  # "show me": a failed recall, answered on purpose
MAX_ANSWER = 200  # characters: an answer, not a file


def quiz_root(root: Path | None = None) -> Path:
    """The folder of decks: ``quiz/`` under the content root (see ``judge.catalog.content_root``)."""
    return (root or content_root()) / "quiz"


# -- cards --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Wrong:
    """A plausible wrong answer, named like a pitfall."""

    answer: Any  # float (number), str (choice), tuple of accepted spellings (short)
    name: str
    why: str
    tolerance: float | None = None  # number: an absolute tolerance of its own, wider than the card's


@dataclass(frozen=True)
class Card:
    id: str
    topic: str
    kind: str
    question: str
    answer: Any  # float (number), str (choice: the right choice's text), tuple[str, ...] (short)
    explanation: str
    wrong: tuple[Wrong, ...] = ()
    code: str | None = None  # a predict card: the lines whose output the learner predicts
    exercise: str | None = None  # the exercise that practises it
    formula: str | None = None  # number: what the answer is computed from
    tolerance: float | None = None  # number: absolute
    rel_tolerance: float | None = None  # number: relative
    unit: str | None = None  # number: "GB", "x": may follow the learner's number
    path: Path | None = None  # the deck it came from

    @property
    def key(self) -> str:
        """The card's name in the progress database's schedule (beside exercise slugs)."""
        return KEY_PREFIX + self.id

    @property
    def predict(self) -> bool:
        return self.code is not None

    def choices(self) -> list[str]:
        """A choice card's options in a fixed order per card (so ``grind quiz answer ID b`` means
        the same choice every time), shuffled by the card's id so the right one is not always first."""
        options = [self.answer, *(w.answer for w in self.wrong)]
        random.Random(int(sha256(self.id.encode()).hexdigest()[:12], 16)).shuffle(options)
        return options

    def within(self, value: float, target: float) -> bool:
        """Is ``value`` the number ``target``, to this card's tolerance?"""
        rel = self.rel_tolerance if self.rel_tolerance is not None else (
            DEFAULT_REL_TOLERANCE if self.tolerance is None else 0.0)
        return abs(value - target) <= max(self.tolerance or 0.0, rel * abs(target)) * (1 + 1e-12)

    def near(self, value: float, wrong: Wrong) -> bool:
        """Is ``value`` the named wrong number? To the card's tolerance, or to the wrong answer's own
        (``tolerance`` in its table): "3.4e38" is fp32's maximum even on a card whose right answer
        (65504) must be exact to 0.5."""
        return self.within(value, wrong.answer) or (
            wrong.tolerance is not None and abs(value - wrong.answer) <= wrong.tolerance)

    def expected(self) -> Any:
        """The right answer, as ``--json`` gives it: a number, a choice's text, a short answer's first form."""
        return self.answer[0] if self.kind == "short" else self.answer

    def expected_text(self) -> str:
        """The right answer as the learner reads it after the reveal."""
        if self.kind == "number":
            unit = f" {self.unit}" if self.unit else ""
            shown = self.formula is not None and len(self.formula) <= 40  # a long one reads worse than the text
            return f"{number_text(self.answer)}{unit}" + (f" (= {self.formula})" if shown else "")
        if self.kind == "choice":
            return f"{LETTERS[self.choices().index(self.answer)]}) {self.answer}"
        return str(self.answer[0])

    def answer_hint(self) -> str:
        """What kind of answer the prompt waits for."""
        if self.kind == "number":
            unit = f", in {self.unit}" if self.unit and self.unit != "x" else ""
            return f"a number{unit} (1/13, 3e-4 and sqrt(2) work too)"
        if self.kind == "choice":
            letters = LETTERS[:len(self.wrong) + 1]
            return f"{', '.join(letters[:-1])} or {letters[-1]}"
        return "a few words"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "topic": self.topic, "kind": self.kind, "question": self.question,
                                "exercise": self.exercise, "predict": self.predict}
        if self.code is not None:
            data["code"] = self.code
        if self.kind == "choice":
            data["choices"] = {LETTERS[i]: text for i, text in enumerate(self.choices())}
        if self.kind == "number" and self.unit:
            data["unit"] = self.unit
        return data


def number_text(value: float) -> str:
    """65504, 0.55, 0.07692, 1.526e-05: whole numbers whole, the rest to 4 significant figures."""
    if float(value).is_integer() and abs(value) < 1e12:
        return str(int(value))
    return f"{value:.4g}"


def find_card(cards: list[Card], card_id: str) -> Card:
    for card in cards:
        if card.id == card_id:
            return card
    message = unknown_name_message(card_id, [c.id for c in cards])
    raise UsageError(message.replace("Unknown exercise", "Unknown card").replace("'grind list'", "'grind quiz list'"))


def topic_matches(card: Card, topic: str, exercise_topics: dict[str, str] | None = None) -> bool:
    """``grind quiz TOPIC`` and ``grind practice --topic`` pick a card by its own topic, by the
    exercise it is linked to, or by that exercise's topic (so ``--topic distributed`` brings the
    distributed exercises' cards along)."""
    word = topic.lower()
    linked = (exercise_topics or {}).get(card.exercise or "")
    return word in (card.topic, card.exercise, linked)


def select_topic(cards: list[Card], topic: str | None, exercise_topics: dict[str, str] | None = None) -> list[Card]:
    if topic is None:
        return cards
    chosen = [c for c in cards if topic_matches(c, topic, exercise_topics)]
    if not chosen:
        topics = sorted({c.topic for c in cards} | {c.exercise for c in cards if c.exercise})
        raise UsageError(f"No quiz cards on '{topic}'. Topics and exercises with cards: {', '.join(topics)}.")
    return chosen


# -- reading an answer --------------------------------------------------------------------------

_FUNCTIONS: dict[str, Callable[[float], float]] = {
    "sqrt": math.sqrt, "log": math.log, "ln": math.log, "log10": math.log10, "log2": math.log2, "exp": math.exp,
    "cos": math.cos, "sin": math.sin,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
_OPERATORS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.Pow: math.pow,
}


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def evaluate(expression: str) -> float:
    """A plain arithmetic expression (numbers, + - * / **, parentheses, sqrt, log, exp, cos, pi)
    as a float. Used for a learner's answer ("1/13") and for a card's formula; anything else
    (names, attributes, calls of other things) is a ValueError, never executed."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(expression) from None

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and _is_number(node.value):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -value(node.operand) if isinstance(node.op, ast.USub) else value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS \
                and len(node.args) == 1 and not node.keywords:
            return _FUNCTIONS[node.func.id](value(node.args[0]))
        raise ValueError(expression)

    try:
        result = value(tree.body)
    except (ArithmeticError, ValueError, TypeError):  # 1/0, log(-1), 10**999
        raise ValueError(expression) from None
    if not math.isfinite(result):
        raise ValueError(expression)
    return result


_THOUSANDS = re.compile(r"[-+]?\d{1,3}(,\d{3})+(\.\d+)?")


def parse_number(text: str, unit: str | None = None) -> float:
    """The learner's number: ``0.0769``, ``1/13``, ``3e-4``, ``3×10^-4``, ``65,504``, ``10%``,
    and the card's unit after it (``28 GB``, ``4x``). A ValueError when it is none of these."""
    s = text.strip().replace("−", "-").replace("×", "*").replace("·", "*").replace("^", "**")
    if unit and s.lower().endswith(unit.lower()):
        s = s[: -len(unit)].strip()
    scale = 1.0
    if s.endswith("%"):
        s, scale = s[:-1].strip(), 0.01
    if _THOUSANDS.fullmatch(s):
        s = s.replace(",", "")
    if not s or "," in s or len(s) > MAX_ANSWER:
        raise ValueError(text)
    return evaluate(s) * scale


def normalize(text: str) -> str:
    """A short answer or a choice as compared: case, quotes, backticks, spacing and a final full
    stop do not matter ("`sampler.set_epoch(epoch)`." is "sampler.set_epoch(epoch)")."""
    s = re.sub(r"[`'\"]", "", text.lower())
    s = re.sub(r"\s+", " ", s).strip()
    return s.rstrip(" .;:!").strip()


# -- grading -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Graded:
    """One answer to one card, graded."""

    card: Card
    given: str  # what the learner typed
    correct: bool
    wrong: Wrong | None = None  # the named wrong answer it matched
    gave_up: bool = False
    value: float | None = None  # a number card's parsed answer

    def explanation(self) -> str:
        """The card's explanation, after the named mistake's own when one matched."""
        if self.wrong is not None:
            return f"{self.wrong.why} {self.card.explanation}".strip()
        return self.card.explanation

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.card.id, "correct": self.correct, "explanation": self.explanation(),
                                "expected": self.card.expected(), "mistake": self.wrong.name if self.wrong else None,
                                "exercise": self.card.exercise}
        return data


def _choice_of(card: Card, text: str) -> str:
    choices = card.choices()
    letters = LETTERS[:len(choices)]
    picked = re.fullmatch(r"\(?([a-z])[).]?", text.strip().lower())
    if picked and picked.group(1) in letters:
        return choices[letters.index(picked.group(1))]
    for choice in choices:
        if normalize(choice) == normalize(text):
            return choice
    raise UsageError(f"card '{card.id}' is a choice: answer {', '.join(letters[:-1])} or {letters[-1]} "
                     f"(or a choice's full text), not '{_clip(text)}'")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:39] + "…"


def grade(card: Card, text: str) -> Graded:
    """Grade ``text`` as an answer to ``card``. An answer that is not of the card's kind (a word
    where a number is asked, a letter no choice has, nothing at all) is a UsageError: it is not a
    wrong answer, and nothing is recorded for it."""
    if not text.strip():
        raise UsageError(f"no answer given for card '{card.id}' (type {card.answer_hint()}, or ? to see it)")
    if len(text) > MAX_ANSWER:
        raise UsageError(f"that answer is {len(text)} characters long; card '{card.id}' wants {card.answer_hint()}")
    if text.strip() == GIVE_UP:
        return Graded(card, text.strip(), False, gave_up=True)
    return _GRADERS[card.kind](card, text)


def _grade_number(card: Card, text: str) -> Graded:
    try:
        value = parse_number(text, card.unit)
    except ValueError:
        raise UsageError(f"card '{card.id}' asks for a number; '{_clip(text)}' is not one "
                         "(try 0.077, 1/13 or 3e-4)") from None
    if card.within(value, card.answer):
        return Graded(card, text.strip(), True, value=value)
    named = next((w for w in card.wrong if card.near(value, w)), None)
    return Graded(card, text.strip(), False, named, value=value)


def _grade_choice(card: Card, text: str) -> Graded:
    chosen = _choice_of(card, text)
    if chosen == card.answer:
        return Graded(card, text.strip(), True)
    return Graded(card, text.strip(), False, next(w for w in card.wrong if w.answer == chosen))


def _grade_short(card: Card, text: str) -> Graded:
    said = normalize(text)
    if said in {normalize(form) for form in card.answer}:
        return Graded(card, text.strip(), True)
    named = next((w for w in card.wrong if said in {normalize(form) for form in w.answer}), None)
    return Graded(card, text.strip(), False, named)


_GRADERS: dict[str, Callable[[Card, str], Graded]] = {
    "number": _grade_number, "choice": _grade_choice, "short": _grade_short}


# -- recording and scheduling ------------------------------------------------------------------

def rating(correct: bool) -> str:
    """A card has no clock and no hints, so only two ratings say anything true: a wrong answer
    (or a give-up) is *again*; a right one is *good* (never *easy*: a multiple-choice guess can
    be right, and *easy* would send it away for weeks on one guess)."""
    return "good" if correct else "again"


@dataclass(frozen=True)
class Answered:
    graded: Graded
    review: Review | None  # the schedule change, when the answer counted as a review
    at: float


def answer_card(progress: Progress, card: Card, text: str, at: float, mode: str) -> Answered:
    """Grade an answer and record it with its schedule change, in one transaction. A wrong answer
    always reviews the card as *again*; a right one reviews it only when it is new or due (see the
    module docstring). Grading raises before anything is stored when the answer is not of the
    card's kind."""
    graded = grade(card, text)
    review = None
    if not graded.correct or scheduling.is_due(progress, card.key, at):
        stored = progress.card(card.key)
        word = rating(graded.correct)
        card_json, due = scheduling.next_card(stored.card if stored else None, word, at)
        review = Review(card.key, word, due)
        schedule: tuple[str, float, str] | None = (card_json, due, word)
    else:
        schedule = None
    # safe(): an argument that was not valid UTF-8 reaches us with lone surrogates, which SQLite refuses
    progress.record_quiz_answer(card.id, safe(graded.given), graded.correct,
                                graded.wrong.name if graded.wrong else None, mode, at, card.key, schedule)
    return Answered(graded, review, at)


def pick_cards(progress: Progress, cards: list[Card], now: float, count: int | None = None,
               due_only: bool = False) -> list[Card]:
    """A session's cards: the due ones, most overdue first; then (unless ``due_only``) the ones
    never answered, in deck order. Cards answered and not due yet stay away."""
    due, fresh = [], []
    for order, card in enumerate(cards):
        stored = progress.card(card.key)
        if stored is None:
            fresh.append(card)
        elif stored.due <= now:
            due.append((stored.due, order, card))
    picked = [c for *_, c in sorted(due, key=lambda t: t[:2])] + ([] if due_only else fresh)
    return picked if count is None else picked[:max(0, count)]


def next_card_due(progress: Progress, cards: list[Card]) -> tuple[Card, float] | None:
    """The card that comes back first, for "nothing is due; next: ..."."""
    scheduled = [(stored.due, card) for card in cards if (stored := progress.card(card.key)) is not None]
    if not scheduled:
        return None
    due, card = min(scheduled, key=lambda t: t[0])
    return card, due


@dataclass
class CardProgress:
    """One card in ``grind progress``."""

    id: str
    topic: str
    answers: int
    right: int
    last_correct: bool | None
    last_answered: float | None
    next_review: float | None

    def to_json(self) -> dict[str, Any]:
        from judge.progress import iso

        return {"id": self.id, "topic": self.topic, "answers": self.answers, "right": self.right,
                "last_correct": self.last_correct, "last_answered": iso(self.last_answered),
                "next_review": iso(self.next_review)}


def card_progress(progress: Progress, cards: list[Card]) -> list[CardProgress]:
    by_card: dict[str, list[QuizAnswer]] = {}
    for answer in progress.quiz_answers():
        by_card.setdefault(answer.card, []).append(answer)
    rows = []
    for card in cards:
        answers = by_card.get(card.id, [])
        stored = progress.card(card.key)
        rows.append(CardProgress(card.id, card.topic, len(answers), sum(1 for a in answers if a.correct),
                                 answers[-1].correct if answers else None,
                                 answers[-1].answered_at if answers else None,
                                 stored.due if stored else None))
    return rows


def quiz_json(rows: list[CardProgress], now: float) -> dict[str, Any]:
    """``grind progress --json``'s "quiz" entry."""
    return {"cards": [r.to_json() for r in rows],
            "totals": {"cards": len(rows), "answered": sum(1 for r in rows if r.answers),
                       "answers": sum(r.answers for r in rows), "right": sum(r.right for r in rows),
                       "due": sum(1 for r in rows if r.next_review is not None and r.next_review <= now)}}


# -- an interactive session ---------------------------------------------------------------------

@dataclass
class SessionItem:
    card: Card
    answered: Answered | None = None  # None: the session ended before it was answered


@dataclass
class Session:
    items: list[SessionItem] = field(default_factory=list)
    quit_early: bool = False


def run_session(progress: Progress, cards: list[Card], *, ask: Callable[[str], str | None],
                present: Callable[[Card, int, int], None], reveal: Callable[[Answered, int, int], None],
                complain: Callable[[str], None], mode: str = "quiz",
                clock: Callable[[], float] = time.time) -> Session:
    """Ask each card in turn, through the caller's ``ask`` (None: the learner quit, or input
    ended), and record each answer the moment it is graded, so quitting or a closed terminal
    loses nothing already answered. An answer of the wrong kind is ``complain``-ed about in one
    line and asked again; it is not a wrong answer."""
    session = Session()
    total = len(cards)
    for index, card in enumerate(cards, start=1):
        item = SessionItem(card)
        session.items.append(item)
        present(card, index, total)
        while item.answered is None:
            text = ask(card.answer_hint())
            if text is None or text.strip().lower() in ("q", "quit", "exit"):
                session.quit_early = True
                session.items.pop()
                return session
            try:
                item.answered = answer_card(progress, card, text, clock(), mode)
            except UsageError as exc:
                complain(exc.message)
        reveal(item.answered, index, total)
    return session
