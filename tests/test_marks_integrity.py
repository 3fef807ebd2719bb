"""Marks: nothing the learner's code changes in the libraries the judge's own code uses goes unseen.

A fourth red-team review passed the marks scan with six ways to reach a module that the scan does
not follow (a function's return value, tuple unpacking, a list, ``(Class or 0)``, ``:=``, an
exception's ``obj``) and then replace one of its functions; on rank0-checkpoint, replacing
``torch.load`` that way made the judge read bare keys from a file holding ``module.``-prefixed
ones, and a wrong answer passed. The child of a marks run now records every loaded module's and
library class's namespace before the learner's file loads and checks it after every case
(judge/worker/integrity.py), whatever expression reached the module.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judge.catalog import Catalog
from judge.grade import grade
from judge.models import Status

from .conftest import exercise_worker

ROOT = Path(__file__).resolve().parents[1]
MARKS = ROOT / "tests" / "adversarial" / "marks"
CLIPPING = sorted(MARKS.glob("clip_*.py"))


@pytest.mark.parametrize("path", CLIPPING, ids=[p.stem for p in CLIPPING])
def test_a_library_function_replaced_by_any_route_is_refused_for_marks(path: Path) -> None:
    """Each file is a correct clipping answer plus one change to a library, reached by a route the
    scan does not follow: for marks it is refused, naming what was replaced (or the thread)."""
    exercise = Catalog().get("clipping")
    verdict = grade(exercise, path, worker=exercise_worker("clipping"), marked=True)
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)
    assert verdict.message.startswith("Not accepted for marks: ")
    named = "thread" if "thread" in path.stem else "replaced torch."
    assert named in verdict.message, verdict.message


def test_the_same_correct_answer_without_the_change_passes_for_marks() -> None:
    """The check refuses the change, not the answer: the files' own clipping code passes."""
    source = CLIPPING[0].read_text(encoding="utf-8").replace("_t().load = lambda *a, **k: 'forged'", "")
    exercise = Catalog().get("clipping")
    verdict = grade(exercise, CLIPPING[0], source=source, worker=exercise_worker("clipping"), marked=True)
    assert verdict.status is Status.PASSED, verdict.message


def test_a_wrong_rank0_answer_that_fakes_torch_load_is_refused_for_marks() -> None:
    """The red team's forged pass: module.-prefixed keys read back as bare through a replaced
    torch.load. Practice runs it (it only cheats the learner there); marks refuse it."""
    exercise = Catalog().get("rank0-checkpoint")
    verdict = grade(exercise, MARKS / "rank0_prefixed_keys_fake_load.py", worker=exercise_worker("rank0-checkpoint"),
                    marked=True)
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)
    assert "replaced torch.load" in verdict.message


@pytest.mark.parametrize("slug, name", [("exact-resume", "passed_pickle_roundtrip.py"),
                                        ("rank0-checkpoint", "correct_env_rank_monitored.py"),
                                        # AdamW inherits Adam.step: torch gives it a profiling
                                        # wrapper of its own when the first one is built
                                        ("update-ratio", "correct_foreach_norms.py"),
                                        ("no-sync-accumulation", None)])
def test_correct_answers_that_use_the_libraries_freely_pass_for_marks(slug: str, name: str | None) -> None:
    """torch.distributed sets sys.excepthook in every rank, pickling touches copyreg: what the
    libraries change while they run is not a breach (a correct answer was refused for it)."""
    folder = ROOT / "tests" / "corpus" / slug
    path = folder / name if name else next(p for p in sorted(folder.glob("*.py"))
                                            if p.read_text(encoding="utf-8").startswith("# expect: passed"))
    verdict = grade(Catalog().get(slug), path, worker=exercise_worker(slug), marked=True)
    assert verdict.status is Status.PASSED, (path.name, verdict.message)


INTEGRITY = ROOT / "judge" / "worker" / "integrity.py"


def _check_after(change: str) -> str:
    """The breaches the check reports after ``change`` runs, in a fresh interpreter (one thread)."""
    script = textwrap.dedent(f"""
        import importlib.util, json, sys
        import torch
        spec = importlib.util.spec_from_file_location("integrity", {str(INTEGRITY)!r})
        integrity = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(integrity)
        check = integrity.baseline().breaches
    """) + textwrap.dedent(change) + "\nprint(json.dumps(check()))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("change, named", [
    ("m = (lambda: torch.nn.functional)()\nclass L(type(m)): pass\nm.__class__ = L\n", "torch.nn.functional.__class__"),
    ("class Mixin: pass\ntorch.nn.Linear.__bases__ = (Mixin, torch.nn.Module)\n", "Linear.__bases__"),
    ("import torch.nn.modules.linear as lin\ndel lin.Linear.forward\n", "torch.nn.modules.linear.Linear.forward"),
    ("import json\n(json or 0).dumps = str\n", "json.dumps"),
    ("import builtins\nbuiltins.any = lambda *a: False\n", "builtins.any"),
    ("import threading, time\nthreading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n", "thread"),
])
def test_the_check_names_each_kind_of_change(change: str, named: str) -> None:
    """A module's class swapped (its namespace untouched), a class's bases reassigned (its
    namespace untouched), a method removed, a stdlib function
    replaced, builtins.any itself (the check holds its own), a thread left running."""
    assert named in _check_after(change)


def test_what_libraries_change_as_they_run_is_not_a_breach() -> None:
    """Plain values rebound (tempfile's cached folder), new names added (a lazy import), and the
    hooks libraries set (sys.excepthook, as torch.distributed does) are not breaches."""
    assert _check_after("import tempfile, sys\ntempfile.gettempdir()\ntorch.some_new_name = 1\n"
                        "sys.excepthook = lambda *a: None\nimport torch.utils.data\n") == "[]"


REDTEAM5 = ROOT / "tests" / "adversarial" / "redteam5"


@pytest.mark.parametrize("name, status, says", [
    # no barrier, numpy.array replaced by a one-shot fake that puts itself back while the judge
    # converts the observations: the learner's own write is seen as it happens
    ("rank0_one_shot_numpy_array.py", Status.FORBIDDEN, "replaced numpy.array"),
    # module.-prefixed keys, with the model the learner was handed made to report them as bare:
    # the keys the file should hold are taken before the learner's file loads
    ("rank0_instance_state_dict.py", Status.FAILED, ""),
    ("rank0_state_dict_post_hook.py", Status.FAILED, ""),
    ("rank0_global_registration_hook.py", Status.FAILED, ""),
    # a correct answer through torch.distributed.checkpoint's helpers
    ("rank0_ok_dcp_state_dict.py", Status.PASSED, ""),
])
def test_the_fifth_reviews_rank0_routes_get_their_right_verdict_for_marks(name: str, status: Status, says: str) -> None:
    """A fifth review passed four wrong rank0-checkpoint answers for marks: three through the
    model object the learner holds, one through a replacement undone before the check looked."""
    verdict = grade(Catalog().get("rank0-checkpoint"), REDTEAM5 / name, worker=exercise_worker("rank0-checkpoint"),
                    marked=True)
    assert verdict.status is status, (verdict.status, verdict.message)
    assert says in verdict.message


@pytest.mark.parametrize("name", ["clip_fp_cudnn_flag.py", "clip_fp_message_text.py"])
def test_ordinary_lines_a_review_found_refused_pass_for_marks(name: str) -> None:
    """``torch.backends.cudnn.deterministic = True`` and an assert message with the words
    "compile" and "eval": correct answers, refused by the scan before."""
    verdict = grade(Catalog().get("clipping"), REDTEAM5 / name, worker=exercise_worker("clipping"), marked=True)
    assert verdict.status is Status.PASSED, verdict.message


def test_a_replacement_put_back_before_the_call_returns_is_still_refused(tmp_path: Path) -> None:
    """The learner's own write is the breach, not what is left at the end: a function swapped and
    swapped back inside the call (so that only the judge's code in between would see it) counts."""
    source = CLIPPING[0].read_text(encoding="utf-8").replace("_t().load = lambda *a, **k: 'forged'", "")
    source = source.replace("    if isinstance(parameters, torch.Tensor):",
                            "    real = _t().load\n    _t().load = print\n    _t().load = real\n"
                            "    if isinstance(parameters, torch.Tensor):")
    path = tmp_path / "swap_back.py"
    path.write_text(source, encoding="utf-8")
    verdict = grade(Catalog().get("clipping"), path, worker=exercise_worker("clipping"), marked=True)
    assert verdict.status is Status.FORBIDDEN and "your code replaced torch.load" in verdict.message, verdict.message


REDTEAM6 = ROOT / "tests" / "adversarial" / "redteam6"


@pytest.mark.parametrize("slug, name, status, says", [
    # torch.load's allow-list changed in the process (its cache; add_safe_globals): the checks
    # read the file with a reader of their own
    ("rank0-checkpoint", "rank0_allowed_globals_ordereddict.py", Status.FAILED, ""),
    ("rank0-checkpoint", "rank0_safe_globals_module_object.py", Status.FAILED, ""),
    # json's shared encoder changed to empty the "forbidden" records: grind encodes with its own
    ("rank0-checkpoint", "rank0_one_shot_json_encoder.py", Status.FORBIDDEN, "replaced numpy.array"),
    ("clipping", "clip_json_encoder_erases_breach.py", Status.FORBIDDEN, "replaced numpy.array"),
    # a torch mode entered and never left rewrites the judge's own torch calls, writing nothing
    ("clipping", "clip_torch_function_mode.py", Status.FORBIDDEN, "torch function mode"),
    ("clipping", "clip_torch_dispatch_mode.py", Status.FORBIDDEN, "torch dispatch mode"),
    # the forbidden API called by a finalizer after the learner's call returned: named, refused
    ("clipping", "clip_finalizer_deferred_forbidden.py", Status.FORBIDDEN, "clip_grad_norm_"),
    ("adam", "adam_step_return_finalizer.py", Status.FORBIDDEN, "Adam"),
    ("rmsprop", "rmsprop_step_return_finalizer.py", Status.FORBIDDEN, "RMSprop"),
])
def test_the_sixth_reviews_routes_get_their_right_verdict_for_marks(slug: str, name: str, status: Status,
                                                                    says: str) -> None:
    """A sixth review passed nine answers for marks: wrong rank0 files through torch.load's
    allow-list, a breach erased through json's shared encoder, torch modes left active, and
    forbidden APIs called from finalizers after the learner's call returned."""
    verdict = grade(Catalog().get(slug), REDTEAM6 / name, worker=exercise_worker(slug), marked=True)
    assert verdict.status is status, (verdict.status, verdict.message)
    assert says in verdict.message


def test_a_progress_bar_monitor_thread_is_named_with_its_fix() -> None:
    """tqdm's monitor thread outlives the call; the refusal says how to switch it off."""
    pytest.importorskip("tqdm", reason="tqdm comes with the marks extra (copydetect), which laptop mode does not install")
    verdict = grade(Catalog().get("training-loop"), REDTEAM6 / "training_loop_fp_tqdm_thread.py",
                    worker=exercise_worker("training-loop"), marked=True)
    assert verdict.status is Status.FORBIDDEN and "monitor_interval = 0" in verdict.message


REDTEAM7 = ROOT / "tests" / "adversarial" / "redteam7"


@pytest.mark.parametrize("slug, name, status", [
    # text turned into objects (pydoc.locate to gc, to the checks, to torch's own functions),
    # annotations evaluated, torch.load's full unpickler, functools copying by a text name
    ("clipping", "clip_pydoc_locate_forbidden.py", Status.FORBIDDEN),
    ("adam", "adam_pydoc_locate_forbidden.py", Status.FORBIDDEN),
    ("clipping", "clip_pydoc_gc_record_shadowed.py", Status.FORBIDDEN),
    ("rank0-checkpoint", "rank0_pydoc_checks_module_no_barrier.py", Status.FORBIDDEN),
    ("clipping", "clip_typing_hints_eval.py", Status.FORBIDDEN),
    ("clipping", "clip_torch_load_pickle_fetch.py", Status.FORBIDDEN),
    ("clipping", "clip_update_wrapper_finalizer_forbidden.py", Status.FORBIDDEN),
    ("clipping", "clip_update_wrapper_transient_detach.py", Status.FORBIDDEN),
    # torch.Tensor.detach swapped from a finalizer between the call and the conversion: the
    # conversion calls what it bound before the learner's file loaded
    ("clipping", "clip_class_write_unaudited.py", Status.FORBIDDEN),
    # false positives: a check's own torch mode around the call, a history key "eval",
    # logging's exc_info=True
    ("bf16-rounding", "bf16_fp_checks_own_mode.py", Status.PASSED),
    ("training-loop", "training_loop_fp_eval_key.py", Status.PASSED),
    ("training-loop", "training_loop_fp_logging_exc_info.py", Status.PASSED),
])
def test_the_seventh_reviews_routes_get_their_right_verdict_for_marks(slug: str, name: str, status: Status) -> None:
    """A seventh review passed nine answers for marks and found three correct ones refused (every
    correct bf16-rounding answer among them)."""
    verdict = grade(Catalog().get(slug), REDTEAM7 / name, worker=exercise_worker(slug), marked=True)
    assert verdict.status is status, (verdict.status, verdict.message)
