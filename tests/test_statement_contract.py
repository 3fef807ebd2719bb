"""A statement and its stub say what the caller observes (the contract), not the recipe or the
mistakes the exercise is there to catch: those belong to the hints, shown one at a time.

The newcomer walkthrough of issue 36 found training-loop's stub docstring giving the warmup
formula and where to clip, and its statement naming the wrong divisors.
"""

from __future__ import annotations

from judge.catalog import Catalog

from .conftest import ROOT


def test_training_loop_stub_and_statement_keep_the_recipe_for_the_hints() -> None:
    folder = ROOT / "exercises" / "training-loop"
    stub = (folder / "stub.py").read_text(encoding="utf-8")
    statement = (folder / "README.md").read_text(encoding="utf-8")
    assert "(u + 1) / warmup" not in stub and "last backward" not in stub
    assert "not by `accumulation`" not in statement and "not by `micro_size`" not in statement
    hints = " ".join(Catalog().get("training-loop").hints)
    assert "(u + 1) / warmup" in hints and "after the group's last backward" in hints
    assert "not accumulation, not micro_size" in hints
    # the contract stays: what each update applies and the schedule's shape
    assert "group's mean loss" in stub and "clipped to global norm" in stub and "cosine to min_ratio" in stub
