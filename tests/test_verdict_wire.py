"""A verdict crosses from the per-user daemon to ``grind run`` (judge.models.verdict_to_wire and
verdict_from_wire). Over the daemon, a learner must see, record and exit exactly as on a cold
run, so the wire may lose nothing: NaN and infinities, a lone surrogate in the learner's output,
every diagnosis. And since the client grades cold whenever the daemon's answer is not a verdict,
anything else must be refused, not half-read.
"""

from __future__ import annotations

import io
import json
import math
from typing import Any

import pytest
from rich.console import Console

from judge.catalog import Catalog
from judge.grade import grade
from judge.models import (CheckResult, CheckStatus, Diagnosis, Status, Verdict, verdict_from_wire,
                          verdict_to_wire)
from judge.render import HintInfo, render_verdict

from .conftest import SUBMISSIONS, exercise_worker


def rendered(verdict: Verdict, slug: str, color: bool) -> str:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=color, no_color=not color, color_system="truecolor"
                      if color else None, legacy_windows=False)
    render_verdict(console, verdict, Catalog().get(slug), HintInfo(1, 5))
    return out.getvalue()


@pytest.mark.parametrize("slug", ["clipping", "loss-scaling"])
def test_every_golden_verdict_crosses_the_wire_unchanged(slug: str) -> None:
    """Passes, named mistakes, errors, forbidden calls: each renders (plain and in colour),
    prints as JSON and crosses again exactly as graded."""
    exercise = Catalog().get(slug)
    worker = exercise_worker(slug)
    statuses = set()
    for path in sorted((SUBMISSIONS / slug).glob("*.py")):
        verdict = grade(exercise, path, worker=worker)
        statuses.add(verdict.status)
        back = verdict_from_wire(verdict_to_wire(verdict))
        assert verdict_to_wire(back) == verdict_to_wire(verdict), path.name
        assert back.to_json() == verdict.to_json(), path.name
        for color in (False, True):
            assert rendered(back, slug, color) == rendered(verdict, slug, color), path.name
    assert {Status.PASSED, Status.FAILED, Status.FORBIDDEN} <= statuses  # the corpus covers them


def test_what_only_python_can_spell_survives() -> None:
    """JSON has no NaN and no lone surrogate; Python's json module keeps both, and the verdict
    must keep them (a NaN expected value is a different failure from the text "nan")."""
    pitfall = Diagnosis("per-tensor", "per-tensor clipping", "each tensor clipped alone", "one norm for all",
                        explains="worked_example: grad[0]", complete=False, library="timm", convention=True)
    check = CheckResult("worked_example", "example", CheckStatus.FAILED, "differs", input={"x": (1.0, 2.0)},
                        expected=[float("nan"), float("inf")], got=[-float("inf"), 1e-300], max_abs_err=math.inf,
                        max_rel_err=None, pitfall="per-tensor", observation="grad[0]",
                        series={"expected": [1.0, float("nan")], "got": [1.0, 2.0], "first_step": 1},
                        instance="worked_example", case="worked_example")
    verdict = Verdict("clipping", Status.FAILED, [check], "1 of 1 failed", pitfall, 12, "out \udce9\n",
                      "err \u2603", 0.25, "/home/l/clipping.py", ["a notice"], "bubblewrap", [pitfall], "the rest")
    back = verdict_from_wire(verdict_to_wire(verdict))
    assert back.stdout == "out \udce9\n" and back.stderr == "err \u2603"
    assert math.isnan(back.checks[0].expected[0]) and back.checks[0].expected[1] == math.inf
    assert back.checks[0].max_abs_err == math.inf and back.checks[0].status is CheckStatus.FAILED
    assert back.diagnosis == pitfall and back.diagnoses == [pitfall] and back.status is Status.FAILED
    assert verdict_to_wire(back) == verdict_to_wire(verdict)
    assert back.to_json() == verdict.to_json()


def _wire() -> dict[str, Any]:
    check = CheckResult("random", "random", CheckStatus.PASSED)
    return json.loads(verdict_to_wire(Verdict("clipping", Status.PASSED, [check], notices=["n"])))


@pytest.mark.parametrize("spoil", [
    lambda d: d.update(status="won"),
    lambda d: d.update(extra=1),
    lambda d: d.update(checks={"not": "a list"}),
    lambda d: d["checks"][0].update(status="fine"),
    lambda d: d["checks"][0].update(unknown=True),
    lambda d: d["checks"][0].update(name=3),
    lambda d: d.update(diagnosis={"slug": "x"}),  # a diagnosis without its name and explanation
    lambda d: d.update(diagnoses=[{"slug": "x", "name": "y", "explanation": "z", "hint": "h", "complete": "yes"}]),
    lambda d: d.update(notices=[1]),
    lambda d: d.update(stdout=None),
    lambda d: d.update(learner_line="12"),
    lambda d: d.update(duration_s="fast"),
])
def test_anything_but_a_verdict_is_refused(spoil: Any) -> None:
    data = _wire()
    assert verdict_from_wire(json.dumps(data)).passed  # the unspoilt one reads back
    spoil(data)
    with pytest.raises(ValueError):
        verdict_from_wire(json.dumps(data))
    for garbage in ("{not json", "[]", "null", '"a verdict"'):
        with pytest.raises(ValueError):
            verdict_from_wire(garbage)
