"""Quiz decks on disk: reading ``quiz/*.toml`` into cards, and ``grind validate``'s checks of them.

The cards themselves (what a card is, how an answer is graded and scheduled) are judge/quiz.py's;
this module is the authoring side, where every problem with a deck is one line naming the file,
the card (by id, with its line, where it has one) and the key, as a manifest's problems are.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from judge.catalog import SLUG_RE
from judge.errors import ManifestError
from judge.quiz import CARD_KEYS, DECK_KEYS, KINDS, LETTERS, WRONG_KEYS, Card, Wrong, evaluate, normalize, \
    number_text, quiz_root

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# -- reading decks -----------------------------------------------------------------------------

def _line_of(text: str, card_id: str | None) -> str:
    if card_id:
        for number, line in enumerate(text.splitlines(), start=1):
            if re.match(rf"^\s*id\s*=\s*[\"']{re.escape(card_id)}[\"']", line):
                return f" (line {number})"
    return ""


class _Deck:
    """Typed access to one parsed deck, raising ManifestError that names file, card and key."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text = path, text

    def fail(self, index: int, card_id: str | None, problem: str) -> ManifestError:
        which = f"card '{card_id}'" if card_id else f"card {index + 1}"
        return ManifestError(f"{self.path}: {which}{_line_of(self.text, card_id)} {problem}")


def _text(deck: _Deck, index: int, card_id: str | None, table: dict[str, Any], key: str, where: str = "",
          required: bool = True) -> str | None:
    value = table.get(key)
    if value is None:
        if required:
            raise deck.fail(index, card_id, f"is missing '{where}{key}'")
        return None
    if not isinstance(value, str):
        raise deck.fail(index, card_id, f"'{where}{key}' must be text, got {type(value).__name__}")
    return value.strip()


def _number(deck: _Deck, index: int, card_id: str | None, value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise deck.fail(index, card_id, f"'{key}' must be a finite number, got {value!r}")
    return float(value)


def _forms(deck: _Deck, index: int, card_id: str | None, value: Any, key: str) -> tuple[str, ...]:
    forms = [value] if isinstance(value, str) else value
    if not isinstance(forms, list) or not forms or not all(isinstance(f, str) and f.strip() for f in forms):
        raise deck.fail(index, card_id, f"'{key}' must be text or a list of non-empty texts (the accepted forms)")
    return tuple(f.strip() for f in forms)


def _answer(deck: _Deck, index: int, card_id: str, kind: str, value: Any, key: str) -> Any:
    if value is None:
        raise deck.fail(index, card_id, f"is missing '{key}'")
    if kind == "number":
        return _number(deck, index, card_id, value, key)
    if kind == "choice":
        if not isinstance(value, str) or not value.strip():
            raise deck.fail(index, card_id, f"'{key}' must be the choice's text")
        return value.strip()
    return _forms(deck, index, card_id, value, key)


def _card(deck: _Deck, index: int, table: Any, topic: str) -> Card:
    if not isinstance(table, dict):
        raise deck.fail(index, None, "must be a table ([[card]])")
    raw_id = table.get("id")
    card_id = raw_id if isinstance(raw_id, str) else None
    unknown = sorted(set(table) - CARD_KEYS)
    if unknown:
        raise deck.fail(index, card_id, f"has an unknown key '{unknown[0]}' (known: {', '.join(sorted(CARD_KEYS))})")
    if card_id is None or not SLUG_RE.match(card_id):
        raise deck.fail(index, card_id, "needs an 'id' that is a lowercase slug like 'clip-coef'")
    kind = table.get("kind")
    if kind not in KINDS:
        raise deck.fail(index, card_id, f"'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    wrongs = _wrongs(deck, index, card_id, kind, table.get("wrong", []))
    numeric = _tolerances(deck, index, card_id, kind, table)

    def text(key: str) -> str | None:
        return _text(deck, index, card_id, table, key, required=False) or None

    exercise = text("exercise")
    return Card(
        id=card_id, topic=topic, kind=kind,
        question=_text(deck, index, card_id, table, "question") or "",
        answer=_answer(deck, index, card_id, kind, table.get("answer"), "answer"),
        explanation=_text(deck, index, card_id, table, "explanation") or "",
        wrong=wrongs, code=text("code"), exercise=exercise, formula=text("formula"),
        tolerance=numeric.get("tolerance"), rel_tolerance=numeric.get("rel_tolerance"),
        unit=text("unit"), path=deck.path,
    )


def _wrongs(deck: _Deck, index: int, card_id: str, kind: str, raw_wrongs: Any) -> tuple[Wrong, ...]:
    """A card's ``[[card.wrong]]`` answers, each of the card's kind, named and explained."""
    if not isinstance(raw_wrongs, list):
        raise deck.fail(index, card_id, "'wrong' must be a list of tables ([[card.wrong]])")
    wrongs = []
    for n, wrong in enumerate(raw_wrongs, start=1):
        if not isinstance(wrong, dict) or set(wrong) - WRONG_KEYS:
            raise deck.fail(index, card_id, f"wrong answer {n} must be a table with 'answer', 'name' and 'why' "
                                              "(and, on a number card, an optional 'tolerance')")
        where = f"wrong {n}: "
        tolerance = None
        if "tolerance" in wrong:
            if kind != "number":
                raise deck.fail(index, card_id, f"'{where}tolerance' is for number cards only")
            tolerance = _number(deck, index, card_id, wrong["tolerance"], f"{where}tolerance")
        wrongs.append(Wrong(_answer(deck, index, card_id, kind, wrong.get("answer"), f"{where}answer"),
                            _text(deck, index, card_id, wrong, "name", where) or "",
                            _text(deck, index, card_id, wrong, "why", where) or "", tolerance))
    return tuple(wrongs)


def _tolerances(deck: _Deck, index: int, card_id: str, kind: str, table: dict[str, Any]) -> dict[str, float]:
    """A number card's tolerances (non-negative numbers); the keys only number cards may have."""
    numeric: dict[str, float] = {k: _number(deck, index, card_id, table[k], k) for k in ("tolerance", "rel_tolerance")
                                 if k in table}
    if kind != "number":
        extra = sorted(k for k in ("formula", "tolerance", "rel_tolerance", "unit") if k in table)
        if extra:
            raise deck.fail(index, card_id, f"'{extra[0]}' is for number cards only")
    if any(v < 0 for v in numeric.values()):
        raise deck.fail(index, card_id, "tolerances must not be negative")
    return numeric


def load_deck(path: Path) -> list[Card]:
    """The cards of one deck file; every structural problem is one ManifestError line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - DECK_KEYS)
    if unknown:
        raise ManifestError(f"{path}: key '{unknown[0]}' is not a deck key (a deck has 'topic', 'order' and "
                            "[[card]] tables)")
    order = data.get("order", 0)
    if isinstance(order, bool) or not isinstance(order, int):
        raise ManifestError(f"{path}: 'order' must be a whole number (decks are asked in that order)")
    topic = data.get("topic", path.stem)
    if not isinstance(topic, str) or not SLUG_RE.match(topic):
        raise ManifestError(f"{path}: 'topic' must be a lowercase slug like 'clipping'")
    cards = data.get("card", [])
    if not isinstance(cards, list) or not cards:
        raise ManifestError(f"{path}: no cards (add [[card]] tables)")
    deck = _Deck(path, text)
    return [_card(deck, i, table, topic) for i, table in enumerate(cards)]


def deck_paths(root: Path | None = None) -> list[Path]:
    """The deck files, in course order: a deck's ``order = N`` (like an exercise's), then its name."""
    folder = quiz_root(root)
    return sorted(folder.glob("*.toml"), key=_order_key) if folder.is_dir() else []


def _order_key(path: Path) -> tuple[int, str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""  # reported properly when the deck is loaded
    match = re.search(r"^order\s*=\s*(\d+)", text, re.M)
    return (int(match.group(1)) if match else 10_000, path.name)


def load_cards(root: Path | None = None) -> tuple[list[Card], list[ManifestError]]:
    """Every loadable card, plus the problems of the rest: a broken deck must not hide the
    others from a learner (as a broken exercise does not hide the course). A card whose id an
    earlier deck already used is a problem too, and is left out."""
    cards: list[Card] = []
    problems: list[ManifestError] = []
    seen: dict[str, Path | None] = {}
    for path in deck_paths(root):
        try:
            loaded = load_deck(path)
        except ManifestError as exc:
            problems.append(exc)
            continue
        for card in loaded:
            if card.id in seen:
                problems.append(ManifestError(f"{path}: card '{card.id}'{_line_of(path.read_text('utf-8'), card.id)} "
                                              f"has the id of a card in {seen[card.id]}; ids must be unique"))
                continue
            seen[card.id] = path
            cards.append(card)
    return cards, problems


# -- instructors: grind validate ----------------------------------------------------------------

@dataclass
class DeckReport:
    """``grind validate``'s verdict on one deck."""

    path: Path
    cards: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def card_problems(card: Card, exercises: Iterable[str] | None = None) -> list[str]:
    """What is wrong with one card beyond its structure: a number that disagrees with its own
    formula, choices that repeat, a wrong answer that is also right, an empty explanation, an
    exercise that does not exist. Each problem is one line naming the card."""
    where = f"card '{card.id}'"
    problems = [f"{where}: {problem}" for problem in (*_text_problems(card), *_KIND_PROBLEMS[card.kind](card),
                                                      *_link_problems(card, exercises))]
    return problems


def _text_problems(card: Card) -> list[str]:
    problems = []
    if not card.question:
        problems.append("the question is empty")
    if not card.explanation:
        problems.append("the explanation is empty")
    for wrong in card.wrong:
        if not wrong.name or not wrong.why:
            problems.append(f"wrong answer {_shown(card, wrong.answer)} needs a non-empty name and why")
    return problems


def _number_problems(card: Card) -> list[str]:
    problems = []
    if card.formula is not None:
        try:
            computed = evaluate(card.formula)
        except ValueError:
            problems.append(f"formula '{card.formula}' is not plain arithmetic grind can compute")
        else:
            if not card.within(computed, card.answer):
                problems.append(f"answer {number_text(card.answer)} disagrees with its formula "
                                f"{card.formula} = {computed:.6g} (beyond the card's tolerance)")
    for wrong in card.wrong:
        if card.within(wrong.answer, card.answer):
            problems.append(f"wrong answer {number_text(wrong.answer)} is within the tolerance of the "
                            f"right one ({number_text(card.answer)}), so it would be graded right")
    wrongs = list(card.wrong)
    if any(card.near(a.answer, b) or card.near(b.answer, a) for i, a in enumerate(wrongs) for b in wrongs[i + 1:]):
        problems.append("two wrong answers are the same number, to the card's tolerance")
    return problems


def _choice_problems(card: Card) -> list[str]:
    problems = []
    options = [normalize(c) for c in (card.answer, *(w.answer for w in card.wrong))]
    if len(set(options)) != len(options):
        problems.append("the choices are not distinct")
    if len(card.wrong) < 2:
        problems.append("a choice needs at least 2 plausible wrong answers")
    if len(options) > len(LETTERS):
        problems.append(f"at most {len(LETTERS)} choices")
    return problems


def _short_problems(card: Card) -> list[str]:
    right = {normalize(f) for f in card.answer}
    return [f"wrong answer '{wrong.answer[0]}' is also an accepted form" for wrong in card.wrong
            if right & {normalize(f) for f in wrong.answer}]


_KIND_PROBLEMS: dict[str, Callable[[Card], list[str]]] = {
    "number": _number_problems, "choice": _choice_problems, "short": _short_problems}


def _link_problems(card: Card, exercises: Iterable[str] | None) -> list[str]:
    """A predict card names its exercise; a named exercise exists."""
    problems = []
    if card.code is not None and card.exercise is None:
        problems.append("a predict card (with code) names the exercise whose code it runs")
    if card.exercise is not None and exercises is not None and card.exercise not in set(exercises):
        import difflib

        close = difflib.get_close_matches(card.exercise, list(exercises), n=1, cutoff=0.6)
        problems.append(f"exercise '{card.exercise}' does not exist"
                        + (f" (did you mean '{close[0]}'?)" if close else ""))
    return problems


def _shown(card: Card, answer: Any) -> str:
    if card.kind == "number":
        return number_text(answer)
    return f"'{answer if isinstance(answer, str) else answer[0]}'"


def validate_decks(exercises: Iterable[str], root: Path | None = None) -> list[DeckReport]:
    """One report per deck file: its structure, then every card's problems (see ``card_problems``)
    and ids repeated across decks."""
    known = list(exercises)
    reports = []
    seen: dict[str, Path] = {}
    for path in deck_paths(root):
        report = DeckReport(path)
        reports.append(report)
        try:
            cards = load_deck(path)
        except ManifestError as exc:
            report.problems.append(exc.message)
            continue
        report.cards = len(cards)
        for card in cards:
            if card.id in seen:
                report.problems.append(f"card '{card.id}': the id is already used in {seen[card.id].name}")
            seen.setdefault(card.id, path)
            report.problems += card_problems(card, known)
    return reports
