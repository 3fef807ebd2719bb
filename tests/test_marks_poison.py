"""Marks: a forbidden implementation is absent from the learner's process, and the verdict that
says so is read from outside it (judge/worker/poison.py).

The guards decide "forbidden" from state in the learner's interpreter. A sixth red-team review
called the forbidden implementation from a finalizer, after the entry returned and with no learner
frame on the stack, and passed in practice and (before the scan refused the names) in marks. In
a marked run the implementation itself is replaced before the learner's file loads: calling it
writes a line on stderr and ends the process with a status that names the API, and grind's own
process turns that into the verdict.

These tests grade through ``run_learner`` (no scan), so that the poison is the only layer in the
way: the scan, which refuses these files for marks before they run, is tested elsewhere.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judge.catalog import Catalog
from judge.pipeline import run_learner, verdict_from_outcome
from judge.trusted import reference_for
from judge.models import Status
from judge.worker import poison

from .conftest import exercise_worker

ROOT = Path(__file__).resolve().parents[1]
RED6 = ROOT / "tests" / "adversarial" / "redteam6"
POISON = ROOT / "tests" / "adversarial" / "poison"

DEFERRED = [
    ("clipping", RED6 / "clip_finalizer_deferred_forbidden.py", "torch.nn.utils.clip_grad_norm_"),
    ("adam", RED6 / "adam_step_return_finalizer.py", "torch.optim.Adam"),
    ("rmsprop", RED6 / "rmsprop_step_return_finalizer.py", "torch.optim.RMSprop"),
]


def _marked(slug: str, path: Path, source: str | None = None, warm: bool = True) -> tuple[object, object]:
    exercise = Catalog().get(slug)
    worker = exercise_worker(slug) if warm else None
    text = path.read_text(encoding="utf-8") if source is None else source
    outcome = run_learner(exercise, text, str(path), worker=worker, marked=True)
    verdict = verdict_from_outcome(exercise, reference_for(exercise, worker=worker), outcome, str(path), worker, text)
    return outcome, verdict


@pytest.mark.parametrize(("slug", "path", "api"), DEFERRED, ids=[d[0] for d in DEFERRED])
def test_a_forbidden_call_deferred_to_a_finalizer_ends_a_marked_run_naming_the_api(slug: str, path: Path,
                                                                                  api: str) -> None:
    """Redteam6's bypasses of the guards: for marks the implementation they call is not there."""
    outcome, verdict = _marked(slug, path)
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)
    assert f"Forbidden API: {api}." in verdict.message
    assert "its implementation is absent" in verdict.message
    assert outcome.returncode == poison.STATUS_BASE + list(Catalog().get(slug).forbidden).index(api)


def test_the_poison_holds_in_a_cold_run_too() -> None:
    slug, path, api = DEFERRED[0]
    _, verdict = _marked(slug, path, warm=False)
    assert verdict.status is Status.FORBIDDEN and f"Forbidden API: {api}." in verdict.message, verdict.message


def test_a_rank_that_calls_a_forbidden_implementation_ends_the_marked_run_naming_it() -> None:
    """In a distributed exercise the call happens in a rank; the runner passes its status on."""
    _, verdict = _marked("sharded-clip", POISON / "sharded_clip_rank_finalizer.py")
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)
    assert "Forbidden API: torch.nn.utils.clip_grad_norm_." in verdict.message


def test_a_learners_own_exit_with_the_poisons_status_is_not_taken_for_a_forbidden_call() -> None:
    """The status alone names nothing: the poison's own line on stderr must be there too."""
    source = textwrap.dedent("""
        import os
        def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
            os._exit(96)
    """)
    _, verdict = _marked("clipping", POISON / "exit_96.py", source=source)
    assert verdict.status is Status.CRASHED, (verdict.status, verdict.message)
    assert "Forbidden API" not in verdict.message


def test_a_correct_answer_is_untouched_by_the_poison() -> None:
    for slug in ("clipping", "adam", "lr-schedule"):
        path = ROOT / "solutions" / slug / "reference.py"
        _, verdict = _marked(slug, path)
        assert verdict.status is Status.PASSED, (slug, verdict.message)


def test_status_names_only_inside_its_range() -> None:
    forbidden = ("a.b", "c.d")
    line = f"{poison.MARKER}c.d\n"
    assert poison.status_name(forbidden, poison.STATUS_BASE + 1, "x\n" + line) == "c.d"
    assert poison.status_name(forbidden, poison.STATUS_BASE + 1, "no marker") is None
    assert poison.status_name(forbidden, poison.STATUS_BASE + 2, line) is None  # past the list
    assert poison.status_name(forbidden, poison.STATUS_BASE - 1, line) is None
    assert poison.status_name(forbidden, None, line) is None


_PROBE = textwrap.dedent("""
    import sys, types, torch
    from judge.worker import guards, poison
    forbidden = sys.argv[1].split(",")
    checks = types.SimpleNamespace(**({"held": guards._resolve(sys.argv[3])} if sys.argv[3] else {}))
    left = poison.install(poison.resolve(forbidden, guards), checks, torch, guards)
    print("left=" + ",".join(left), flush=True)
    exec(sys.argv[2])
    print("survived", flush=True)
""")

# (forbidden list, statement, the API whose status ends it, or None when it must survive)
PROBES = [
    ("torch.nn.utils.clip_grad_norm_,torch.nn.utils.get_total_norm",
     "p = torch.nn.Parameter(torch.ones(3)); p.grad = torch.ones(3); torch.nn.utils.clip_grad.clip_grad_norm_([p], 1.)",
     "torch.nn.utils.clip_grad_norm_"),
    ("torch.nn.utils.clip_grad_norm_,torch.nn.utils.get_total_norm",
     "torch.nn.utils.get_total_norm([torch.ones(3)])", "torch.nn.utils.get_total_norm"),
    ("torch.nn.utils.clip_grad_norm_", "torch.linalg.vector_norm(torch.ones(3))", None),
    ("torch.optim.Adam,torch.optim.AdamW",
     "p = torch.nn.Parameter(torch.ones(3)); o = torch.optim.AdamW([p]); p.grad = torch.ones(3); o.step()",
     "torch.optim.AdamW"),
    ("torch.optim.Adam", "p = torch.nn.Parameter(torch.ones(3)); torch.optim.SGD([p], lr=.1).step()", None),
    ("torch._fused_sgd_,torch.ops.aten._fused_sgd_",
     "torch.ops.aten._fused_sgd_([torch.ones(2)], [torch.ones(2)], [], weight_decay=0., momentum=0., lr=.1, "
     "dampening=0., nesterov=False, maximize=False, is_first_step=True)", "torch._fused_sgd_"),
    ("torch.amp.GradScaler,torch._amp_update_scale_",
     "torch._C._VariableFunctions._amp_update_scale_(torch.ones(1), torch.zeros(1, dtype=torch.int32), "
     "torch.zeros(1), 2., .5, 2)", "torch._amp_update_scale_"),
    ("torch.amp.GradScaler", "torch.amp.GradScaler('cpu').scale(torch.ones(1))", "torch.amp.GradScaler"),
    ("torch.amp.GradScaler", "(torch.ones(2).half() * 2).float()", None),
]


@pytest.mark.parametrize(("forbidden", "statement", "api"), PROBES, ids=[f"probe{i}" for i in range(len(PROBES))])
def test_every_route_to_a_poisoned_implementation_ends_the_process(forbidden: str, statement: str,
                                                                 api: str | None) -> None:
    """Any alias, the operator by any of its names, and torch's own callers reach the poison;
    neighbours that are not forbidden keep working."""
    done = subprocess.run([sys.executable, "-c", _PROBE, forbidden, statement, ""], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    if api is None:
        assert done.returncode == 0 and "survived" in done.stdout, done.stderr[-800:]
        return
    assert done.returncode == poison.STATUS_BASE + forbidden.split(",").index(api), done.stderr[-800:]
    assert poison.status_name(forbidden.split(","), done.returncode, done.stderr) == api
    assert "survived" not in done.stdout


def test_an_object_the_checks_use_keeps_its_implementation_and_is_said_to() -> None:
    """lr-schedule's checks drive the learner's lambda with LambdaLR: it stays, guarded only."""
    forbidden = "torch.optim.lr_scheduler.LambdaLR,torch.optim.lr_scheduler.StepLR"
    statement = ("p = torch.nn.Parameter(torch.ones(1)); o = torch.optim.SGD([p], lr=1.); "
                 "torch.optim.lr_scheduler.LambdaLR(o, lambda s: 1.).step()")
    done = subprocess.run([sys.executable, "-c", _PROBE, forbidden, statement, "torch.optim.lr_scheduler.LambdaLR"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and "survived" in done.stdout, done.stderr[-800:]
    assert "left=torch.optim.lr_scheduler.LambdaLR" in done.stdout


RED8 = ROOT / "tests" / "adversarial" / "redteam8"
_SLUGS = {"adam": "adam", "clip": "clipping", "loss_scaling": "loss-scaling", "lr_schedule": "lr-schedule",
          "rmsprop": "rmsprop", "sgd": "sgd-momentum", "sampler": "distributed-sampler",
          "sharded_clip": "sharded-clip"}


def _slug(path: Path) -> str:
    return next(_SLUGS[prefix] for prefix in sorted(_SLUGS, key=len, reverse=True) if path.stem.startswith(prefix))


RED8_ATTACKS = sorted(p for p in RED8.glob("*.py") if p.stem != "levels" and "_fp_" not in p.stem)
RED8_CORRECT = sorted(RED8.glob("*_fp_*.py"))


@pytest.mark.parametrize("path", RED8_ATTACKS, ids=[p.stem for p in RED8_ATTACKS])
def test_an_eighth_review_attack_passes_neither_the_poison_alone_nor_marks(path: Path) -> None:
    """Torch's own forbidden code reached another way (a fresh copy compiled from its source, the
    poison's kernels unregistered, the stand-ins' real methods): never a pass for marks, with the
    scan and without it."""
    from judge.submit import grade

    slug = _slug(path)
    _, alone = _marked(slug, path)
    assert alone.status is not Status.PASSED, alone.message
    full = grade(Catalog().get(slug), path, worker=exercise_worker(slug), marked=True)
    assert full.status is not Status.PASSED, full.message


@pytest.mark.parametrize("path", RED8_CORRECT, ids=[p.stem for p in RED8_CORRECT])
def test_an_honest_answer_near_a_forbidden_api_still_passes_for_marks(path: Path) -> None:
    from judge.submit import grade

    slug = _slug(path)
    verdict = grade(Catalog().get(slug), path, worker=exercise_worker(slug), marked=True)
    assert verdict.status is Status.PASSED, verdict.message
