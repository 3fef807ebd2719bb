"""The rendered report reads well at 80 columns, honours plain output, and says what matters."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from judge.catalog import Catalog
from judge.grade import grade
from judge.render import HintInfo, render_verdict

from .conftest import SUBMISSIONS, warm_worker


@pytest.fixture(scope="module")
def per_tensor_verdict():  # type: ignore[no-untyped-def]
    exercise = Catalog().get("clipping")
    return exercise, grade(exercise, SUBMISSIONS / "clipping" / "pitfall_per_tensor.py", worker=warm_worker())


def _render(verdict, exercise, terminal: bool) -> str:  # type: ignore[no-untyped-def]
    console = Console(file=io.StringIO(), width=80, force_terminal=terminal, color_system=None)
    render_verdict(console, verdict, exercise, HintInfo(0, len(exercise.hints)))
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_panel_fits_80_columns_and_shows_failure_diagnosis_and_hint(per_tensor_verdict) -> None:  # type: ignore[no-untyped-def]
    """The terminal panel: the check lines, expected vs got of the smallest failing input, the
    pitfall's name and explanation, the next hint, and no line wider than 80 columns."""
    exercise, verdict = per_tensor_verdict
    text = _render(verdict, exercise, terminal=True)
    assert max(len(line) for line in text.splitlines()) <= 80
    shown = verdict.smallest_failure
    for needle in ("✘ ", "checks passed", f"First failure: {shown.name}", "Expected grad[0]:", "Got grad[0]:",
                   "Diagnosis: per-tensor clipping", "one norm over all", "grind hint clipping shows hint 1 of 5"):
        assert needle in text, needle


def test_plain_output_has_no_boxes_or_escape_codes(per_tensor_verdict) -> None:  # type: ignore[no-untyped-def]
    """When stdout is not a terminal: plain lines, still with the failure and the diagnosis."""
    exercise, verdict = per_tensor_verdict
    text = _render(verdict, exercise, terminal=False)
    assert "╭" not in text and "\x1b[" not in text
    assert "FAIL  " in text and "worked_example" in text
    assert "Diagnosis: per-tensor clipping" in text


def test_no_color_env_is_honoured(per_tensor_verdict, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    exercise, verdict = per_tensor_verdict
    monkeypatch.setenv("NO_COLOR", "1")
    console = Console(file=io.StringIO(), width=80, force_terminal=True)
    render_verdict(console, verdict, exercise, None)
    assert "\x1b[3" not in console.file.getvalue()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def schedule_verdict():  # type: ignore[no-untyped-def]
    exercise = Catalog().get("lr-schedule")
    return exercise, grade(exercise, SUBMISSIONS / "lr-schedule" / "pitfall_no_clamp.py", worker=warm_worker())


def test_a_diverging_sequence_is_plotted_in_colour(schedule_verdict) -> None:  # type: ignore[no-untyped-def]
    """A failing LR curve is drawn against the reference's, with a legend, within 80 columns."""
    exercise, verdict = schedule_verdict
    console = Console(file=io.StringIO(), width=80, height=60, force_terminal=True,  # room for the plot
                      color_system="standard")
    render_verdict(console, verdict, exercise, None)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    plain = Text.from_ansi(text).plain
    assert "reference" in plain and "yours" in plain and "step" in plain
    assert any(ch in plain for ch in "▞▚▄▀")  # the curves themselves
    assert max(len(line) for line in plain.splitlines()) <= 80


@pytest.mark.parametrize("colour", [False, True])
def test_without_colour_the_sequence_is_a_table_of_steps(schedule_verdict, colour: bool,  # type: ignore[no-untyped-def]
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR or plain output: the steps around the first difference, expected vs yours."""
    exercise, verdict = schedule_verdict
    if colour:
        monkeypatch.setenv("NO_COLOR", "1")
    text = _render(verdict, exercise, terminal=colour)
    assert "around the first difference" in text
    first = verdict.first_failure.series
    step = next(i for i, (e, g) in enumerate(zip(first["expected"], first["got"])) if abs(e - g) > 1e-9)
    assert str(step) in text
