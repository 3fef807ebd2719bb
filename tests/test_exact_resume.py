"""exact-resume: the reference's resumed runs really are the uninterrupted runs.

Grading compares a learner's trajectory with the reference's, so a harness or reference that
resumed inexactly would still "pass" itself. The child never computes the uninterrupted run's
observations while grading (they are the answer, and a learner's code shares that process), so
this test computes them in a trusted process of its own and compares them, bit for bit, with the
resumed runs of the reference and of the oracle (a generic derivation through torch.save).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import importlib.util, sys
import torch
sys.path.insert(0, sys.argv[1])  # grind_kit, as the child serves it
root = sys.argv[2]

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

checks = load("checks", f"{root}/solutions/exact-resume/checks.py")
bad = []
for case in checks.CASES:
    cfg = case["inputs"]()
    run = checks.build(cfg)
    rec = checks.Recorder()
    checks._train(run, checks._objects(run), checks._data(cfg), cfg, rec, 0, checks._finish(cfg))
    want = checks._observations(rec, run)
    for name in ("reference", "oracle"):
        got = case["call"](load(name, f"{root}/solutions/exact-resume/{name}.py"), **cfg)
        for key, value in want.items():
            same = (torch.equal(got[key], value) if isinstance(value, torch.Tensor) and got[key].shape == value.shape
                    else not isinstance(value, torch.Tensor) and got[key] == value)
            if not same:
                bad.append(f"{name} on {case['name']}: {key} differs from the uninterrupted run")
print("\n".join(bad) or "IDENTICAL")
"""


@pytest.mark.parametrize("slug", ["exact-resume"])  # the id lets `pytest -k exact-resume` select it
def test_reference_and_oracle_resume_bit_identically(slug: str, tmp_path: Path) -> None:
    (tmp_path / "grind_kit").symlink_to(ROOT / "solutions" / "_kit")
    ran = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), str(ROOT)], capture_output=True,
                         text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.strip() == "IDENTICAL", ran.stdout
