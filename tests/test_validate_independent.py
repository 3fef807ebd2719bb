"""`grind validate` cannot be fooled (issue 34, point 3): a reference nothing independent checks,
a worked example with two results swapped, a tolerance that pitfalls nearly pass, inputs that
change between runs and an empty golden-submissions folder are each said, in words that point at
the real culprit. Each test edits a private copy of clipping (the ``course`` fixture)."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.adequacy import (AdequacyReport, check_adequacy, golden_problems, margin_findings, pitfall_margins,
                            statement_problems)
from judge.catalog import Catalog
from judge.cli import app
from judge.trusted import reference_for
from judge.status import ExitStatus
from judge.views.screens import validation_view

runner = CliRunner()

# Worked out by hand, not by running the reference: below max_norm, clipping changes nothing.
GOLDEN = '''
GOLDEN = {
    "below_max_norm_unchanged": {"total_norm": 0.5099019513592785, "grad[0]": [0.3, 0.4], "grad[1]": [0.1]},
    "worked_example": {"total_norm": 13.0, "grad[0]": [0.23076923076923078, 0.3076923076923077],
                       "grad[1]": [0.9230769230769231]},
}
'''


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def _no_oracle_and_a_hidden_bug(course: Path) -> None:
    """A reference that multiplies unclipped gradients by 1.0001: the worked example and every
    statement number stay right, the stub still fails, every pitfall is still caught. Only an
    independent check of a case below max_norm can see it, and the oracle is gone."""
    (course / "solutions" / "clipping" / "oracle.py").unlink()
    _edit(course / "solutions" / "clipping" / "reference.py", "max=1.0)", "max=1.0001)")


def test_without_an_oracle_or_golden_values_validate_says_nothing_independent_checks_it(course: Path) -> None:
    _no_oracle_and_a_hidden_bug(course)
    result = runner.invoke(app, ["validate", "clipping"])
    assert result.exit_code == ExitStatus.FAILED, result.output
    assert "not adequate: nothing independent checks the reference" in result.output
    assert "oracle.py" in result.output and "GOLDEN" in result.output


def test_golden_values_stated_in_checks_catch_the_bug_an_oracle_would_have(course: Path) -> None:
    _no_oracle_and_a_hidden_bug(course)
    checks = course / "solutions" / "clipping" / "checks.py"
    checks.write_text(checks.read_text() + GOLDEN)
    report = check_adequacy(Catalog().get("clipping"), with_stub=False)
    assert not any("nothing independent" in p for p in report.problems), report.problems
    wrong = [p for p in report.problems if "disagrees with the golden value" in p]
    assert wrong and "case 'below_max_norm_unchanged': grad[0][0] is 0.30003, GOLDEN says 0.3" in wrong[0], wrong
    # Fixed, the same golden values make it adequate, and the report says what checked it.
    _edit(course / "solutions" / "clipping" / "reference.py", "max=1.0001)", "max=1.0)")
    report = check_adequacy(Catalog().get("clipping"), with_stub=False)
    assert report.ok, report.problems
    assert any("6 golden observation(s) of 2 case(s)" in n and "no oracle" in n for n in report.notes), report.notes


def test_golden_values_without_an_oracle_must_state_every_observation_of_each_case(course: Path) -> None:
    """Red-team review 2, v1golden: no oracle, a reference whose epsilon is added after the
    division (a 1.3e-5 relative error on every clipped gradient), and a GOLDEN table giving only
    the worked example's total_norm, which the bug leaves alone. That validated clean; the
    gradients it leaves out are named as unchecked."""
    (course / "solutions" / "clipping" / "oracle.py").unlink()
    _edit(course / "solutions" / "clipping" / "reference.py", "max_norm / (total + 1e-6)", "max_norm / total + 1e-6")
    checks = course / "solutions" / "clipping" / "checks.py"
    checks.write_text(checks.read_text() + '\nGOLDEN = {"worked_example": {"total_norm": 13.0}}\n')
    report = check_adequacy(Catalog().get("clipping"), with_stub=False)
    assert not report.ok
    assert any("GOLDEN for case 'worked_example' leaves out observation(s) grad[0], grad[1]: nothing independent "
               "checks them" in p for p in report.problems), report.problems


def test_golden_values_must_be_a_literal_table_naming_real_cases(course: Path) -> None:
    checks = course / "solutions" / "clipping" / "checks.py"
    (course / "solutions" / "clipping" / "oracle.py").unlink()
    checks.write_text(checks.read_text() + "\nGOLDEN = {'no_such_case': {'total_norm': 1.0}}\n")
    report = check_adequacy(Catalog().get("clipping"), with_stub=False)
    assert any("names case 'no_such_case', which is not one case input" in p for p in report.problems)
    checks.write_text(checks.read_text() + "\nGOLDEN = {'worked_example': {'total_norm': abs(-13.0)}}\n")
    report = check_adequacy(Catalog().get("clipping"), with_stub=False)
    assert any("GOLDEN must be a literal" in p for p in report.problems), report.problems


def test_two_results_swapped_in_the_worked_example_are_out_of_order(course: Path) -> None:
    """The set of numbers is unchanged, so the old check passed; their order is not."""
    exercise = Catalog().get("clipping")
    ref = reference_for(exercise)
    assert statement_problems(exercise, ref) == []
    _edit(exercise.statement_path, "g1 -> [0.2308, 0.3077]", "g1 -> [0.3077, 0.2308]")
    problems = statement_problems(exercise, ref)
    assert len(problems) == 1 and "worked example 'worked_example' observes grad[0]" in problems[0], problems
    assert "in another order" in problems[0]


def test_every_observation_missing_from_the_statement_is_said_not_only_the_first(course: Path) -> None:
    """Two observations' values wrong in the text: both are said. (The check once reused the
    case's list of shown observations as the message text, and stopped looking after the first.)"""
    exercise = Catalog().get("clipping")
    ref = reference_for(exercise)
    _edit(exercise.statement_path, "g1 -> [0.2308, 0.3077]     g2 -> [0.9231]     returned: 13",
          "g1 -> [0.2208, 0.3077]     g2 -> [0.9331]     returned: 13")
    problems = statement_problems(exercise, ref)
    said = [key for key in ("grad[0]", "grad[1]")
            if any(f"observes {key} = " in p and "does not show" in p for p in problems)]
    assert said == ["grad[0]", "grad[1]"], problems


def test_two_observations_results_exchanged_in_the_text_fail_validate(course: Path) -> None:
    """g1's and g2's clipped gradients exchanged: every number is still there, and each
    observation's own numbers still in order, so the order check within one observation passed.
    The statement does not name grad[0] and grad[1], so the checks' order is what says it."""
    _edit(course / "exercises" / "clipping" / "README.md", "g1 -> [0.2308, 0.3077]     g2 -> [0.9231]",
          "g1 -> [0.9231]     g2 -> [0.2308, 0.3077]")
    result = runner.invoke(app, ["validate", "clipping"])
    assert result.exit_code == ExitStatus.FAILED, result.output
    [line] = [line for line in result.output.splitlines() if "swapped" in line]
    assert ("worked example 'worked_example' observes grad[0] = 0.230769, 0.307692 and then grad[1] = 0.923077, "
            "but the statement shows the value(s) of grad[1] before those of grad[0]") in line, line


# (exercise, the statement's lines showing two observations, the same lines with their values
# exchanged, the two observations as the message names them)
SWAPS = [
    ("quadratic-stability", "max stable lr         0.02\nmomentum effective lr 0.1",
     "max stable lr         0.1\nmomentum effective lr 0.02", ("max stable lr = 0.02", "momentum effective lr = 0.1")),
    ("update-ratio", "loss               2.303   (2.302585): x is orthogonal to [3, 4], so the ten logits are all 0\n"
     "uniform_loss       2.303   (2.302585)\ngrad_norm          4.743   (4.743416)",
     "loss               4.743   (4.743416): x is orthogonal to [3, 4], so the ten logits are all 0\n"
     "uniform_loss       2.303   (2.302585)\ngrad_norm          2.303   (2.302585)",
     ("loss = 2.30259", "grad norm = 4.74342")),
    ("sharded-clip", "rank 0: grads -> [0.2308, 0.3077], total_norm = 13\nrank 1: grads -> [0.9231],",
     "rank 0: grads -> [0.9231], total_norm = 13\nrank 1: grads -> [0.2308, 0.3077],",
     ("rank 0: grads = 0.230769, 0.307692", "rank 1: grads = 0.923077")),
    ("no-sync-accumulation", "**gradient all-reduces = 1**,\n**all-reduces under no_sync = 0**",
     "**gradient all-reduces = 0**,\n**all-reduces under no_sync = 1**",
     ("rank 0: gradient all-reduces = 1", "rank 0: all-reduces under no_sync = 0")),
]


@pytest.mark.parametrize("slug, shown, swapped, named", SWAPS, ids=[s[0] for s in SWAPS])
def test_a_value_written_beside_another_observations_name_is_a_swap(tmp_path: Path, slug: str, shown: str,
                                                                    swapped: str, named: tuple[str, str]) -> None:
    """Where the statement writes the observations' names ("max stable lr 0.02"), each one's
    value must stand beside its own name: two exchanged are named, both, on one line. Only the
    statement is edited, on a copy of the real exercise."""
    exercise = Catalog().get(slug)
    ref = reference_for(exercise)
    copy = tmp_path / slug
    shutil.copytree(exercise.exercise_dir, copy)
    _edit(copy / "README.md", shown, swapped)
    problems = statement_problems(dataclasses.replace(exercise, exercise_dir=copy), ref)
    (first, value), (second, _) = (n.split(" = ") for n in named)
    assert problems and (f"worked example 'worked_example' observes {first} = {value} and {named[1]}, but the "
                         f"statement writes the value(s) of {second} beside '{first}': two results swapped between "
                         "observations") in problems[0], problems


@pytest.mark.parametrize("slug", Catalog().slugs())
def test_every_real_statement_shows_each_observation_beside_its_own_name(slug: str) -> None:
    """No false alarm: the courses's statements write their numbers in many ways (tables whose
    columns interleave observations, prose, a name shared with an input, "rank 0: ..." names
    written once for every rank), and each passes as written."""
    exercise = Catalog().get(slug)
    assert statement_problems(exercise, reference_for(exercise)) == []


def _statement_edited(tmp_path: Path, slug: str, shown: str, rewritten: str) -> list[str]:
    """statement_problems of a copy of the real exercise whose statement says ``rewritten``
    where it said ``shown``; the reference is the real one."""
    exercise = Catalog().get(slug)
    copy = tmp_path / slug
    shutil.copytree(exercise.exercise_dir, copy)
    _edit(copy / "README.md", shown, rewritten)
    return statement_problems(dataclasses.replace(exercise, exercise_dir=copy), reference_for(exercise))


QUADRATIC = "lambda_max            100      the steep direction\nmax stable lr         0.02\nmomentum effective lr 0.1"
CLIPPING = "```\ntotal norm: 13\ng1 -> [0.2308, 0.3077]     g2 -> [0.9231]     returned: 13\n```"
# (exercise, the statement's lines, the same results written another, still correct, way)
RESTYLED = [
    ("quadratic-stability", QUADRATIC, "100  = lambda_max (the steep direction)\n0.02 = max stable lr\n0.1  = momentum effective lr"),
    ("clipping", "g1 -> [0.2308, 0.3077]     g2 -> [0.9231]", "g1 -> [3/13, 4/13]     g2 -> [12/13]"),
    ("quadratic-stability", "max stable lr         0.02", "max stable lr         1/50"),
    ("clipping", CLIPPING, "| total norm | g1 | g2 |\n|---|---|---|\n| 13 | [0.2308, 0.3077] | [0.9231] |"),
]


@pytest.mark.parametrize("slug, shown, restyled", RESTYLED, ids=["values-then-names", "fractions", "a-fraction-beside-its-name",
                                                                "a-table-then-total-norm-1-in-prose"])
def test_a_correct_statement_written_in_another_style_passes(tmp_path: Path, slug: str, shown: str,
                                                             restyled: str) -> None:
    """No false alarm on a restyled but correct worked example: a line "0.02 = max stable lr"
    does not label the next line's number; "3/13" is 0.230769...; a markdown table whose header
    names total norm, followed by the statement's sentence "the clipped gradients have total norm
    1", is not a wrong total norm (a name in a sentence may name another quantity)."""
    assert _statement_edited(tmp_path, slug, shown, restyled) == []


# (exercise, the statement's line, the line with a wrong number beside the name, what is said)
MISLABELLED = [
    ("quadratic-stability", "max stable lr         0.02", "max stable lr         0.01",
     "observes max stable lr = 0.02, but the statement writes 0.01 beside 'max stable lr'"),
    ("clipping", "total norm: 13", "total norm: 12", "observes total_norm = 13, but the statement writes 12 beside 'total_norm'"),
]


@pytest.mark.parametrize("slug, shown, wrong, said", MISLABELLED, ids=["value-elsewhere-in-prose", "value-later-in-the-block"])
def test_a_wrong_number_heading_a_line_beside_the_name_fails_even_if_the_right_one_is_further_on(
        tmp_path: Path, slug: str, shown: str, wrong: str, said: str) -> None:
    """A typo beside the name: the right number is still in the text (quadratic-stability's prose
    "just below 0.02"; clipping's "returned: 13" on the next line), and no other observation's
    number stands beside the name, so neither the swap check nor the every-number check sees it.
    The number right after a name heading its line must be that observation's first value."""
    problems = _statement_edited(tmp_path, slug, shown, wrong)
    assert len(problems) == 1 and said in problems[0], problems


def test_each_pitfall_margin_is_reported_and_a_near_one_is_a_warning(course: Path) -> None:
    """The tolerance scaled up until the least-caught pitfall is 3 tolerances from the reference:
    still caught (no problem), but a warning names it, its case and the 10x rule."""
    exercise = Catalog().get("clipping")
    margins = pitfall_margins(exercise, reference_for(exercise))
    assert len(margins) == 10 and min(m for m, _ in margins.values()) > 10  # clipping as shipped: no warning
    slug, (least, case) = min(margins.items(), key=lambda item: item[1][0])
    factor = least / 3
    manifest = exercise.exercise_dir / "exercise.toml"
    text = manifest.read_text()
    for rtol, atol in re.findall(r"rtol = ([\d.e-]+), atol = ([\d.e-]+)", text):
        text = text.replace(f"rtol = {rtol}, atol = {atol}",
                            f"rtol = {float(rtol) * factor!r}, atol = {float(atol) * factor!r}")
    manifest.write_text(text)
    exercise = Catalog().get("clipping")
    report = AdequacyReport("clipping")
    margin_findings(exercise, reference_for(exercise), report)
    assert abs(report.margins[slug] - 3) < 0.01, report.margins
    assert any(f"pitfall '{slug}' is caught by at most 3 tolerances (case '{case}')" in w and "10x looser" in w
               for w in report.warnings), report.warnings
    assert report.ok  # a warning, never a failure
    lines = validation_view([report]).lines
    assert any(line.startswith("clipping: pitfall margins") and f"{slug} 3x" in line for line in lines), lines
    assert any(line.startswith("clipping: warning: pitfall") for line in lines), lines


def test_inputs_that_change_between_runs_are_blamed_on_the_case_not_the_reference(course: Path) -> None:
    checks = course / "solutions" / "clipping" / "checks.py"
    _edit(checks, "gen = torch.Generator().manual_seed(1000 * size + seed)", "gen = torch.Generator(); gen.seed()")
    report = check_adequacy(Catalog().get("clipping"), with_stub=False, determinism=True)
    moving = [p for p in report.problems if "inputs differ between runs" in p]
    assert moving and moving[0].startswith("case 'random[") and "seed" in moving[0], report.problems
    assert not any("the reference is not deterministic" in p for p in report.problems), report.problems
    # The oracle, compared on other inputs, fails too: the same cause, said once (red-team v4nondet).
    assert not any("does not pass" in p for p in report.problems), report.problems


def test_an_empty_golden_folder_fails_validate(course: Path) -> None:
    """`grind new` makes tests/submissions/<slug>/ with only its README; left so, validate fails
    (an author who never checked a verdict by hand has not finished). A course without
    tests/submissions at all (an installed grind) is not asked for any."""
    exercise = Catalog().get("clipping")
    folder = course / "tests" / "submissions" / "clipping"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("# Golden submissions\n")
    [problem] = golden_problems(exercise, folder)
    assert "no golden submissions" in problem and "# expect: passed" in problem
    result = runner.invoke(app, ["validate", "clipping"])
    assert result.exit_code == ExitStatus.FAILED and "no golden submissions" in result.output, result.output


def test_a_golden_folder_without_a_correct_answer_fails_validate(course: Path) -> None:
    """Red-team review 2, v5bstub: a folder holding only the stub, marked '# expect: failed',
    passed, though no verdict a correct student gets was ever checked."""
    exercise = Catalog().get("clipping")
    folder = course / "tests" / "submissions" / "clipping"
    folder.mkdir(parents=True)
    (folder / "stub_copy.py").write_text("# expect: failed\n" + exercise.stub_path.read_text())
    problems = golden_problems(exercise, folder)
    assert any("no golden submission expects 'passed'" in p for p in problems), problems


def test_a_weight_for_a_case_the_checks_do_not_have_fails_validate(course: Path) -> None:
    """A typo in [marks] weights would leave that case worth 1 in every class's marks: validate
    says so, as grind grade does before it grades anyone."""
    toml = course / "exercises" / "clipping" / "exercise.toml"
    toml.write_text(toml.read_text() + "\n[marks]\nweights = {worked_exampel = 2}\n")
    result = runner.invoke(app, ["validate", "clipping"])
    assert result.exit_code == ExitStatus.FAILED, result.output
    assert "weights names case 'worked_exampel'" in result.output, result.output
