"""The author kit (solutions/_kit, served in the child as grind_kit): how it travels, how it
refuses a badly written case, what it is in the cache key, and why a learner importing it gains
nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judge import cache
from judge.adequacy import static_problems
from judge.catalog import Catalog
from judge.cli import app
from judge.grade import grade
from judge.kit import kit_dir, kit_modules
from judge.status import ExitStatus

from .conftest import ROOT

KIT = ROOT / "solutions" / "_kit"


def test_the_kit_travels_as_text_and_is_served_as_a_package(kit: Any) -> None:
    modules = kit_modules(KIT)
    assert {"grind_kit", "grind_kit.cases", "grind_kit.optim", "grind_kit.training", "grind_kit.deltas"} <= set(modules)
    assert Path(kit.__file__) == KIT / "__init__.py"
    assert Path(sys.modules["grind_kit.optim"].__file__) == KIT / "optim.py"
    assert kit.lockstep is sys.modules["grind_kit.optim"].lockstep


def _checks(source: str, slug: str = "demo") -> dict[str, Any]:
    """Run ``source`` as solutions/<slug>/checks.py would run in the child."""
    namespace = {"__name__": "grind_checks", "__file__": f"/course/solutions/{slug}/checks.py"}
    exec(compile(source, namespace["__file__"], "exec"), namespace)
    return namespace


HEAD = "from grind_kit import case, lockstep, script\ninputs = script([[0.0]], [[[1.0]]], lr=0.1)\n"


@pytest.mark.parametrize("line, message", [
    ('case("worked_example", "example", input=inputs, call=lockstep)',
     "exercise 'demo', case 'worked_example': unknown key 'input' (did you mean 'inputs'?)"),
    ('case("worked_example", "example", call=lockstep)', "exercise 'demo', case 'worked_example': missing 'inputs'"),
    ('case("edge_one", inputs=inputs)', "exercise 'demo', case 'edge_one': missing 'call'"),
    ('case("edge_one", inputs=inputs(), call=lockstep)', "'inputs' must be a function, got dict"),
    ('case("edge_one", "hidden", inputs=inputs, call=lockstep)', "kind 'hidden' is not one of example, edge, random"),
    ('case("edge_one", inputs=inputs, call=lockstep, sizes=[1, 4])', "'sizes' belongs to random cases only, not edge"),
    ('case("random", "random", inputs=inputs, call=lockstep)', "a random case needs 'sizes'"),
    ('case("random", "random", inputs=inputs, call=lockstep, sizes=[4, 1])', "in ascending order"),
    ('case("random", "random", inputs=inputs, call=lockstep, sizes=[1], seeds=0)', "'seeds' is how many seeds"),
    ('case("edge_one", inputs=inputs, call=lockstep, shown=["x"])', "'shown' belongs to example cases only"),
    ('case("a::b", inputs=inputs, call=lockstep)', "a case name is a non-empty string"),
])
def test_case_refuses_a_badly_written_case_naming_exercise_and_case(kit: Any, line: str, message: str) -> None:
    with pytest.raises(kit.CaseError) as raised:
        _checks(HEAD + line + "\n")
    assert message in str(raised.value)


def test_case_is_the_plain_dict_the_runner_runs_and_names_lockstep_entries(kit: Any) -> None:
    made = _checks(HEAD + 'CASE = case("worked_example", "example", inputs=inputs, call=lockstep)\n')["CASE"]
    assert made["name"] == "worked_example" and made["kind"] == "example" and made["call"] is kit.lockstep
    assert made["entries"](made["inputs"]()) == {"params per step": [("param 0", [1])]}
    model_inputs = kit.training_inputs(1)()
    assert kit.training_loop.entries(model_inputs)["params per step"] == [("param 0 (weight)", [3, 4]),
                                                                          ("param 1 (bias)", [3])]


def test_deltas_build_and_combine_pitfalls(kit: Any) -> None:
    class Base:
        def a(self) -> str:
            return "a"

        def b(self) -> str:
            return "b"

    mistakes = kit.Deltas.on_class(Base, "Thing")
    pitfalls = mistakes.pitfalls([{"slug": "wrong-a", "delta": {"a": lambda self: "A"}},
                                  {"slug": "wrong-b", "delta": {"b": lambda self: "B"}},
                                  {"slug": "other-a", "delta": {"a": lambda self: "α"}}])
    thing = pitfalls[0]["impl"]["Thing"]
    assert thing.__name__ == "WrongA" and (thing().a(), thing().b()) == ("A", "b")
    both = mistakes.combine("wrong-a", "wrong-b")["Thing"]
    assert (both().a(), both().b()) == ("A", "B")
    assert mistakes.combine("wrong-a", "other-a") is None  # the same piece: alternatives, not a pair
    options = kit.Deltas.on_options(lambda opts: sorted(opts.items()))
    options.pitfalls([{"slug": "x", "delta": {"x": 1}}, {"slug": "y", "delta": {"y": 2}}])
    assert options.combine("x", "y") == [("x", 1), ("y", 2)]


@pytest.mark.parametrize("path", sorted((ROOT / "solutions").glob("*/pitfalls.py")), ids=lambda p: p.parent.name)
def test_a_pitfalls_module_writes_its_mistakes_as_deltas_of_one_base(path: Path) -> None:
    """One pitfall style: a class-based exercise writes its correct skeleton once and each
    mistake as the delta from it (grind_kit.Deltas), so a module holds at most that one class.
    loss-scaling once repeated a whole update() in each of 16 subclasses, where a fix to the
    skeleton had to be made 16 times and two mistakes could not be combined."""
    import ast

    classes = [node.name for node in ast.parse(path.read_text(encoding="utf-8")).body
               if isinstance(node, ast.ClassDef)]
    assert len(classes) <= 1, f"{path}: {classes}: write one base class and each pitfall as a 'delta' of it"


def test_recording_sgd_records_counts_and_steps(kit: Any) -> None:
    import torch

    p, q = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.zeros(1))
    opt = kit.RecordingSGD([{"params": [p]}, {"params": [q], "lr": 1.0}], lr=0.5)
    assert opt.grads_per_step().shape == (0, 3)
    p.grad = torch.tensor([2.0, -2.0])
    opt.step()
    assert opt.calls == 1 and opt.grads_per_step().tolist() == [[2.0, -2.0, 0.0]]
    assert p.tolist() == [0.0, 2.0] and q.tolist() == [0.0]
    opt.zero_grad()
    assert p.grad is None


def test_validate_names_the_exercise_and_the_case_of_a_bad_case(course: Path) -> None:
    """A typo in a case surfaces when the checks load in the child, as one line of validate."""
    checks = course / "solutions" / "clipping" / "checks.py"
    checks.write_text(checks.read_text().replace('case("all_zero_grads", inputs=', 'case("all_zero_grads", input='))
    result = CliRunner().invoke(app, ["validate", "clipping"])
    assert result.exit_code == ExitStatus.FAILED
    assert "exercise 'clipping', case 'all_zero_grads': unknown key 'input'" in result.output


def test_the_cache_key_covers_the_kit(course: Path) -> None:
    exercise = Catalog().get("clipping")
    assert kit_dir(exercise) == course / "solutions" / "_kit"
    before = cache.exercise_key(exercise)
    helper = course / "solutions" / "_kit" / "optim.py"
    helper.write_text(helper.read_text() + "\n# an edit a reference could depend on\n")
    edited = cache.exercise_key(exercise)
    (course / "solutions" / "_kit" / "extra.py").write_text("X = 1\n")
    added = cache.exercise_key(exercise)
    assert len({before, edited, added}) == 3


def test_validate_refuses_a_kit_that_defines_an_entry_point(course: Path) -> None:
    """Learners' files can import the kit, so it must never hold an answer."""
    exercise = Catalog().get("clipping")
    assert static_problems(exercise) == []
    (course / "solutions" / "_kit" / "shared.py").write_text("def clip_grad_norm_(parameters, max_norm):\n    pass\n")
    problems = static_problems(exercise)
    assert any("defines 'clip_grad_norm_', an entry point of clipping" in p for p in problems), problems


def _learner(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return path


CORRECT_CLIP = '''
import torch
import grind_kit  # allowed: trusted helpers, no answer in it


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    assert grind_kit.flat is grind_kit.optim.flat
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    norm_type = float(norm_type)
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]), norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total
'''


def test_a_learner_may_import_the_kit(tmp_path: Path) -> None:
    verdict = grade(Catalog().get("clipping"), _learner(tmp_path, "uses_kit.py", CORRECT_CLIP))
    assert verdict.status.value == "passed", verdict.message or verdict.first_failure


PATCH_CONSTRUCT = '''
import torch
import grind_kit.optim

# Swap the kit's constructor for one that returns torch's own SGD: the guard sees the learner's
# function on the stack when it calls the forbidden class.
grind_kit.optim.construct = lambda subject, params, kwargs, optimizer=None: torch.optim.SGD(params, **kwargs)


class SGD:
    def __init__(self, params, **kwargs):
        pass
'''

PATCH_FLAT = '''
import torch
import grind_kit.optim

# Make every record zeros: only the learner's own observations change, and they are wrong.
grind_kit.optim.flat = lambda tensors: torch.zeros(sum(t.numel() for t in tensors), dtype=torch.float64)


class SGD:
    def __init__(self, params, lr=1e-3, **kwargs):
        self.params = list(params)

    def zero_grad(self):
        pass

    def step(self):
        pass
'''


@pytest.mark.parametrize("source, status", [(PATCH_CONSTRUCT, "forbidden"), (PATCH_FLAT, "failed")])
def test_patching_the_kit_gains_a_learner_nothing(tmp_path: Path, source: str, status: str) -> None:
    verdict = grade(Catalog().get("sgd-momentum"), _learner(tmp_path, "patch_kit.py", source))
    assert verdict.status.value == status, verdict.message or verdict.first_failure


def test_a_repro_script_finds_the_kit_and_runs_from_anywhere(tmp_path: Path) -> None:
    """grind run --repro holds the failing case and the call, and imports the rest (the case
    code, the kit) from the installed grind and its course instead of inlining them (lr-schedule's
    script was 871 lines); it still runs from a folder with no course in sight."""
    import subprocess

    from judge.repro import repro_script

    exercise = Catalog().get("sgd-momentum")
    learner = ROOT / "tests" / "submissions" / "sgd-momentum" / "learner_zero_init.py"
    script = tmp_path / "repro_sgd.py"
    script.write_text(repro_script(exercise, grade(exercise, learner), learner, script))
    text = script.read_text()
    assert "judge.repro_runtime" in text and "GRIND_KIT" not in text
    ran = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert ran.returncode == 1, ran.stderr
    assert "params per step: first differs at step 1, param 0[0]: expected -0.1, got -0.05" in ran.stdout
