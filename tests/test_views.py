"""Each screen is one view model drawn twice: the plain and the rich rendering carry the same facts.

For every kind of screen, a model is built from hand-made core data (no grading: cheap), drawn
plain (not a terminal) and with rich (a terminal, no colour, wide enough not to cut), and every
string the model holds must be found in both outputs. A fact added to one renderer and not the
other, or worded differently in one, fails here.
"""

from __future__ import annotations

from dataclasses import replace

import io
import re
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from judge.catalog import Catalog
from judge.models import CheckResult, CheckStatus, Diagnosis, Status, Verdict
from judge.practice import Recorded, Sitting
from judge.progress import Attempt, ExerciseProgress, Overview
from judge.render import WatchView, plain, show, styled
from judge.scheduling import Review
from judge.views import screens, verdict
from judge.views.screens import (
    TextView,
    Tone,
    class_view,
    doctor_view,
    hint_view,
    list_view,
    practice_summary_view,
    progress_view,
    statement_view,
    validation_view,
    watch_after_verdict,
    watch_intro,
)
from judge.views.verdict import HintInfo, verdict_view

NOW = 1_700_000_000.0
DAY = 86400.0


def facts(view: Any) -> list[str]:
    """Every string a model holds (enums and flags are how to draw it, not what it says)."""
    if view is None or isinstance(view, (Enum, bool)):
        return []
    if isinstance(view, str):
        return [view] if view.strip() else []
    if isinstance(view, int):
        return [str(view)]
    if hasattr(view, "_fields"):  # a model
        # Markdown source is not shown as it is written: the statement test names its rendered words;
        # reserved_rows is how much room to leave, not something said.
        return [f for name in view._fields if name not in ("markdown", "reserved_rows")
                for f in facts(getattr(view, name))]
    if isinstance(view, (list, tuple)):
        return [f for item in view for f in facts(item)]
    if isinstance(view, float):
        return []  # series values for the plot; the rows around the first difference are strings
    raise TypeError(type(view))


def _flat(text: str) -> str:
    """Text as a reader sees it: no ANSI codes, no box drawing, one space between words."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    text = re.sub("[\u2500-\u257f]", " ", text)
    return " ".join(text.split())


def both(view: Any) -> tuple[str, str]:
    plain_out, rich_out = io.StringIO(), io.StringIO()
    show(Console(file=plain_out, width=250), view)
    # a tall terminal: on a short one a verdict leaves out its plot and cuts explanations to fit
    show(Console(file=rich_out, width=250, height=500, force_terminal=True, color_system=None), view)
    return plain_out.getvalue(), rich_out.getvalue()


def assert_same_facts(view: Any, extra: list[str] = ()) -> tuple[str, str]:  # type: ignore[assignment]
    plain_text, rich_text = both(view)
    assert "\x1b[" not in plain_text and "╭" not in plain_text
    found = facts(view) + list(extra)
    assert found
    for fact in found:
        assert _flat(fact) in _flat(plain_text), f"plain lacks {fact!r}"
        assert _flat(fact) in _flat(rich_text), f"rich lacks {fact!r}"
    return plain_text, rich_text


@pytest.fixture(scope="module")
def clipping() -> Any:
    return Catalog().get("clipping")


def failed_verdict() -> Verdict:
    checks = [CheckResult("worked_example", "example", CheckStatus.FAILED, "grad[0] differs",
                          input={"max_norm": 1.0}, expected=[0.25, 0.5], got=[0.5, 1.0], observation="grad[0]",
                          max_abs_err=0.5, max_rel_err=1.0,
                          series={"expected": [1.0, 1.0, 0.5, 0.5], "got": [1.0, 1.0, 1.0, 1.0], "first_step": 1}),
              CheckResult("zero_grad", "edge", CheckStatus.PASSED),
              CheckResult("stub_a", "random", CheckStatus.ERROR, "NotImplementedError: todo"),
              CheckResult("stub_b", "random", CheckStatus.ERROR, "NotImplementedError: todo"),
              CheckResult("stub_c", "random", CheckStatus.ERROR, "NotImplementedError: todo"),
              CheckResult("later", "edge", CheckStatus.NOT_RUN)]
    first = Diagnosis("per-tensor", "per-tensor clipping", "You clipped each tensor alone.", "h",
                      explains="worked_example: grad[0]", complete=False)
    second = Diagnosis("np", "numpy's norm", "numpy flattens.", "h", library="numpy", convention=True)
    return Verdict("clipping", Status.FAILED, checks, "1 of 6 checks passed", diagnosis=first,
                   diagnoses=[first, second], unexplained="stub_a: grad[1]", stdout="step 1\n",
                   stderr="warning: slow\n", notices=["Graded the untouched stub."])


def test_verdict_plain_and_rich_carry_the_same_facts(clipping: Any) -> None:
    """Every check line (with the checks failing alike folded into one), the first failure's values, the steps around
    the first difference, every diagnosis, the output, notices, footer and the status word."""
    view = verdict_view(failed_verdict(), clipping, HintInfo(1, 5), lead=["No grind workspace here."])
    assert view.series is not None and any(first for *_, first in view.series.rows)
    assert any(row.name == "3 checks" and "stub_a, stub_b, stub_c" in row.message for row in view.checks)
    plain_text, rich_text = assert_same_facts(view, extra=["FAILED", "Looks like numpy's convention: numpy's norm"])


def test_a_verdict_with_no_fitting_mistake_says_which_came_closest(clipping: Any) -> None:
    """No name, but the honest sentence: no known mistake matches, and the closest one's value
    where the learner's differs. Plain and rich show the same words."""
    verdict = failed_verdict()
    verdict.diagnosis, verdict.diagnoses, verdict.unexplained = None, [], ""
    verdict.closest = ("No known mistake matches your answer; the closest is per-tensor clipping (per-tensor), "
                       "which would give 0.5 where you gave 0.47 (worked_example, grad[0], index 0; expected 0.25).")
    view = verdict_view(verdict, clipping, HintInfo(1, 5))
    assert [(b.label, b.name) for b in view.diagnoses] == [("Diagnosis", "no known mistake matches")]
    assert_same_facts(view, extra=["which would give 0.5 where you gave 0.47"])


def test_a_passed_verdict_plain_and_rich_agree(clipping: Any) -> None:
    verdict = Verdict("clipping", Status.PASSED, [CheckResult("worked_example", "example", CheckStatus.PASSED)],
                      "all 1 checks passed")
    assert_same_facts(verdict_view(verdict, clipping, None), extra=["PASSED"])


def test_list_and_progress_plain_and_rich_agree(clipping: Any) -> None:
    adam = Catalog().get("adam")
    assert_same_facts(list_view([(clipping, "passed"), (adam, "new")], numbered=True))
    overview = Overview([ExerciseProgress("clipping", "passed", 3, 420.0, None, NOW - DAY, NOW + 2 * DAY, 1),
                         ExerciseProgress("adam", "attempted", 1, None, None, NOW, NOW - 60, 0)], NOW, 3)
    assert_same_facts(progress_view(overview))


def test_text_statement_and_practice_summary_plain_and_rich_agree(clipping: Any) -> None:
    assert_same_facts(hint_view(2, 5, "Compute one norm over all the gradients.", last=False))
    assert_same_facts(TextView("Reference solution", "def clip(grads):\n    return grads", syntax=True))
    view = statement_view("Gradient clipping", "Clip the *global* norm.\n\n- one norm\n- then scale")
    assert view.show_title
    assert_same_facts(view, extra=["Clip the global norm.", "one norm", "then scale"])
    sittings = [Sitting(clipping, Path("clipping.py"), "practice", NOW - 300, attempts=2, passed_at=NOW - 10,
                        time_to_pass=290.0, hints_used=1, review=Review("clipping", "good", NOW + 3 * DAY)),
                Sitting(Catalog().get("adam"), Path("adam.py"), "practice", NOW - 200)]
    assert_same_facts(practice_summary_view(sittings, NOW))


def test_doctor_validation_and_class_plain_and_rich_agree() -> None:
    info = {"level": "namespaces", "grading_allowed": True, "layers": ["rlimits", "namespaces"],
            "child_user": "nobody", "torch": None, "python": "/usr/bin/python3",
            "torch_advice": "pip install torch", "notes": ["landlock is unavailable"],
            "guarantees": {"rlimits": ["limits time and memory"], "namespaces": ["no network"]},
            "strengthen": "install bubblewrap"}
    assert_same_facts(doctor_view(info), extra=["Isolation level: namespaces"])

    class Corpus:
        def share_text(self) -> str:
            return "18/19"

        def wrong_name_text(self) -> str:
            return "1/19 (5.3%)"

        def summary(self) -> str:
            return "18 of 19 named right"

    class Report:
        def __init__(self, name: str, problems: list[str], corpus: Any = None) -> None:
            self.exercise, self.cases, self.caught, self.pitfalls = name, 12, 3, 4
            self.seconds, self.problems, self.ok, self.corpus = 2.25, problems, not problems, corpus

    assert_same_facts(validation_view([Report("clipping", [], Corpus()),
                                       Report("adam", ["pitfall 'x' passes every case"])]))
    rows = [{"student": "ann", "verdict": {"status": "passed", "checks": [{"name": f"c{i}", "status": "passed"}
                                                                            for i in range(3)]}},
            {"student": "bob", "verdict": {"status": "failed", "pitfall": {"name": "per-tensor clipping"},
                                           "checks": [{"name": "c0", "status": "passed"},
                                                      {"name": "c1", "status": "failed"}]}},
            {"student": "cat", "verdict": {"status": "error", "checks": [],
                                           "message": "SyntaxError at line 1: invalid syntax\n    def f(:"}}]
    view = class_view(rows)
    assert_same_facts(view)
    # A submission that could not be graded says why in the table, not only in the CSV.
    assert view.rows[2].note == "SyntaxError at line 1: invalid syntax"
    assert view.rows[0].note == ""


def test_watch_lines_are_the_same_on_a_terminal_and_off_it(clipping: Any) -> None:
    """The watch loop's words (the heading, what to do, the standing, the next review) are the
    model's in both; only the keys line differs, by design: a terminal has them in its status line."""
    sitting = Sitting(clipping, Path("clipping.py"), "watch", NOW, notes=["Outside a workspace."])
    passed = Verdict("clipping", Status.PASSED, [CheckResult("worked_example", "example", CheckStatus.PASSED)], "ok")
    attempt = Attempt("clipping", NOW - 2, NOW, "passed", 1, 1, None, 0, "watch", "x", NOW)
    recorded = Recorded(attempt, Review("clipping", "good", NOW + 2 * DAY))
    heading, intro = watch_intro(sitting, False, (1, 6), None)
    after = watch_after_verdict(sitting, passed, recorded, (2, 6))
    assert {line.tone for line in after} >= {Tone.STRONG, Tone.INFO, Tone.DIM}
    outputs = []
    for terminal in (False, True):
        out = io.StringIO()
        with WatchView(Console(file=out, width=250, force_terminal=terminal, color_system=None)) as view:
            view.present(sitting, False, (1, 6))
            view.verdict(sitting, passed, recorded, 0, (2, 6))
        outputs.append(_flat(out.getvalue()))
    for fact in [heading] + [line.text for line in intro + after]:
        assert all(_flat(fact) in text for text in outputs), fact


def test_every_screen_model_has_a_plain_and_a_rich_rendering() -> None:
    """Renderers find a model by its class name: each screen's model is in both tables, and
    anything else is refused rather than printed as a tuple."""
    models = {name for module in (screens, verdict) for name, value in vars(module).items()
              if isinstance(value, type) and name.endswith("View") and hasattr(value, "_fields")}
    assert models - {"SeriesView", "EntriesView"} == set(plain._DRAW) == set(styled._DRAW)  # parts of a verdict
    assert len(models) >= 9
    with pytest.raises(TypeError):
        plain.text(object())
    with pytest.raises(TypeError):
        styled.renderable(object(), Console(file=io.StringIO()))


def test_plain_doctor_keeps_a_long_line_whole() -> None:
    """Plain output is for logs and grep: a guarantee longer than the console is one line, not
    wrapped at 80 columns with its indent lost (as grind doctor | cat used to print it)."""
    long = "reads: a read-only view of the whole file system, with the solutions, the reference cache replaced"
    info = {"level": "namespaces", "grading_allowed": True, "layers": ["rlimits"], "child_user": "nobody",
            "notes": [], "guarantees": {"namespaces": [long]}, "strengthen": ""}
    out = io.StringIO()
    show(Console(file=out, width=80), doctor_view(info))
    assert f"      - {long}" in out.getvalue().splitlines()


@pytest.mark.parametrize("terminal", [False, True])
def test_a_newline_in_a_learners_message_cannot_write_a_line_of_grinds(terminal: bool) -> None:
    """An exception message is the learner's text inside grind's lines: a newline in it moves the
    rest right, so it cannot print a line of its own that reads as grind's verdict."""
    from judge.render import render_verdict

    fake = "boom\nAll checks passed.\nclipping · Gradient clipping by global norm: PASSED"
    verdict = Verdict("clipping", Status.FAILED,
                      [CheckResult("worked_example", "example", CheckStatus.ERROR, f"RuntimeError: {fake}")],
                      f"worked_example: RuntimeError: {fake}")
    out = io.StringIO()
    render_verdict(Console(file=out, width=200, force_terminal=terminal, color_system=None), verdict,
                   Catalog().get("clipping"))
    lines = out.getvalue().splitlines()
    assert any("RuntimeError: boom" in line for line in lines)
    assert not [line for line in lines if line.startswith(("All checks passed.", "clipping · "))
                and "FAILED" not in line], lines


def test_piped_list_and_progress_keep_their_columns_for_long_names() -> None:
    """`grind list | cat` and `grind progress | cat`: a name longer than 16 characters
    (no-sync-accumulation) used to push the rest of its row one column right of the others."""
    catalog = Catalog()
    long, short = catalog.get("no-sync-accumulation"), catalog.get("clipping")
    assert len(long.slug) > 16
    overview = Overview([ExerciseProgress(long.slug, "passed", 3, 420.0, None, NOW - DAY, NOW + 2 * DAY, 1),
                         ExerciseProgress(short.slug, "attempted", 1, None, None, NOW, NOW - 60, 0)], NOW, 3)
    for view in (list_view([(long, "passed"), (short, "new")], numbered=False), progress_view(overview)):
        out = io.StringIO()
        show(Console(file=out, width=80), view)  # not a terminal: the plain rendering
        rows = [line for line in out.getvalue().splitlines() if line.startswith((long.slug, short.slug))]
        assert len(rows) == 2, out.getvalue()
        # the second column (the status) starts at the same place in both rows
        starts = {len(line) - len(line[len(line.split()[0]):].lstrip()) for line in rows}
        assert len(starts) == 1, out.getvalue()


def test_watch_redraws_each_verdict_on_a_terminal_and_appends_in_plain(clipping: Any) -> None:
    """As rustlings does: on a terminal every re-grade clears the screen and redraws the heading
    and the new verdict (the old one does not scroll up above it); plain output only appends."""
    sitting = Sitting(clipping, Path("clipping.py"), "watch", NOW)
    failed = failed_verdict()
    attempt = Attempt("clipping", NOW - 2, NOW, "failed", 1, 1, None, 0, "watch", "x", NOW)
    recorded = Recorded(attempt, None)
    for terminal in (True, False):
        out = io.StringIO()
        with WatchView(Console(file=out, width=100, force_terminal=terminal, color_system=None)) as view:
            view.present(sitting, False, None)
            view.verdict(sitting, failed, recorded, 0)
            view.verdict(sitting, failed, recorded, 0)
        text = out.getvalue()
        clears = text.count("\x1b[2J")
        assert clears == (2 if terminal else 0), text[:300]
        if terminal:  # after the last clear: the heading, then one verdict
            last = text[text.rindex("\x1b[2J"):]
            assert "clipping" in last and _flat(last).count("First failure") == 1


def _colour_verdict_rows(view: Any, height: int) -> list[str]:
    out = io.StringIO()
    show(Console(file=out, width=80, height=height, force_terminal=True, color_system="truecolor"), view)
    return re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()).splitlines()


def test_a_plot_that_would_push_the_verdict_off_a_24_row_screen_is_left_out(clipping: Any) -> None:
    """At 80x24 the verdict's head (title, counts, first failure and its name) must stay on
    screen: a 17-row plot that would make the verdict taller than the screen (less the prompt's
    row) gives way to one line saying where to see it; a tall screen still draws it."""
    wrong = failed_verdict()
    wrong.diagnosis, wrong.diagnoses, wrong.unexplained, wrong.stdout, wrong.stderr = None, [], "", "", ""
    view = verdict_view(wrong, clipping, HintInfo(1, 5), width=80)
    short = _colour_verdict_rows(view, 24)
    assert len(short) <= 23
    assert any("First failure: worked_example" in row for row in short)
    assert any("Plot left out" in row and "taller terminal" in row for row in short)
    assert not any("reference (green line)" in row for row in short)
    tall = _colour_verdict_rows(view, 100)
    assert any("reference (green line)" in row for row in tall) and len(tall) > 24


def test_a_verdict_one_row_too_tall_drops_the_blank_rows_above_its_diagnoses(clipping: Any) -> None:
    """A wrong clipping with a note was 24 rows at 80x24, pushing its title off under the prompt:
    on a short screen the blank rows above "Diagnosis:" go first; a tall screen keeps them."""
    wrong = failed_verdict()
    wrong.checks[0].series = None
    view = verdict_view(wrong, clipping, HintInfo(1, 5), width=80)

    def blank_above_diagnosis(rows: list[str]) -> bool:
        at = next(i for i, row in enumerate(rows) if "Diagnosis:" in row)
        return rows[at - 1].strip("│ ") == ""

    assert blank_above_diagnosis(_colour_verdict_rows(view, 100))
    short = _colour_verdict_rows(view, len(_colour_verdict_rows(view, 100)))  # one row too tall with the prompt
    assert not blank_above_diagnosis(short)


def test_a_long_explanation_is_cut_to_its_gist_before_the_title_leaves_a_short_screen(clipping: Any) -> None:
    """ddp-token-loss's explanation of the libraries that make its mistake took ten rows and
    pushed the title and the counts off 80x24. On a short screen each explanation is cut to its
    first sentence, then to its first paragraph: the title, the first failure and the mistake's
    name stay on screen; a tall screen keeps every word."""
    wrong = failed_verdict()
    wrong.checks[0].series = None
    long = ("This is the first sentence of a long explanation. " + "More words that explain it again. " * 12).strip()
    wrong.diagnosis = replace(wrong.diagnosis, explanation=long)
    wrong.diagnoses = [wrong.diagnosis]
    view = verdict_view(wrong, clipping, HintInfo(1, 5), width=80)
    tall = _colour_verdict_rows(view, 200)
    assert any("More words" in row for row in tall)
    height = len(tall) - 4
    short = _colour_verdict_rows(view, height)
    assert len(short) <= height - 1, len(short)
    text = "\n".join(short)
    assert "clipping" in short[0] and "First failure" in text and wrong.diagnosis.name in text
    assert "This is the first sentence of a long explanation." in text and "More words" not in text


def test_the_rows_watch_keeps_for_its_heading_and_standing_count_against_the_plot(clipping: Any) -> None:
    """In grind watch the verdict shares the screen with the exercise's heading above and the
    standing below: a plot that fits alone but not with them is left out there too."""
    wrong = failed_verdict()
    wrong.diagnosis, wrong.diagnoses, wrong.unexplained, wrong.stdout, wrong.stderr = None, [], "", "", ""
    view = verdict_view(wrong, clipping, HintInfo(1, 5), width=80)
    height = len(_colour_verdict_rows(view, 200)) + 1  # just tall enough with the prompt's row
    assert any("reference (green line)" in row for row in _colour_verdict_rows(view, height))
    kept = _colour_verdict_rows(view._replace(reserved_rows=4), height)
    assert any("Plot left out" in row for row in kept) and len(kept) <= height - 1 - 4
