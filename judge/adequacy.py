"""Prove an exercise adequate before learners see it.

- the manifest loads, no stray files, hints present, no TODO left from the scaffold;
- something independent checks the reference: an oracle (``oracle.py``, equal on every case) or
  golden values the instructor states (``GOLDEN`` in checks.py); without either it is not adequate;
- the reference passes, deterministically (two runs, identical observations, and identical
  inputs: inputs that differ are the checks' fault, said as such), and equals the torch oracle
  where there is one;
- the stub fails;
- every pitfall fails at least one case and is diagnosed as itself (mutation testing of the
  checks: a pitfall no case catches, or one named as a different mistake, means the cases
  are not good enough), and by how many tolerances (its margin: a warning under 10x);
- the worked-example values appear in the statement, in the order observed, each beside its
  own observation's name (or, unnamed, in the checks' order), so the public numbers are the real
  ones and no two are swapped;
- the reference runs well inside the time limit;
- every ``forbidden`` name resolves to a real torch object, case names are unique and their kinds
  known, and ``rtol = atol = 0`` only where an oracle matches the reference exactly;
- the golden submissions (``tests/submissions/<slug>/``) get the verdict and pitfall their
  header names, and there is at least one (in a course that has the folder at all).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from judge.corpus import CorpusReport, corpus_files, grade_corpus, judge_corpus
from judge.golden import GOLDEN_NAME, golden_problems, golden_root, golden_value_problems, stated_golden
from judge.judging import judge_subject
from judge.subjects import ORACLE, REFERENCE, Reference
from judge.trusted import compute_reference, reference_for, reference_with_oracle
from judge.kit import kit_problems
from judge.models import CheckStatus, Exercise, Status, Verdict
from judge.grade import grade
from judge.worked_example import STATEMENT_VALUES, statement_problems
from judge.worker.protocol import pitfall_subject

# Re-exported: the CLI and the tests know these as judge.adequacy's (they moved to judge.golden
# and judge.worked_example, which hold the checks against hand-worked values and the statement).
__all__ = ["AdequacyReport", "GOLDEN_NAME", "STATEMENT_VALUES", "check_adequacy", "golden_problems", "golden_root",
           "golden_value_problems", "margin_findings", "pitfall_margins", "stated_golden", "statement_problems",
           "static_problems"]

if TYPE_CHECKING:
    from judge.worker.sandbox import WarmWorker

EXERCISE_FILES = {"exercise.toml", "README.md", "stub.py"}
SOLUTION_FILES = {"reference.py", "checks.py", "pitfalls.py", "oracle.py"}
HEADROOM = 3.0  # the reference must finish in a third of the learner's time limit
MARGIN_WARNING = 10.0  # a pitfall caught by fewer tolerances than this passes a 10x looser tolerance


@dataclass
class AdequacyReport:
    exercise: str
    cases: int = 0
    pitfalls: int = 0
    caught: int = 0
    seconds: float = 0.0
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # subject id -> verdict
    problems: list[str] = field(default_factory=list)
    corpus: CorpusReport | None = None  # how the exercise's corpus was judged, when it has one
    # Said, never failing: each pitfall's margin, and a pitfall caught by less than 10 tolerances.
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    margins: dict[str, float] = field(default_factory=dict)  # pitfall slug -> tolerances to its nearest failing case

    @property
    def ok(self) -> bool:
        return not self.problems


def static_problems(exercise: Exercise) -> list[str]:
    """Problems visible without running anything: stray files, missing hints, leftover TODOs."""
    problems = []
    for folder, allowed in ((exercise.exercise_dir, EXERCISE_FILES), (exercise.solution_dir, SOLUTION_FILES)):
        for path in sorted(folder.iterdir()):
            if path.name == "__pycache__" or path.name.startswith("."):
                continue
            if path.name not in allowed:
                problems.append(f"stray file {path} (expected only {', '.join(sorted(allowed))})")
    if len(exercise.hints) < 2:
        problems.append(f"{exercise.exercise_dir / 'exercise.toml'}: give at least 2 hints, from a nudge to nearly "
                        "the answer")
    for folder in (exercise.exercise_dir, exercise.solution_dir):
        for path in sorted(folder.glob("*")):
            if path.suffix not in (".py", ".md", ".toml"):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if "TODO" in line:
                    problems.append(f"TODO left in {path}:{number}: {line.strip()[:100]}")
    problems += kit_problems(exercise)
    return problems


def _case_margin(want: dict[str, np.ndarray], record: object, have: dict[str, np.ndarray],
                 exercise: Exercise) -> float:
    """How many tolerances a subject's case is from the reference's: the largest
    |have - want| / (atol + rtol * |want|) over its observations (np.isclose's test, so above 1
    fails); infinite for a case that raised, a missing or differently shaped observation, a NaN
    on one side only, or a different integer."""
    if record is None or getattr(record, "status", None) != "ok":
        return math.inf
    worst = 0.0
    for key, a in want.items():
        b = have.get(key)
        if b is None or a.shape != b.shape or (a.dtype.kind == "b") != (b.dtype.kind == "b"):
            return math.inf
        if a.dtype.kind not in "f" or b.dtype.kind not in "biuf":
            # Integers (bf16-rounding's bit patterns) and flags: a tolerance under 1 is exactness,
            # and no loosening an author would make lets a different integer pass.
            if not np.array_equal(a, b):
                return math.inf
            continue
        tol = exercise.tolerance_for(str(a.dtype))
        x, y = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            nan_a, nan_b = np.isnan(x), np.isnan(y)
            if (nan_a != nan_b).any():
                return math.inf
            diff = np.where(nan_a, 0.0, np.abs(y - x))
            allowed = tol.atol + tol.rtol * np.abs(x)
            ratio = np.where(diff == 0, 0.0, np.where(allowed > 0, diff / np.where(allowed > 0, allowed, 1), np.inf))
        if ratio.size:
            worst = max(worst, float(np.nanmax(ratio)))
    return worst


def pitfall_margins(exercise: Exercise, ref: Reference) -> dict[str, tuple[float, str]]:
    """Each caught pitfall's margin: how many tolerances away from the reference its most
    different case is, and that case. That is the loosening that would let the pitfall pass every
    case (a case nearer than that only stops catching it, another still does); a margin under 10
    means a modest loosening would make it pass. The nearest case alone would warn about pitfalls
    that another case catches by a factor of a thousand (adam's eps-inside-sqrt: 1.3x on one
    case, far more on others)."""
    own = ref.subjects[REFERENCE]
    found: dict[str, tuple[float, str]] = {}
    for meta in ref.pitfalls:
        run = ref.subjects.get(pitfall_subject(meta.slug))
        if run is None or run.load_error is not None:
            continue
        for name in ref.instance_names:
            margin = _case_margin(own.obs.get(name, {}), run.cases.get(name), run.obs.get(name, {}), exercise)
            if margin > 1 and (meta.slug not in found or margin > found[meta.slug][0]):
                found[meta.slug] = (margin, name)
    return found


def _margin_text(margin: float) -> str:
    return "infinite" if math.isinf(margin) else f"{margin:.3g}x"


def margin_findings(exercise: Exercise, ref: Reference, report: AdequacyReport) -> None:
    """One note with every pitfall's margin; a warning for each within MARGIN_WARNING."""
    margins = pitfall_margins(exercise, ref)
    report.margins = {slug: margin for slug, (margin, _) in margins.items()}
    if margins:
        report.notes.append("pitfall margins (tolerances between the reference and the pitfall's most different case): " + ", ".join(
            f"{slug} {_margin_text(margin)} ({case})" for slug, (margin, case) in
            sorted(margins.items(), key=lambda item: item[1][0])))
    for slug, (margin, case) in sorted(margins.items(), key=lambda item: item[1][0]):
        if margin < MARGIN_WARNING:
            report.warnings.append(f"pitfall '{slug}' is caught by at most {margin:.3g} tolerances (case '{case}'): a "
                                   f"tolerance {MARGIN_WARNING:g}x looser would let it pass; tighten [tolerance] in "
                                   f"{exercise.exercise_dir / 'exercise.toml'} or add a case where it differs more")


def forbidden_problems(exercise: Exercise, ref: Reference) -> list[str]:
    """A ``forbidden`` entry that names nothing in torch guards nothing: the learner may call the
    real function. The trusted child resolved each name (the parent does not import torch)."""
    manifest = exercise.exercise_dir / "exercise.toml"
    return [f"{manifest}: forbidden entry '{name}' names no torch object (it does not import); fix the spelling "
            "to the full dotted path, e.g. 'torch.nn.functional.cross_entropy'" for name in ref.unresolved]


def tolerance_problems(exercise: Exercise, ref: Reference) -> list[str]:
    """``rtol = atol = 0`` fails correct code that only sums in another order, unless an oracle
    shows that an independent implementation matches the reference bit for bit."""
    exact = [dtype for dtype, tol in exercise.tolerance.items() if tol.rtol == 0 and tol.atol == 0]
    if not exact:
        return []
    manifest = exercise.exercise_dir / "exercise.toml"
    where = f"{manifest}: key 'tolerance' entry '{exact[0]}' has rtol = atol = 0"
    oracle = ref.subjects.get(ORACLE)
    if oracle is None:
        return [f"{where}, which fails correct code on float noise; give it a tolerance (e.g. rtol = 1e-6, "
                f"atol = 1e-7), or add {exercise.oracle_path.name} showing an independent version matches exactly"]
    mine = ref.subjects[REFERENCE].obs
    for name in ref.instance_names:
        a, b = mine.get(name, {}), oracle.obs.get(name, {})
        if a.keys() != b.keys() or any(not np.array_equal(a[k], b[k], equal_nan=True) for k in a):
            return [f"{where}, but the oracle differs from the reference in case '{name}': correct code would "
                    "fail; give it a tolerance (e.g. rtol = 1e-6, atol = 1e-7)"]
    return []


def _input_text(value: object) -> str:
    """An input's picture as text to compare between runs, without the memory addresses a
    repr of a function or object carries ("<function mse_loss at 0x7f...>"), which differ in
    every process and say nothing about the input."""
    import json

    return re.sub(r" at 0x[0-9a-fA-F]+", "", json.dumps(value, sort_keys=True, default=repr))


def check_adequacy(exercise: Exercise, *, seeds: int | None = None, with_stub: bool = True,
                   determinism: bool = False, corpus_root: Path | None = None,
                   golden: Path | None = None, worker: WarmWorker | None = None) -> AdequacyReport:
    """Every check in the module docstring; with ``corpus_root``, also grade the exercise's
    corpus (``corpus_root/<slug>/*.py``, see judge.corpus) and report the share it names; with
    ``golden``, grade the golden submissions in ``golden/<slug>/``.

    Everything runs in one warm server (``worker``, which must hide the corpus and golden
    folders, or one of its own): the reference, pitfalls and oracle as trusted jobs, the stub,
    the corpus and the golden files as learners' jobs. Four torch imports per exercise were most
    of `grind validate --all`'s time. The determinism check alone runs the reference again in a
    process of its own: a fork shares the server's state (its memory layout, whatever it imported
    or seeded at start), and a result that depends on such state is what that check must catch.
    Only folders that exist are hidden: validate never creates anything in the course."""
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    folder = corpus_root / exercise.slug if corpus_root is not None else None
    # A course without tests/submissions at all (an installed grind) has no golden files to
    # check; one that has it must hold some for each exercise it validates.
    golden_folder = golden / exercise.slug if golden is not None and golden.is_dir() else None
    if worker is not None:
        return _check_adequacy(exercise, seeds, with_stub, determinism, folder, golden_folder, worker)
    hidden = hidden_from_learners(exercise, *[f for f in (folder, golden_folder) if f is not None and f.is_dir()])
    with WarmWorker(hidden) as own:
        return _check_adequacy(exercise, seeds, with_stub, determinism, folder, golden_folder, own)


def _check_adequacy(exercise: Exercise, seeds: int | None, with_stub: bool, determinism: bool,
                    folder: Path | None, golden: Path | None, worker: WarmWorker) -> AdequacyReport:
    started = time.monotonic()
    report = AdequacyReport(exercise.slug)
    report.problems += static_problems(exercise)
    oracle = exercise.oracle_path.is_file()
    if seeds is None:
        # After `grind run` or an earlier validate, the reference and every pitfall are not run
        # again just to be compared with the oracle; on a miss their run fills the cache.
        ref = reference_with_oracle(exercise, worker) if oracle else reference_for(exercise, worker=worker)
    else:
        ref = compute_reference(exercise, seeds=seeds, with_oracle=oracle, worker=worker)
    report.cases, report.pitfalls = len(ref.instances), len(ref.pitfalls)
    for subject_id, run in ref.subjects.items():
        report.verdicts[subject_id] = judge_subject(exercise, ref, run)
    failing = _trusted_failures(report)
    _pitfall_findings(report, ref)
    margin_findings(exercise, ref, report)
    cases = {inst.case for inst in ref.instances}
    report.problems += [f"[marks] weights names case '{case}', which the checks do not have (a typo leaves "
                        f"that case worth 1 in every class's marks)" for case, _ in exercise.weights if case not in cases]
    _independence_findings(exercise, ref, report, oracle)
    report.problems += statement_problems(exercise, ref)
    report.problems += forbidden_problems(exercise, ref)
    report.problems += tolerance_problems(exercise, ref)

    elapsed = ref.subjects[REFERENCE].elapsed_s
    if elapsed * HEADROOM > exercise.time_limit:
        report.problems.append(f"the reference takes {elapsed:.2f} s, too close to time_limit = "
                               f"{exercise.time_limit:g} s (keep {HEADROOM:g}x headroom)")
    if determinism:  # in a fresh process, never a fork of ``worker`` (see check_adequacy)
        _determinism_findings(exercise, ref, report, seeds, failing)
    if with_stub:
        stub = grade(exercise, exercise.stub_path, worker=worker)
        report.verdicts["stub"] = stub
        if stub.status is Status.PASSED:
            report.problems.append("the untouched stub passes")
    if folder is not None and corpus_files(folder):
        report.corpus = judge_corpus(exercise, grade_corpus(exercise, folder, worker=worker))
        report.problems += report.corpus.problems()
    if golden is not None:
        _golden_findings(exercise, golden, report, worker)
    report.seconds = time.monotonic() - started
    return report


def _trusted_failures(report: AdequacyReport) -> dict[str, set[str | None]]:
    """The reference or oracle not passing, said; each such problem with the cases it fails on:
    when the determinism check finds a case's inputs differ between runs, that is the cause,
    and the failure is not said as well."""
    failing: dict[str, set[str | None]] = {}
    for subject_id in (REFERENCE, ORACLE):
        verdict = report.verdicts.get(subject_id)
        if verdict is not None and verdict.status is not Status.PASSED:
            failure = verdict.first_failure
            detail = f"{failure.name}: {failure.message}" if failure else verdict.message
            problem = f"the {subject_id} does not pass: {detail}"
            report.problems.append(problem)
            failing[problem] = {c.case for c in verdict.checks if c.status is not CheckStatus.PASSED} or {None}
    return failing


def _pitfall_findings(report: AdequacyReport, ref: Reference) -> None:
    """Every pitfall fails some case and is diagnosed as itself (mutation testing of the checks)."""
    for meta in ref.pitfalls:
        verdict = report.verdicts[pitfall_subject(meta.slug)]
        if verdict.status is Status.PASSED:
            report.problems.append(f"pitfall '{meta.slug}' ({meta.name}) passes every case: no case catches it")
        elif verdict.status in (Status.ERROR, Status.CRASHED):
            report.problems.append(f"pitfall '{meta.slug}' could not run: {verdict.message}")
        elif verdict.diagnosis is None or verdict.diagnosis.slug != meta.slug:
            named = f"'{verdict.diagnosis.slug}'" if verdict.diagnosis else "nothing"
            report.problems.append(f"pitfall '{meta.slug}' is caught but diagnosed as {named}")
        else:
            report.caught += 1


def _independence_findings(exercise: Exercise, ref: Reference, report: AdequacyReport, oracle: bool) -> None:
    """Something independent checks the reference: the oracle, or the GOLDEN values (then
    complete, without an oracle)."""
    table, problems = stated_golden(exercise)
    report.problems += problems
    if table:
        report.problems += golden_value_problems(exercise, ref, table, complete=not oracle)
        if not oracle:
            report.notes.append(f"the reference is checked against {sum(len(v) for v in table.values())} golden "
                                f"observation(s) of {len(table)} case(s) stated in {GOLDEN_NAME}, and no oracle")
    elif not oracle and not problems:
        report.problems.append(
            f"not adequate: nothing independent checks the reference: add {exercise.oracle_path} (an independent "
            f"implementation, e.g. torch's own) or a {GOLDEN_NAME} table in {exercise.checks_path} "
            "({case name: {observation: value}}) with values worked out without the reference")


def _determinism_findings(exercise: Exercise, ref: Reference, report: AdequacyReport, seeds: int | None,
                          failing: dict[str, set[str | None]]) -> None:
    """The reference run again in a fresh process gives the same observations. Inputs first: a
    case whose inputs() builds different inputs each run is the checks' fault, not the
    reference's, and is said as such (replacing the failures it explains)."""
    again = compute_reference(exercise, seeds=seeds)
    shown = {i.name: _input_text(i.input) for i in again.instances}
    moving = [i.name for i in ref.instances if i.name in shown and _input_text(i.input) != shown[i.name]]
    moved = {i.case for i in ref.instances if i.name in moving}
    report.problems = [p for p in report.problems if not (p in failing and failing[p] <= moved)]
    for name in moving[:3]:
        report.problems.append(f"case '{name}''s inputs differ between runs: inputs() in {exercise.checks_path} "
                               "must build the same inputs every time (seed a torch.Generator from the case's "
                               "seed)")
    changed = _first_changed(ref, again, moving)
    if changed is not None:
        report.problems.append(f"the reference is not deterministic: case '{changed}' differs between two runs")


def _first_changed(ref: Reference, again: Reference, moving: list[str]) -> str | None:
    """The first case (whose inputs stayed the same) whose reference observations differ between the runs."""
    first, second = ref.subjects[REFERENCE].obs, again.subjects[REFERENCE].obs
    for name in ref.instance_names:
        if name in moving:
            continue
        a, b = first.get(name, {}), second.get(name, {})
        if a.keys() != b.keys() or any(not np.array_equal(a[k], b[k], equal_nan=True) for k in a):
            return name
    return None


def _golden_findings(exercise: Exercise, golden: Path, report: AdequacyReport, worker: WarmWorker) -> None:
    wrong = golden_problems(exercise, golden, worker)
    report.problems += wrong
    if not wrong:  # said, so an author sees the files were graded at all
        report.notes.append(f"{len(list(golden.glob('*.py')))} golden submission(s) in {golden} got the verdict "
                            "their line 1 states")
