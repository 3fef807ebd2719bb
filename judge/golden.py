"""Values and submissions worked out by hand, checked by ``grind validate``.

Why a module of its own: these are the two checks of an exercise against things its author wrote
without the reference, and they read the same kind of input. ``GOLDEN`` in checks.py states
observations ({case: {observation: value}}) that the reference must reproduce; without an oracle
it is the only independent check. ``tests/submissions/<slug>/*.py`` are answers whose line 1 states
the verdict (and pitfall) a learner writing them must get.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from judge.catalog import content_root
from judge.subjects import REFERENCE, Reference
from judge.models import Exercise, Status
from judge.grade import grade

if TYPE_CHECKING:
    from judge.worker.sandbox import WarmWorker

GOLDEN_NAME = "GOLDEN"  # checks.py: {case: {observation: value}} worked out by the instructor
GOLDEN_HEADER = re.compile(r"#\s*expect:\s*(\w+)(?:\s+pitfall=(\S+))?")
GOLDEN_STATUSES = {s.value for s in Status}


def stated_golden(exercise: Exercise) -> tuple[dict[str, dict[str, object]] | None, list[str]]:
    """The ``GOLDEN`` table of checks.py, read as a literal (never run here): ``{case name:
    {observation: value}}`` with values the instructor worked out independently of the
    reference (by hand, from a paper). None when checks.py has none."""
    path = exercise.checks_path
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None, []  # the trusted run reports a broken checks.py, with its line
    found = _last_assignment(tree, GOLDEN_NAME)
    if found is None:
        return None, []
    line, value = found
    where = f"{path}:{line}: {GOLDEN_NAME}"
    try:
        table = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError):
        return None, [f"{where} must be a literal {{case name: {{observation: value}}}} (numbers and lists "
                      "written out, no calls), so validate can read it without running anything"]
    if not isinstance(table, dict) or not all(isinstance(c, str) and isinstance(v, dict) and v and
                                              all(isinstance(k, str) for k in v) for c, v in table.items()):
        return None, [f"{where} must map case names to {{observation: value}} tables"]
    return table, []


def _last_assignment(tree: ast.Module, name: str) -> tuple[int, ast.expr] | None:
    """The line and value of the module's last top-level assignment to ``name`` (the one the
    module ends up with), plain or annotated; None if there is none."""
    found = None
    value: ast.expr | None
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        if value is not None and any(isinstance(t, ast.Name) and t.id == name for t in targets):
            found = (node.lineno, value)
    return found


def golden_value_problems(exercise: Exercise, ref: Reference, table: dict[str, dict[str, object]],
                          complete: bool = False) -> list[str]:
    """The reference against the values the instructor states, at the exercise's tolerance.
    ``complete`` (no oracle: GOLDEN is the only independent check): each case named must state
    every observation the reference makes for it. A table giving only the worked example's
    total_norm once let a reference with a real bug in its gradients validate clean (red-team
    review 2, v1golden)."""
    where = f"{exercise.checks_path}: {GOLDEN_NAME}"
    own = ref.subjects[REFERENCE].obs
    by_case: dict[str, list[str]] = {}
    for instance in ref.instances:
        by_case.setdefault(instance.case, []).append(instance.name)
    problems = []
    for case, values in table.items():
        names = [case] if case in ref.instance_names else by_case.get(case, [])
        if len(names) != 1:
            known = ", ".join(ref.instance_names[:8])
            problems.append(f"{where} names case '{case}', which is not one case input (known: {known})")
            continue
        observed = own.get(names[0], {})
        left_out = [key for key in observed if key not in values]
        if complete and left_out:
            problems.append(f"{GOLDEN_NAME} for case '{case}' leaves out observation(s) {', '.join(left_out)}: "
                            f"nothing independent checks them (there is no oracle); state every observation of "
                            "the case, worked out without the reference")
        problems += [problem for key, value in values.items()
                     if (problem := _golden_value_problem(exercise, where, case, key, value, observed)) is not None]
    return problems


def _golden_value_problem(exercise: Exercise, where: str, case: str, key: str, value: object,
                          observed: dict[str, np.ndarray]) -> str | None:
    """One stated value against the reference's observation, or None when they agree."""
    if key not in observed:
        return (f"{where} gives '{case}' observation '{key}', which the case does not observe "
                f"(it observes: {', '.join(sorted(observed))})")
    have = observed[key]
    try:
        want = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return f"{where} gives '{case}' {key} a value that is not numbers"
    if want.size != have.size:
        return f"{where} gives '{case}' {key} {want.size} value(s); the reference observes {have.size}"
    tol = exercise.tolerance_for(str(have.dtype))
    got = have.astype(np.float64).reshape(want.shape)
    if np.allclose(got, want, rtol=tol.rtol, atol=tol.atol, equal_nan=True):
        return None
    index = np.unravel_index(int(np.argmax(~np.isclose(got, want, rtol=tol.rtol, atol=tol.atol,
                                                       equal_nan=True))), want.shape)
    return (f"the reference disagrees with the golden value of case '{case}': {key}"
            f"{[int(i) for i in index] if want.ndim else ''} is {float(got[index]):.6g}, {GOLDEN_NAME} "
            f"says {float(want[index]):.6g} (rtol {tol.rtol:g}, atol {tol.atol:g}); fix the "
            "reference, or the stated value if you worked it out wrong")


def golden_root() -> Path:
    """The course's ``tests/submissions``: one folder of golden submissions per exercise."""
    return content_root() / "tests" / "submissions"


def golden_problems(exercise: Exercise, folder: Path, worker: WarmWorker | None = None) -> list[str]:
    """Grade each golden submission (``folder/*.py``, first line ``# expect: STATUS [pitfall=SLUG]``)
    with one warm worker (``worker``, which must hide ``folder``, or one of its own), and report
    each whose verdict or named pitfall differs."""
    from contextlib import nullcontext

    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    files = sorted(folder.glob("*.py")) if folder.is_dir() else []
    if not files:
        # The scaffold makes the folder with only its README: an empty one means no verdict a
        # student will see was ever checked by hand (see README, Instructors).
        return [f"{folder}: no golden submissions (*.py); add at least a correct answer written differently from "
                "the reference, with '# expect: passed' on line 1 (the README there says how)"]
    problems, wanted = _golden_headers(files)
    if not any(status == Status.PASSED.value for status, _ in wanted.values()):
        # Only wrong answers (the stub, say) check no verdict a correct student gets.
        problems.append(f"{folder}: no golden submission expects 'passed'; add at least one correct answer written "
                        "differently from the reference, with '# expect: passed' on line 1")
    if not wanted:
        return problems
    with nullcontext(worker) if worker is not None else WarmWorker(hidden_from_learners(exercise, folder)) as warm:
        for path, (status, pitfall) in wanted.items():
            problems += _golden_verdict_problems(exercise, path, status, pitfall, warm)
    return problems


def _golden_headers(files: list[Path]) -> tuple[list[str], dict[Path, tuple[str, str | None]]]:
    """Each file's stated (status, pitfall) from its line 1, and a problem for each file without one."""
    problems, wanted = [], {}
    for path in files:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines() or [""]
        match = GOLDEN_HEADER.match(lines[0])
        if not match or match.group(1) not in GOLDEN_STATUSES:
            problems.append(f"{path}: line 1 must be '# expect: STATUS [pitfall=SLUG]' with STATUS one of "
                            f"{', '.join(sorted(GOLDEN_STATUSES))}")
            continue
        wanted[path] = (match.group(1), match.group(2))
    return problems, wanted


def _golden_verdict_problems(exercise: Exercise, path: Path, status: str, pitfall: str | None,
                             worker: WarmWorker) -> list[str]:
    """Grade one golden submission; a problem if its verdict or pitfall is not the one stated."""
    from judge.worker.sandbox import Limits

    # A short wall clock keeps the infinite loops cheap, as in tests/test_exercises.py.
    limits = Limits(wall_s=2.0) if status == "timeout" else None
    verdict = grade(exercise, path, limits=limits, worker=worker)
    got = verdict.diagnosis.slug if verdict.diagnosis else None
    if verdict.status.value == status and (status != "failed" or got == pitfall):
        return []
    want = status + (f" pitfall={pitfall}" if pitfall else "")
    have = verdict.status.value + (f" pitfall={got}" if got else "")
    why = (verdict.message or "").strip().splitlines()[:1]
    return [f"{path}: golden submission expects '{want}', got '{have}'"
            f"{': ' + why[0][:160].rstrip('.') if why else ''}; fix the exercise, or the header if the "
            "file is wrong"]
