"""A failure a learner can reproduce: shown whole and exact, numbered as the statement numbers
steps, entries named by parameter, and ``grind run --repro`` as a script that re-runs it.

Every test here works on real verdicts of independently written corpus submissions, graded by
the test process's warm worker (conftest.warm_worker) unless the test runs grind itself: the
script is the subject here, not the cold path."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

from judge.catalog import Catalog
from judge.cli import app
from judge.compare import compare
from judge.grade import grade
from judge.models import Tolerance, Verdict
from judge.render import render_verdict
from judge.repro import ReproUnavailable, repro_script

from .conftest import warm_worker

CORPUS = Path(__file__).parent / "corpus"
runner = CliRunner()


def plain(verdict: Verdict, slug: str) -> str:
    out = io.StringIO()
    render_verdict(Console(file=out, width=100), verdict, Catalog().get(slug))
    return out.getvalue()


def graded(slug: str, name: str) -> Verdict:
    return grade(Catalog().get(slug), CORPUS / slug / name, worker=warm_worker())


def f32(value: float) -> float:
    """The shortest decimal of a float32, as a Python float."""
    return float(str(np.float32(value)))


def test_a_large_power_of_two_reads_exactly_and_the_input_is_whole() -> None:
    """apex's 2**24 cap: the scale sequence must read 8388608 ... 268435456, not 8.38861e+06,
    the input must not be cut mid-number, and the table numbers steps from 0 as the statement does."""
    verdict = graded("loss-scaling", "apex_cap_lookalike.py")
    failure = verdict.smallest_failure  # the one the verdict shows
    assert failure is not None and failure.observation == "scale per step"
    assert failure.input["scaler_kwargs"]["init_scale"] == 2.0**22
    assert failure.expected == [2.0**k for k in range(23, 29)]
    assert failure.got[:2] == [2.0**23, 2.0**24] and failure.got[2:] == [2.0**24] * 4
    text = plain(verdict, "loss-scaling")
    assert "4194304" in text and "268435456" in text  # whole numbers read as integers
    lines = {line.split(":")[0]: line for line in text.splitlines() if line.startswith("  ")}
    # a large input is summarised by its shape (never a number cut in half), the whole is offered
    assert "items>" not in text and ("…" not in lines["  Input"] or "--repro or --json" in lines["  Input"])
    assert not re.search(r"\de[+-]\d", lines["  Input"] + lines["  Expected scale per step"])
    first = next(i for i, (e, g) in enumerate(zip(failure.expected, failure.got)) if e != g)
    assert f"    {first}: {int(failure.expected[first])} / {int(failure.got[first])}  <-" in text  # step_base 0


def test_float32_values_read_as_their_shortest_decimal() -> None:
    """Per-tensor clipping of the worked example: 3/13 in float32 reads 0.23076922, not
    0.230769 (rounded) nor 0.23076921701431274 (its float64 spelling)."""
    verdict = graded("clipping", "per_tensor_class.py")
    failure = verdict.first_failure
    assert failure is not None and failure.observation == "grad[0]"
    want = np.array([3.0, 4.0], dtype=np.float32) * (np.float32(1.0) / np.float32(13.0) / np.float32(1.0 + 1e-6))
    assert failure.expected == pytest.approx([f32(v) for v in want], rel=1e-6)
    assert all(v == f32(v) for v in failure.expected)  # each is a float32's shortest decimal
    assert failure.got == pytest.approx([0.6, 0.8], rel=1e-6) and all(v == f32(v) for v in failure.got)
    assert failure.input == {"params": [{"grad": [3.0, 4.0]}, {"grad": [12.0]}], "max_norm": 1.0,
                             "norm_type": 2.0, "pass_as": "list"}


def test_the_smallest_random_input_is_shown_whole() -> None:
    """Adam's random case scripts 60 steps of gradients: all 60 rows are shown (it used to say
    "<60 items>"), each float64 exactly."""
    verdict = graded("adam", "hf_adamw_no_correct_bias.py")
    check = next(c for c in verdict.checks if c.kind == "random" and c.status.value != "passed")
    assert len(check.input["grads"]) == 60
    assert "<" not in json.dumps(check.input)
    assert check.instance == "random[size=1,seed=0]"


def test_steps_are_numbered_as_the_statement_numbers_them() -> None:
    """adam's statement numbers steps from 1: the worked example's first row is step 1, and
    the message names the first differing row plus one, by parameter and entry."""
    verdict = graded("adam", "hf_adamw_no_correct_bias.py")
    failure = verdict.first_failure
    assert failure is not None and failure.name == "worked_example_adam"
    rows = next(i for i, (e, g) in enumerate(zip(failure.expected, failure.got)) if e != g)
    column = next(j for j, (e, g) in enumerate(zip(failure.expected[rows], failure.got[rows])) if e != g)
    assert f"first differs at step {rows + 1}, param 0[{column}]" in failure.message
    assert "numbered from 1" in Catalog().get("adam").statement_path.read_text()
    loop = next(c for c in verdict.checks if c.name == "training_loop")
    assert re.search(r"step \d+, param [01] \((weight|bias)\)\[", loop.message), loop.message


def test_lr_schedule_steps_start_at_zero_like_its_argument() -> None:
    verdict = graded("lr-schedule", "one_based_shift.py")
    failure = verdict.first_failure
    assert failure is not None and failure.series is not None and failure.series["first_step"] == 0
    first = next(i for i, (e, g) in enumerate(zip(failure.series["expected"], failure.series["got"]))
                 if abs(e - g) > 1e-9)
    assert f"first differs at step {first}:" in failure.message


def test_an_entry_of_a_flattened_observation_is_named_by_its_parameter() -> None:
    """A weight of shape [2, 3] then a bias of 3, flattened into rows: offset 7 is bias[1]."""
    entries = {"params per step": [("param 0 (weight)", [2, 3]), ("param 1 (bias)", [3])]}
    want = np.zeros((2, 9))
    have = want.copy()
    have[1, 7] = 1.0
    found = compare({"params per step": want}, {"params per step": have}, lambda a, b: Tolerance(1e-6, 1e-9),
                    step_base=1, entries=entries)
    assert found is not None and "first differs at step 2, param 1 (bias)[1]:" in found.message
    have[1, 7], have[0, 4] = 0.0, 1.0
    found = compare({"params per step": want}, {"params per step": have}, lambda a, b: Tolerance(1e-6, 1e-9),
                    step_base=1, entries=entries)
    assert found is not None and "step 1, param 0 (weight)[1, 1]:" in found.message


def _run_script(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)


def test_repro_writes_a_script_that_reproduces_the_failure_and_passes_once_fixed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    assert runner.invoke(app, ["init", "ws"]).exit_code == 0
    monkeypatch.chdir(tmp_path / "ws")
    mine = tmp_path / "ws" / "clipping" / "clipping.py"
    shutil.copy(CORPUS / "clipping" / "per_tensor_class.py", mine)
    result = runner.invoke(app, ["run", "clipping", "--repro"])
    assert result.exit_code != 0
    script = mine.parent / "repro_clipping.py"
    assert script.is_file() and str(script) in result.output.replace("\n", "")

    ran = _run_script(script)
    assert ran.returncode == 1, ran.stderr
    # the check the verdict shows: the statement's worked example ([3, 4] and [12], max_norm 1)
    assert "grad[0]: first differs at index 0: expected 0.23076922, got 0.5999999" in ran.stdout, ran.stdout
    assert "total_norm: matches" in ran.stdout  # the Clipper returns the right total

    shutil.copy(CORPUS / "clipping" / "correct_numpy_norm.py", mine)
    fixed = _run_script(script)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "The check passes now, run on its own." in fixed.stdout

    passing = runner.invoke(app, ["run", "clipping", "--repro"])
    assert passing.exit_code == 0
    assert "No repro script written: every check passed" in passing.output


def test_repro_of_a_random_case_rebuilds_its_seeded_input(tmp_path: Path) -> None:
    """The smallest failing random instance: the script rebuilds it from its size and seed and
    finds the difference where the verdict did."""
    exercise = Catalog().get("adam")
    learner = CORPUS / "adam" / "hf_adamw_no_correct_bias.py"
    verdict = grade(exercise, learner, worker=warm_worker())
    check = next(c for c in verdict.checks if c.kind == "random")
    alone = Verdict(exercise="adam", status=verdict.status, checks=[check])
    script = tmp_path / "repro_adam.py"
    script.write_text(repro_script(exercise, alone, learner, script))
    assert '"params": {\'size\': 1, \'seed\': 0}' in script.read_text()
    ran = _run_script(script)
    assert ran.returncode == 1, ran.stderr
    where = re.search(r"first differs at (step \d+, param \d+\[\d+\])", check.message)
    assert where and f"params per step: first differs at {where.group(1)}:" in ran.stdout


def test_no_repro_for_a_file_that_does_not_load(tmp_path: Path) -> None:
    broken = tmp_path / "clipping.py"
    broken.write_text("import torch\nraise RuntimeError('not yet')\n")
    verdict = grade(Catalog().get("clipping"), broken, worker=warm_worker())
    with pytest.raises(ReproUnavailable, match="no check failed on an input"):
        repro_script(Catalog().get("clipping"), verdict, broken, tmp_path / "repro.py")


def _repro_of(slug: str, learner: Path, tmp_path: Path) -> tuple[Verdict, subprocess.CompletedProcess[str]]:
    exercise = Catalog().get(slug)
    verdict = grade(exercise, learner, worker=warm_worker())
    script = tmp_path / f"repro_{slug}.py"
    script.write_text(repro_script(exercise, verdict, learner, script))
    return verdict, _run_script(script)


def test_repro_reads_an_integer_observation(tmp_path: Path) -> None:
    """Dropping the short last group differs first in "number of steps", an int64."""
    verdict, ran = _repro_of("accumulation", CORPUS / "accumulation" / "full_groups_only.py", tmp_path)
    failure = verdict.smallest_failure  # the check the verdict shows is the one --repro writes
    assert failure is not None and failure.observation == "number of steps"
    assert ran.returncode == 1, ran.stderr
    assert f"number of steps: first differs: expected {failure.expected}, got {failure.got}" in ran.stdout


LR = """import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    if step == warmup_steps:
        return {peak}
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
"""


def test_repro_reads_python_floats_as_float64_as_grind_does(tmp_path: Path) -> None:
    """A peak of 1.000001101 instead of 1: grind fails it (in float64), and so must the script,
    which shows the value the learner returned, not its float32 rounding."""
    learner = tmp_path / "lr.py"
    learner.write_text(LR.format(peak="1.000001101"))
    verdict, ran = _repro_of("lr-schedule", learner, tmp_path)
    assert verdict.status.value == "failed", verdict.message
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "got 1.000001101" in ran.stdout
    learner.write_text(LR.format(peak="1.0"))
    again = _run_script(tmp_path / "repro_lr-schedule.py")
    assert again.returncode == 0 and "The check passes now" in again.stdout, again.stdout + again.stderr


def test_repro_says_when_state_between_calls_may_be_why(tmp_path: Path) -> None:
    """A mutable default that remembers earlier calls fails in grind (all cases, one process)
    and passes alone: the script says which of the two it is."""
    learner = tmp_path / "clip.py"
    learner.write_text((CORPUS / "clipping" / "correct_numpy_norm.py").read_text() + """

_calls = []
_first = clip_grad_norm_


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    _calls.append(1)
    total = _first(parameters, max_norm, norm_type)
    return total * 2 if len(_calls) > 1 else total
""")
    verdict, ran = _repro_of("clipping", learner, tmp_path)
    failure = verdict.first_failure
    assert failure is not None and failure.name != "worked_example"  # the first call is right
    assert ran.returncode == 0 and "keeps state between calls" in ran.stdout, ran.stdout + ran.stderr


def test_a_returned_none_reads_as_grind_says_it(tmp_path: Path) -> None:
    learner = tmp_path / "clip.py"
    learner.write_text((CORPUS / "clipping" / "correct_numpy_norm.py").read_text() + """

_inner = clip_grad_norm_


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    _inner(parameters, max_norm, norm_type)
""")
    _, ran = _repro_of("clipping", learner, tmp_path)
    assert ran.returncode == 1
    assert "total_norm: got None where a value was expected (did you forget to return?)" in ran.stdout


def test_json_verdicts_are_strict_json_with_non_finite_values(tmp_path: Path) -> None:
    """NaN and inf in values, series and errors are strings, so strict parsers read the verdict."""
    learner = tmp_path / "lr.py"
    learner.write_text(LR.format(peak="float('nan')"))
    result = runner.invoke(app, ["run", "lr-schedule", "--file", str(learner), "--json"])

    def refuse(token: str) -> None:
        raise AssertionError(f"non-standard JSON token {token}")

    data = json.loads(result.output, parse_constant=refuse)
    assert data["status"] == "failed"
    assert "nan" in json.dumps(data["checks"])


def test_repro_is_refused_during_an_interview(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from judge.interview import start_or_resume
    from judge.progress import Progress
    from judge.workspace import progress_path

    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["init", "ws"]).exit_code == 0
    monkeypatch.chdir(tmp_path / "ws")
    with Progress(progress_path(tmp_path / "ws")) as state:
        start_or_resume(state, Catalog().get("clipping"), time.time())
    result = runner.invoke(app, ["run", "clipping", "--repro"])
    assert result.exit_code == 2 and "no repro script until you pass" in result.output
    assert not (tmp_path / "ws" / "clipping" / "repro_clipping.py").exists()


def test_the_lr_schedule_repro_holds_the_case_and_the_call_and_imports_the_rest(tmp_path: Path) -> None:
    """Issue 36: the script was 871 lines (the case code, the kit and the comparison inlined). It
    now holds the failing case, the reference's values and the call, imports the comparison from
    grind and the case code from the course on disk, and still reproduces the failure when run
    from a folder of its own."""
    verdict, ran = _repro_of("lr-schedule", CORPUS / "lr-schedule" / "decays_to_zero_torch.py", tmp_path)
    text = (tmp_path / "repro_lr-schedule.py").read_text()
    assert len(text.splitlines()) < 80, len(text.splitlines())
    assert "def lr_multiplier" not in text and "CASES" not in text and "from judge.repro_runtime import run" in text
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "first differs" in ran.stdout
