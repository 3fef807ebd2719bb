"""Run one red-team file at the three levels: practice (run_learner, marked=False), poison alone
(run_learner, marked=True, no scan) and the full marks path (submit.grade(..., marked=True)).
Usage (from the worktree, PYTHONPATH=$PWD): python tests/adversarial/redteam8/levels.py SLUG FILE [LEVEL...]
Not a test: a tool for the reviewer (its verdicts are what the attack files' headers quote)."""
import sys
from pathlib import Path

from judge import grade, submit
from judge.catalog import Catalog

slug, path = sys.argv[1], Path(sys.argv[2])
levels = sys.argv[3:] or ["practice", "poison", "marks"]
ex = Catalog().get(slug)
src = path.read_text()
ref = grade.reference_for(ex)
for level in levels:
    if level == "marks":
        v = submit.grade(ex, path, marked=True)
        print(f"{level:9s} {v.status.value:10s} | {v.message[:300]!r}")
        continue
    out = grade.run_learner(ex, src, str(path), marked=level == "poison")
    v = grade.verdict_from_outcome(ex, ref, out, str(path), source=src)
    print(f"{level:9s} {v.status.value:10s} rc={out.returncode} | {v.message[:300]!r}")
