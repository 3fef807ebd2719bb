"""grind quiz: grading each kind of answer, the shipped cards, grind validate's card checks, the
schedule the answers feed, and the commands (list, answer, an interactive session, practice,
progress, validate)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.catalog import Catalog
from judge.cli import app
from judge.errors import UsageError
from judge.progress import Progress
from judge.decks import card_problems, load_cards, validate_decks
from judge.quiz import (Card, Wrong, answer_card, evaluate, grade, number_text, parse_number, pick_cards, run_session,
                        select_topic)
from judge.status import ExitStatus

DAY = 86400.0
T0 = 1_750_000_000.0
runner = CliRunner()

NUMBER = Card("coef", "clipping", "number", "Clip coefficient?", 1 / 13, "max_norm / 13.",
              wrong=(Wrong(0.2, "the per-tensor coefficient", "1/5 is g1's own."),
                     Wrong(1 / 17, "summed norms", "5 + 12.")),
              exercise="clipping", formula="1 / sqrt(3**2 + 4**2 + 12**2)")
MEMORY = Card("mem", "optimizers", "number", "GB?", 28.0, "7e9 * 4 bytes.", unit="GB", formula="7e9 * 4 / 1e9")
CHOICE = Card("why", "optimizers", "choice", "Why AdamW?", "decay outside the update", "Because.",
              wrong=(Wrong("it is faster", "speed", "It is not."), Wrong("same thing", "SGD only", "Only for SGD.")))
SHORT = Card("rank", "distributed", "short", "Which rank writes?", ("global rank 0", "rank 0"), "Global.",
             wrong=(Wrong(("local rank 0", "local_rank == 0"), "one writer per node", "Once per node."),))


# -- grading each kind --------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["0.0769", "0.07692", "1/13", "1 / 13", "7.69e-2", "7.69%", "sqrt(1)/13"])
def test_a_number_is_right_within_the_tolerance_however_it_is_written(text: str) -> None:
    graded = grade(NUMBER, text)
    assert graded.correct and graded.wrong is None


@pytest.mark.parametrize("text, mistake", [("0.2", "the per-tensor coefficient"), ("1/17", "summed norms"),
                                           ("0.0588", "summed norms"), ("0.5", None), ("0.08", None)])
def test_a_wrong_number_is_named_after_the_wrong_answer_it_matches(text: str, mistake: str | None) -> None:
    """0.08 is 4% off 1/13: beyond the default 1% tolerance, and no named mistake either."""
    graded = grade(NUMBER, text)
    assert not graded.correct
    assert (graded.wrong.name if graded.wrong else None) == mistake
    assert graded.explanation().endswith("max_norm / 13.")


@pytest.mark.parametrize("text, value", [("28 GB", 28), ("28gb", 28), ("65,504", 65504), ("-0.01", -0.01),
                                         ("3×10^-4", 3e-4), ("−2", -2), ("10%", 0.1), ("2**3", 8)])
def test_parse_number_reads_the_ways_people_write_numbers(text: str, value: float) -> None:
    assert parse_number(text, unit="GB") == pytest.approx(value)


@pytest.mark.parametrize("text", ["abc", "1,5", "__import__('os')", "(1).real", "x + 1", "10**10**10", "1/0",
                                  "sqrt(-1)", "open('f')", "[1]", "nan", "inf"])
def test_anything_but_arithmetic_is_not_a_number_and_is_never_run(text: str) -> None:
    with pytest.raises(ValueError):
        parse_number(text)


def test_a_word_where_a_number_is_asked_is_a_usage_error_not_a_wrong_answer() -> None:
    with pytest.raises(UsageError, match="asks for a number; 'twelve' is not one"):
        grade(NUMBER, "twelve")
    with pytest.raises(UsageError, match="no answer"):
        grade(NUMBER, "   ")


def test_a_unit_after_the_number_is_read_when_the_card_has_it() -> None:
    assert grade(MEMORY, "28 GB").correct and grade(MEMORY, "28").correct
    assert not grade(MEMORY, "56 GB").correct
    with pytest.raises(UsageError):
        grade(NUMBER, "0.0769 GB")  # this card has no unit


def test_a_choice_is_answered_by_letter_or_text_in_a_fixed_order() -> None:
    choices = CHOICE.choices()
    assert choices == CHOICE.choices() and sorted(choices) == sorted(
        ["decay outside the update", "it is faster", "same thing"])
    right = "abc"[choices.index(CHOICE.answer)]
    assert grade(CHOICE, right).correct and grade(CHOICE, f"({right.upper()})").correct
    assert grade(CHOICE, "  Decay outside the update. ").correct
    for wrong in CHOICE.wrong:
        letter = "abc"[choices.index(wrong.answer)]
        graded = grade(CHOICE, letter)
        assert not graded.correct and graded.wrong == wrong


def test_a_letter_no_choice_has_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="answer a, b or c"):
        grade(CHOICE, "d")
    with pytest.raises(UsageError):
        grade(CHOICE, "something else entirely")


def test_a_short_answer_matches_its_forms_whatever_the_case_quotes_and_full_stop() -> None:
    assert grade(SHORT, "Global Rank 0.").correct and grade(SHORT, "`rank 0`").correct
    named = grade(SHORT, "LOCAL_RANK == 0")
    assert not named.correct and named.wrong is not None and named.wrong.name == "one writer per node"
    other = grade(SHORT, "the last rank")
    assert not other.correct and other.wrong is None


def test_a_question_mark_gives_up_and_counts_as_not_known() -> None:
    for card in (NUMBER, CHOICE, SHORT):
        graded = grade(card, "?")
        assert graded.gave_up and not graded.correct


def test_the_json_answer_has_correct_explanation_and_expected() -> None:
    data = grade(NUMBER, "0.2").to_json()
    assert data["correct"] is False and data["expected"] == pytest.approx(1 / 13)
    assert data["explanation"] == "1/5 is g1's own. max_norm / 13." and data["mistake"] == "the per-tensor coefficient"
    assert grade(SHORT, "rank 0").to_json()["expected"] == "global rank 0"


# -- the shipped cards ------------------------------------------------------------------------

# The ten self-check questions and every worked number of the course pages, each with its card.
COVERAGE = {
    "self-check 1, what bias correction fixes": ["adam-bias-correction", "adam-bias-factor"],
    "self-check 2, AdamW rather than Adam + L2": ["adamw-vs-l2"],
    "self-check 3, why warmup": ["warmup-why"],
    "self-check 4, a 4x batch": ["batch-4x-linear", "batch-4x-sqrt"],
    "self-check 5, unscale before clipping": ["unscale-before-clip", "scaled-clip-threshold"],
    "self-check 6, update ratio 0.1": ["update-ratio"],
    "self-check 7, fitting one batch": ["overfit-one-batch"],
    "self-check 8, 8, 8, 3 examples": ["accum-8-8-3", "accum-tail-weight"],
    "self-check 9, which rank writes": ["checkpoint-rank", "local-rank-writers"],
    "self-check 10, exact resume": ["exact-resume"],
    "Adam with a constant gradient 2": ["adam-first-step"],
    "AdamW's 0.003 shrink at theta = 3": ["adamw-decay-step"],
    "8, 8, 3 divide by 19": ["accum-8-8-3"],
    "4x batch: 4x or 2x the lr": ["batch-4x-linear", "batch-4x-sqrt"],
    "fp16's 65504": ["fp16-max"],
    "7B parameters: 28 + 56 GB": ["memory-7b-weights", "memory-7b-adam-state"],
    "2 / lambda_max": ["gd-stability"],
    "log 10 = 2.303": ["initial-loss"],
    "interview: NaN after 10k steps": ["shrinking-scale", "nan-guard"],
    "clip coefficient for [3, 4], [12]": ["clip-coef", "clip-total-norm"],
}


@pytest.fixture(scope="module")
def shipped() -> list[Card]:
    cards, problems = load_cards()
    assert not problems, [p.message for p in problems]
    return cards


def test_the_course_has_at_least_24_cards_of_every_kind_covering_every_self_check_and_number(
        shipped: list[Card]) -> None:
    ids = {card.id for card in shipped}
    assert len(shipped) >= 24 and len(ids) == len(shipped)
    assert {card.kind for card in shipped} == {"number", "choice", "short"}
    assert sum(1 for card in shipped if card.predict) >= 5
    missing = {topic: [i for i in want if i not in ids] for topic, want in COVERAGE.items()}
    assert not {topic: m for topic, m in missing.items() if m}


def test_the_worked_numbers_are_the_pages_numbers(shipped: list[Card]) -> None:
    answers = {card.id: card.answer for card in shipped}
    assert answers["adam-first-step"] == pytest.approx(-0.01) and answers["adamw-decay-step"] == pytest.approx(2.997)
    assert answers["accum-8-8-3"] == 19 and answers["fp16-max"] == 65504
    assert (answers["memory-7b-weights"], answers["memory-7b-adam-state"]) == (28, 56)
    assert answers["gd-stability"] == pytest.approx(0.02) and number_text(answers["initial-loss"]) == "2.303"
    assert (answers["batch-4x-linear"], answers["batch-4x-sqrt"]) == (4, 2)


def test_the_shipped_decks_validate_clean() -> None:
    reports = validate_decks(Catalog().slugs())
    assert reports and all(r.ok for r in reports), [p for r in reports for p in r.problems]


def test_every_shipped_right_answer_is_graded_right_and_every_wrong_one_by_its_name(shipped: list[Card]) -> None:
    """Each card's own right answer, typed as a learner would, passes; each of its wrong answers
    fails, named as itself. A card whose tolerance swallows a wrong answer, or whose choices are
    mislabelled, fails here."""
    for card in shipped:
        if card.kind == "number":
            typed = [number_text(card.answer)]
            wrongs = [(number_text(w.answer), w) for w in card.wrong]
        elif card.kind == "choice":
            typed = ["abcdef"[card.choices().index(card.answer)]]
            wrongs = [("abcdef"[card.choices().index(w.answer)], w) for w in card.wrong]
        else:
            typed = list(card.answer)
            wrongs = [(form, w) for w in card.wrong for form in w.answer]
        for text in typed:
            assert grade(card, text).correct, (card.id, text)
        for text, wrong in wrongs:
            graded = grade(card, text)
            assert not graded.correct and graded.wrong == wrong, (card.id, text)


def test_a_predict_card_links_a_real_exercise(shipped: list[Card]) -> None:
    slugs = set(Catalog().slugs())
    assert all(card.exercise in slugs for card in shipped if card.predict)
    assert all(card.exercise is None or card.exercise in slugs for card in shipped)


def test_a_topic_picks_cards_by_topic_exercise_or_exercise_topic(shipped: list[Card]) -> None:
    topics = {e.slug: e.topic for e in Catalog().load_all()[0]}
    assert {c.topic for c in select_topic(shipped, "precision", topics)} == {"precision"}
    assert all(c.exercise == "clipping" or c.topic == "clipping" for c in select_topic(shipped, "clipping", topics))
    assert {c.id for c in select_topic(shipped, "distributed", topics)} >= {"checkpoint-rank", "zero-stage"}
    with pytest.raises(UsageError, match="No quiz cards on 'cooking'"):
        select_topic(shipped, "cooking", topics)


# -- grind validate on instructors' cards ---------------------------------------------------------

GOOD_DECK = '''
[[card]]
id = "ok"
kind = "number"
question = "sqrt(169)?"
answer = 13
formula = "sqrt(169)"
explanation = "Thirteen."
'''


def _deck(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / "quiz").mkdir(exist_ok=True)
    path = tmp_path / "quiz" / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("body, problem", [
    ('kind = "number"\nanswer = 14\nformula = "sqrt(169)"\nexplanation = "x"', "disagrees with its formula"),
    ('kind = "number"\nanswer = 13\nformula = "import os"\nexplanation = "x"', "not plain arithmetic"),
    ('kind = "number"\nanswer = 13\nexplanation = ""', "explanation is empty"),
    ('kind = "number"\nanswer = 13\nexplanation = "x"\n[[card.wrong]]\nanswer = 13.05\nname = "n"\nwhy = "w"',
     "within the tolerance of the right one"),
    ('kind = "number"\nanswer = 13\nexplanation = "x"\n[[card.wrong]]\nanswer = 12\nname = "n"\nwhy = ""',
     "needs a non-empty name and why"),
    ('kind = "choice"\nanswer = "A"\nexplanation = "x"\n[[card.wrong]]\nanswer = "a."\nname = "n"\nwhy = "w"\n'
     '[[card.wrong]]\nanswer = "B"\nname = "m"\nwhy = "w"', "choices are not distinct"),
    ('kind = "choice"\nanswer = "A"\nexplanation = "x"\n[[card.wrong]]\nanswer = "B"\nname = "n"\nwhy = "w"',
     "at least 2 plausible wrong answers"),
    ('kind = "short"\nanswer = ["x", "y"]\nexplanation = "x"\n[[card.wrong]]\nanswer = ["Y"]\nname = "n"\nwhy = "w"',
     "also an accepted form"),
    ('kind = "number"\nanswer = 13\nexplanation = "x"\nexercise = "no-such-exercise"', "does not exist"),
    ('kind = "number"\nanswer = 13\nexplanation = "x"\ncode = ">>> f()"', "names the exercise"),
])
def test_validate_names_each_problem_of_a_card(tmp_path: Path, body: str, problem: str) -> None:
    _deck(tmp_path, "deck.toml", f'[[card]]\nid = "c"\nquestion = "q"\n{body}\n')
    [report] = validate_decks(["clipping"], tmp_path)
    assert not report.ok and any(problem in p and "card 'c'" in p for p in report.problems), report.problems


@pytest.mark.parametrize("text, problem", [
    ("[[card]\n", "not valid TOML"),
    ('[[card]]\nid = "Bad Id"\nkind = "number"', "lowercase slug"),
    ('[[card]]\nid = "c"\nkind = "essay"', "'kind' must be one of"),
    ('[[card]]\nid = "c"\nkind = "number"\nquestion = "q"\nanswer = "13"\nexplanation = "x"', "finite number"),
    ('[[card]]\nid = "c"\nkind = "number"\nquestion = "q"\nanswer = 1\nexplanation = "x"\nhint = "h"', "unknown key"),
    ('title = "x"', "not a deck key"),
])
def test_a_broken_deck_is_one_line_and_the_other_decks_still_load(tmp_path: Path, text: str, problem: str) -> None:
    _deck(tmp_path, "a.toml", text)
    _deck(tmp_path, "b.toml", GOOD_DECK)
    cards, problems = load_cards(tmp_path)
    assert [c.id for c in cards] == ["ok"]
    assert len(problems) == 1 and problem in problems[0].message and "a.toml" in problems[0].message


def test_decks_come_in_their_order_then_by_name(tmp_path: Path) -> None:
    _deck(tmp_path, "a.toml", GOOD_DECK.replace('"ok"', '"a"'))
    _deck(tmp_path, "b.toml", "order = 1\n" + GOOD_DECK.replace('"ok"', '"b"'))
    _deck(tmp_path, "c.toml", GOOD_DECK.replace('"ok"', '"c"'))
    assert [c.id for c in load_cards(tmp_path)[0]] == ["b", "a", "c"]
    _deck(tmp_path, "d.toml", 'order = "first"\n' + GOOD_DECK.replace('"ok"', '"d"'))
    assert "'order' must be a whole number" in load_cards(tmp_path)[1][0].message


def test_an_id_used_by_two_decks_is_a_problem(tmp_path: Path) -> None:
    _deck(tmp_path, "a.toml", GOOD_DECK)
    _deck(tmp_path, "b.toml", GOOD_DECK)
    cards, problems = load_cards(tmp_path)
    assert len(cards) == 1 and "ids must be unique" in problems[0].message
    assert any("already used in a.toml" in p for r in validate_decks([], tmp_path) for p in r.problems)


def test_card_problems_is_clean_for_a_good_card() -> None:
    assert card_problems(NUMBER, ["clipping"]) == [] and card_problems(CHOICE) == [] and card_problems(SHORT) == []
    assert evaluate("(2 - 2**-10) * 2**15") == 65504


# -- recording and the schedule -----------------------------------------------------------------

def test_a_first_answer_schedules_the_card_like_an_exercise(tmp_path: Path) -> None:
    """Right: good, back in 2 days; wrong: again, back tomorrow (the exercises' FSRS settings)."""
    with Progress(tmp_path / "p.db") as progress:
        right = answer_card(progress, NUMBER, "1/13", T0, "answer")
        wrong = answer_card(progress, CHOICE, "?", T0, "quiz")
        assert right.review is not None and right.review.rating == "good" and right.review.due - T0 == 2 * DAY
        assert wrong.review is not None and wrong.review.rating == "again" and wrong.review.due - T0 == 1 * DAY
        assert progress.card("quiz:coef").due == right.review.due  # type: ignore[union-attr]
        assert [r[1] for r in progress.reviews("quiz:why")] == ["again"]
        stored = progress.quiz_answers()
        assert [(a.card, a.answer, a.correct, a.mode) for a in stored] == [("coef", "1/13", True, "answer"),
                                                                           ("why", "?", False, "quiz")]


def test_a_right_answer_before_the_card_is_due_leaves_the_schedule_but_a_wrong_one_brings_it_back(
        tmp_path: Path) -> None:
    with Progress(tmp_path / "p.db") as progress:
        first = answer_card(progress, NUMBER, "1/13", T0, "quiz")
        assert first.review is not None
        early = answer_card(progress, NUMBER, "0.0769", T0 + 3600, "answer")
        assert early.review is None and progress.card("quiz:coef").due == first.review.due  # type: ignore[union-attr]
        lapse = answer_card(progress, NUMBER, "0.2", T0 + 7200, "answer")
        assert lapse.review is not None and lapse.review.rating == "again"
        assert lapse.review.due < first.review.due
        on_time = answer_card(progress, NUMBER, "1/13", lapse.review.due, "quiz")
        assert on_time.review is not None and on_time.review.due - lapse.review.due > DAY
        assert len(progress.quiz_answers("coef")) == 4
        assert [r[1] for r in progress.reviews("quiz:coef")] == ["good", "again", "good"]


def test_an_answer_of_the_wrong_kind_records_nothing(tmp_path: Path) -> None:
    with Progress(tmp_path / "p.db") as progress:
        with pytest.raises(UsageError):
            answer_card(progress, NUMBER, "thirteen", T0, "answer")
        assert progress.quiz_answers() == [] and progress.card("quiz:coef") is None


def test_the_answer_and_its_schedule_are_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If storing the schedule fails, the answer is not kept without it."""
    with Progress(tmp_path / "p.db") as progress:
        def broken(*_args: object) -> None:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(Progress, "_save_review", staticmethod(broken))
        with pytest.raises(sqlite3.OperationalError):
            answer_card(progress, NUMBER, "1/13", T0, "answer")
        assert progress.quiz_answers() == []


def test_a_session_picks_due_cards_most_overdue_first_then_new_ones(tmp_path: Path) -> None:
    cards = [NUMBER, CHOICE, SHORT, MEMORY]
    with Progress(tmp_path / "p.db") as progress:
        answer_card(progress, SHORT, "?", T0, "quiz")          # due T0 + 1 day
        answer_card(progress, CHOICE, "?", T0 - DAY, "quiz")   # due T0, more overdue
        answer_card(progress, MEMORY, "28", T0, "quiz")        # due T0 + 2 days
        now = T0 + 1.5 * DAY
        assert [c.id for c in pick_cards(progress, cards, now)] == ["why", "rank", "coef"]
        assert [c.id for c in pick_cards(progress, cards, now, due_only=True)] == ["why", "rank"]
        assert [c.id for c in pick_cards(progress, cards, now, count=1)] == ["why"]


def test_quiz_answers_count_for_the_streak_and_a_reset_forgets_them(tmp_path: Path) -> None:
    with Progress(tmp_path / "p.db") as progress:
        answer_card(progress, NUMBER, "1/13", T0, "quiz")
        assert progress.overview([], now=T0).streak_days == 1
        progress.reset()
        assert progress.quiz_answers() == [] and progress.card("quiz:coef") is None


def test_a_session_records_each_answer_as_it_goes_and_asks_again_after_a_bad_one(tmp_path: Path) -> None:
    typed = iter(["twelve", "1/13", "q"])
    said: list[str] = []
    with Progress(tmp_path / "p.db") as progress:
        session = run_session(progress, [NUMBER, CHOICE], ask=lambda _hint: next(typed),
                              present=lambda *_: None, reveal=lambda *_: None, complain=said.append,
                              clock=lambda: T0)
        assert session.quit_early and [i.card.id for i in session.items] == ["coef"]
        assert said and "is not one" in said[0]
        assert [(a.card, a.correct) for a in progress.quiz_answers()] == [("coef", True)]


# -- the commands ---------------------------------------------------------------------------------

@pytest.fixture()
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "user-state"))
    monkeypatch.setenv("COLUMNS", "80")
    return tmp_path


def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=input)


def test_quiz_list_json_gives_id_topic_question_kind_and_exercise(in_tmp: Path) -> None:
    result = invoke("quiz", "list", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    coef = next(card for card in data if card["id"] == "clip-total-norm")
    assert coef["topic"] == "clipping" and coef["kind"] == "number" and coef["exercise"] == "clipping"
    assert coef["predict"] is True and "clip_grad_norm_" in coef["code"] and coef["question"]
    choice = next(card for card in data if card["kind"] == "choice")
    assert set(choice["choices"]) == {"a", "b", "c", "d"}


def test_quiz_list_in_a_pipe_is_one_line_per_card(in_tmp: Path) -> None:
    result = invoke("quiz", "list", "precision")
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and lines[0].split() == ["id", "topic", "kind", "exercise", "question"]
    assert any(line.startswith("fp16-max ") and "largest finite value" in line for line in lines)


def test_quiz_answer_json_grades_records_and_exits_0_or_1(in_tmp: Path) -> None:
    right = invoke("quiz", "answer", "fp16-max", "65,504", "--json")
    assert right.exit_code == ExitStatus.PASSED
    data = json.loads(right.stdout)
    assert data["correct"] is True and data["expected"] == 65504 and data["explanation"]
    wrong = invoke("quiz", "answer", "adam-first-step", "-0.02", "--json")  # a negative number, not an option
    assert wrong.exit_code == ExitStatus.FAILED
    data = json.loads(wrong.stdout)
    assert data["correct"] is False and data["mistake"] == "that is plain SGD's step"
    assert data["expected"] == pytest.approx(-0.01)
    words = invoke("quiz", "answer", "checkpoint-rank", "local", "rank", "0")
    assert words.exit_code == ExitStatus.FAILED and "one writer per node" in words.stdout
    assert "Practise it: grind run rank0-checkpoint" in words.stdout
    with Progress(in_tmp / "user-state" / "progress.db") as progress:
        assert [(a.card, a.correct) for a in progress.quiz_answers()] == [
            ("fp16-max", True), ("adam-first-step", False), ("checkpoint-rank", False)]


@pytest.mark.parametrize("args, message", [
    (["quiz", "answer", "clip-cof", "13"], "Unknown card 'clip-cof'. Did you mean 'clip-coef'?"),
    (["quiz", "answer", "clip-coef", "thirteen"], "card 'clip-coef' asks for a number; 'thirteen' is not one"),
    (["quiz", "answer", "exact-resume", "z"], "is a choice: answer a, b, c or d"),
    (["quiz", "answer", "clip-coef"], "Missing argument 'answer'"),
    (["quiz", "cooking"], "No quiz cards on 'cooking'"),
])
def test_bad_input_is_one_line_and_exit_2_and_records_nothing(in_tmp: Path, args: list[str], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == ExitStatus.USAGE, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (in_tmp / "user-state" / "progress.db").exists()


def test_an_answer_that_is_not_valid_utf8_is_graded_and_stored_escaped(in_tmp: Path) -> None:
    result = invoke("quiz", "answer", "zero-stage", "stage \udcff")  # a shell argument with a byte 0xff
    assert result.exit_code == ExitStatus.FAILED and "Traceback" not in result.output
    with Progress(in_tmp / "user-state" / "progress.db") as progress:
        assert progress.quiz_answers()[0].answer == "stage \\udcff"


def test_bad_input_with_json_is_a_json_error(in_tmp: Path) -> None:
    result = invoke("quiz", "answer", "clip-coef", "abc", "--json")
    assert result.exit_code == ExitStatus.USAGE
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "usage" and "is not one" in error["message"]


def test_an_interactive_quiz_grades_each_card_and_ends_with_a_summary(in_tmp: Path) -> None:
    result = invoke("quiz", "clipping", "--count", "2", input="seventeen\n17\n1/13\n")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Card 1 of 2 · clipping · predict the output" in out and ">>> clip_grad_norm_" in out
    assert "is not one" in out  # asked again, not graded
    assert "Not quite: summed norms." in out and "Answer: 13" in out and "Right." in out
    assert "Quiz over: 1 of 2 cards right." in out
    with Progress(in_tmp / "user-state" / "progress.db") as progress:
        assert [(a.card, a.answer) for a in progress.quiz_answers()] == [("clip-total-norm", "17"), ("clip-coef", "1/13")]


def test_end_of_input_ends_the_quiz_and_keeps_what_was_answered(in_tmp: Path) -> None:
    result = invoke("quiz", "precision", input="b\n")  # the first precision card is a choice
    assert result.exit_code == 0 and "ended early; every answer so far is saved" in result.output
    with Progress(in_tmp / "user-state" / "progress.db") as progress:
        assert len(progress.quiz_answers()) == 1


def test_end_of_input_at_the_first_card_still_ends_with_a_summary(in_tmp: Path) -> None:
    result = invoke("quiz", "precision", input="")  # Ctrl-D before any answer
    assert result.exit_code == 0 and "Quiz over: no card answered" in result.output, result.output
    with Progress(in_tmp / "user-state" / "progress.db") as progress:
        assert progress.quiz_answers() == []


def test_nothing_due_says_when_the_next_card_comes_back(in_tmp: Path) -> None:
    for card_id, text in (("clip-total-norm", "13"), ("clip-coef", "1/13"), ("nan-guard", "gradient clipping")):
        assert invoke("quiz", "answer", card_id, text).exit_code == 0
    result = invoke("quiz", "clipping")
    assert result.exit_code == 0 and "Nothing is due" in result.output and "in 2 days" in result.output


def test_practice_on_a_topic_only_cards_have_asks_the_cards(in_tmp: Path) -> None:
    assert invoke("init", "ws").exit_code == 0
    import os

    os.chdir(in_tmp / "ws")
    result = invoke("practice", "--topic", "precision", "--cards", "2", input="b\n1/65536\n")
    assert result.exit_code == 0, result.output
    assert "First 2 quiz cards." in result.output and "Quiz over:" in result.output
    with Progress(in_tmp / "ws" / ".grind" / "progress.db") as progress:
        assert [a.mode for a in progress.quiz_answers()] == ["practice", "practice"]


def test_progress_shows_the_quiz_beside_the_exercises(in_tmp: Path) -> None:
    invoke("quiz", "answer", "fp16-max", "65504")
    data = json.loads(invoke("progress", "--json").stdout)
    assert data["quiz"]["totals"]["answered"] == 1 and data["quiz"]["totals"]["cards"] >= 24
    assert next(c for c in data["quiz"]["cards"] if c["id"] == "fp16-max")["last_correct"] is True
    assert "exercises" in data and data["streak_days"] == 1
    text = invoke("progress").stdout
    assert "quiz topic" in text and "1 of" in text and "cards answered" in text


def test_validate_quiz_checks_the_decks(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = invoke("validate", "--quiz")
    assert result.exit_code == 0 and "quiz/optimizers.toml" in result.output and "valid" in result.output
    content = in_tmp / "course"
    (content / "exercises").mkdir(parents=True)
    _deck(content, "bad.toml", GOOD_DECK.replace('answer = 13', 'answer = 14'))
    monkeypatch.setenv("GRIND_CONTENT", str(content))
    bad = invoke("validate", "--quiz")
    assert bad.exit_code == ExitStatus.FAILED
    assert "quiz/bad.toml: card 'ok': answer 14 disagrees with its formula sqrt(169) = 13" in bad.output


def _reference(slug: str) -> object:
    """An exercise's reference solution, imported as a module (torch is imported by it)."""
    import importlib.util

    path = Catalog().get(slug).reference_path
    spec = importlib.util.spec_from_file_location(f"reference_{slug.replace('-', '_')}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_predict_cards_say_what_the_reference_solutions_really_print(shipped: list[Card]) -> None:
    """A predict card claims what an exercise's code outputs: run the exercise's own reference on
    the card's inputs and grade what it prints as the learner's answer. A card whose number
    drifted from the code (or code from the card) fails here."""
    torch = pytest.importorskip("torch")
    cards = {card.id: card for card in shipped}

    def param(values: list[float]) -> object:
        p = torch.zeros(len(values), requires_grad=True)
        p.grad = torch.tensor(values)
        return p

    clipping = _reference("clipping")
    p1, p2 = param([3.0, 4.0]), param([12.0])
    total = clipping.clip_grad_norm_([p1, p2], max_norm=1.0)  # type: ignore[attr-defined]
    assert grade(cards["clip-total-norm"], repr(float(total))).correct
    assert grade(cards["clip-coef"], repr(float(p2.grad[0]) / 12.0)).correct  # type: ignore[attr-defined]

    adam = _reference("adam")
    p = torch.zeros(1, requires_grad=True)
    opt = adam.Adam([p], lr=0.01, betas=(0.9, 0.999))  # type: ignore[attr-defined]
    p.grad = torch.tensor([2.0])
    opt.step()
    assert grade(cards["adam-first-step"], repr(p.item())).correct
    p = torch.tensor([3.0], requires_grad=True)
    opt = adam.AdamW([p], lr=0.01, weight_decay=0.1)  # type: ignore[attr-defined]
    p.grad = torch.zeros(1)
    opt.step()
    assert grade(cards["adamw-decay-step"], repr(p.item())).correct

    schedule = _reference("lr-schedule")
    assert grade(cards["lr-schedule-decay"], repr(schedule.lr_multiplier(8, 4, 12, 0.1))).correct  # type: ignore[attr-defined]

    scaling = _reference("loss-scaling")
    scaler = scaling.LossScaler()  # type: ignore[attr-defined]
    weight = param([float("inf")])

    class Optimizer:
        param_groups = [{"params": [weight]}]
        stepped = False

        def step(self) -> None:
            self.stepped = True

    optimizer = Optimizer()
    scaler.step(optimizer)
    scaler.update()
    assert not optimizer.stepped
    assert grade(cards["loss-scale-backoff"], repr(scaler.get_scale())).correct
