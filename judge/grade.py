"""Grade one submission: the core's main entry point.

static checks (parent, no torch) -> reference observations (cache or trusted child)
-> learner observations (isolated child) -> compare -> diagnose -> Verdict.

A learner's failure, whatever its kind, comes back as a Verdict. Only problems on grind's side
(a broken exercise, a reference that fails its own cases) raise JudgeError.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from judge import cache
from judge.environment import require_torch
from judge.errors import JudgeError
from judge.kit import kit_dir, kit_modules
from judge import witnessed
from judge.speed import speed_advice
from judge.models import CheckResult, CheckStatus, Diagnosis, Exercise, Status, Tolerance, Verdict
from judge.worker import protocol
from judge.worker.integrity import PREFIX as MARKS_BREACH
from judge.worker.poison import status_name as poisoned_api
from judge.worker.sandbox import STARTUP_FAILED, Limits, RunOutcome, WarmWorker, run_job

# The front of grading (the static checks, the folders hidden from the learner, and ``grade``
# itself, which asks the per-user daemon first) lives in judge.submit, which loads none of this
# module's imports: a daemon-served `grind run` never needs them. Re-exported: callers and tests
# know them as judge.grade's.
from judge.submit import (  # noqa: E402, F401
    _error_verdict,
    forbidden_uses,
    grade,
    hidden_from_learners,
    static_verdict,
)

if TYPE_CHECKING:
    from judge.compare import Observations

# numpy (through judge.compare and judge.diagnose) is imported inside the functions that
# compare: on a warm cache the parent then loads it only after the learner's child has exited,
# which keeps the peak memory of `grind run` near that of torch alone.

LEARNER = "learner"
REFERENCE = "reference"
ORACLE = "oracle"


@dataclass
class SubjectRun:
    """One subject's behaviour: its record (load error, per-instance records) and observations."""

    record: protocol.SubjectRecord
    obs: dict[str, Observations] = field(default_factory=dict)
    # Observations the learner's process reported that grind's own count contradicts: not
    # evidence for or against a named mistake (judge/witnessed.py)
    untrusted: frozenset[str] = frozenset()

    @property
    def load_error(self) -> protocol.ErrorInfo | None:
        return self.record.load_error

    @property
    def cases(self) -> dict[str, protocol.CaseRecord]:
        return self.record.cases

    @property
    def forbidden(self) -> list[protocol.ForbiddenHit]:
        return self.record.forbidden

    @property
    def elapsed_s(self) -> float:  # time spent on this subject's cases in the child
        return self.record.elapsed_s


@dataclass
class Reference:
    """Everything trusted the judge knows about an exercise's cases."""

    instances: list[protocol.Instance]
    pitfalls: list[protocol.PitfallMeta]
    subjects: dict[str, SubjectRun]
    unresolved: list[str] = field(default_factory=list)  # forbidden names that name nothing in torch
    speed: protocol.SpeedSample | None = None  # the reference's time on the checks' SPEED case
    witness_raw: float | None = None  # its own count on the witnessed case (judge/witnessed.py)

    @property
    def instance_names(self) -> list[str]:
        return [i.name for i in self.instances]


def _split(result: protocol.Result, observations: Observations) -> dict[str, SubjectRun]:
    runs = {sid: SubjectRun(record) for sid, record in result.subjects.items()}
    for key, array in observations.items():
        parts = protocol.split_obs_name(key)
        if parts is None:
            continue  # not a name the runner writes: ignore it rather than trust it
        sid, instance, name = parts
        if sid in runs:
            runs[sid].obs.setdefault(instance, {})[name] = array
    for run in runs.values():  # safetensors does not keep order: restore the case's own order
        for instance, obs in run.obs.items():
            record = run.cases.get(instance)
            rank = {k: i for i, k in enumerate(record.keys if record else [])}
            run.obs[instance] = dict(sorted(obs.items(), key=lambda kv: rank.get(kv[0], len(rank))))
    return runs


def reference_problem(result: protocol.Result, observations: Observations) -> str | None:
    """Why these trusted observations cannot be compared against, or None when they can.

    A cache entry is checked before use (it lives on disk, where a weakly isolated submission
    might have edited it): every case instance, the reference and every pitfall with a record
    for each, every observation a record names present. An empty comparison is never a pass."""
    if not result.instances:
        return "no case instances"
    names = [i.name for i in result.instances]
    if len(set(names)) != len(names):
        return "duplicate case instances"
    subjects = [REFERENCE] + [protocol.pitfall_subject(p.slug) for p in result.pitfalls]
    for sid in subjects:
        record = result.subjects.get(sid)
        if record is None:
            return f"no record for {sid}"
        if record.load_error is not None:
            continue  # a pitfall that does not load is reported by validate; the reference's is an error
        for name in names:
            case = record.cases.get(name)
            if case is None:
                return f"{sid} has no record for case '{name}'"
            if sid == REFERENCE and (case.status != "ok" or not case.keys):
                continue  # _reference_from names the failing case
            for key in case.keys:
                if protocol.obs_name(sid, name, key) not in observations:
                    return f"{sid}'s observation '{key}' of case '{name}' is missing"
    return None


def _job(exercise: Exercise, subjects: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "checks_source": exercise.checks_path.read_text(encoding="utf-8"),
        "checks_filename": str(exercise.checks_path),
        "kit": kit_modules(kit_dir(exercise)),  # grind_kit, for the checks and pitfalls
        "entry": list(exercise.entry),
        "subjects": subjects,
        **({"witness": {"case": exercise.witness[0], "counter": exercise.witness[1]}} if exercise.witness else {}),
        **extra,
    }


def _file_subject(subject_id: str, path: Path, source: str | None = None) -> dict[str, Any]:
    text = source if source is not None else path.read_text(encoding="utf-8")
    return {"id": subject_id, "kind": "file", "path": str(path), "source": text}


def _run_trusted(exercise: Exercise, seeds: int | None = None, with_oracle: bool = False,
                 worker: WarmWorker | None = None) -> RunOutcome:
    """Run the reference, the pitfalls and optionally the oracle, in one trusted child (a fork of
    ``worker`` when given)."""
    require_torch()  # validate and grade reach here first: a missing torch is exit 5, not "failed"
    if exercise.sealed_key:
        raise JudgeError(f"{exercise.slug}: this is a sealed bundle (no reference in it) and its shipped reference "
                         f"observations (key {exercise.sealed_key}, in {cache.cache_root()}) are missing or corrupt; "
                         "rebuild it with 'grind autograder build'")
    subjects = [_file_subject(REFERENCE, exercise.reference_path)]
    if with_oracle:
        if not exercise.oracle_path.is_file():
            raise JudgeError(f"{exercise.oracle_path}: file is missing")
        subjects.append(_file_subject(ORACLE, exercise.oracle_path))
    subjects.append({"kind": "pitfalls", "path": str(exercise.pitfalls_path),
                     "source": exercise.pitfalls_path.read_text(encoding="utf-8")})
    # The reference's time on the SPEED case rides along (kept in the cache with its observations):
    # a learner's speed run is compared with it and never carries the reference.
    return _trusted_job(exercise, _job(exercise, subjects, record_inputs=True, seeds=seeds, time_speed=True,
                                       check_forbidden=list(exercise.forbidden)), "computing the reference",
                        worker)


def _trusted_job(exercise: Exercise, job: dict[str, Any], doing: str, worker: WarmWorker | None = None) -> RunOutcome:
    """A job of the exercise's own files, in a process of its own or, with ``worker``, in a fork
    of that warm server (`grind validate` runs everything of one exercise in one server: the job
    carries its sources, so the server's hidden folders do not matter). A warm job that crashed
    without an authoring error (the server died under it) runs again in a process of its own,
    unless grading was stopped (Ctrl-C in watch mode): a worker saves time, never a reference."""
    budget = exercise.time_limit * (2 + len(job["subjects"]) * 4) + 30
    limits = Limits(wall_s=budget, memory_mb=max(exercise.memory_mb, 4096))
    outcome = worker.run_job(job, limits) if worker is not None else run_job(job, limits)
    if (worker is not None and not worker.shut and outcome.result is None and outcome.status == "crashed"
            and protocol.AUTHORING_PREFIX not in outcome.stderr):
        outcome = run_job(job, limits)
    if outcome.result is None:
        for line in outcome.stderr.splitlines():
            if line.startswith(protocol.AUTHORING_PREFIX):  # the checks or pitfalls are broken: say where
                raise JudgeError(line[len(protocol.AUTHORING_PREFIX):])
        detail = (outcome.stderr.strip().splitlines() or [""])[-1]
        raise JudgeError(f"{exercise.slug}: {doing} failed: {outcome.message} {detail}".strip())
    return outcome


def with_oracle(exercise: Exercise, ref: Reference, worker: WarmWorker | None = None) -> Reference:
    """``ref`` with the oracle's run added, from a trusted job that runs the oracle alone: `grind
    validate` compares the oracle with the reference the cache already holds (keyed by every
    file of the exercise, checked like any entry) instead of running the reference and every
    pitfall again for it."""
    require_torch()
    if not exercise.oracle_path.is_file():
        raise JudgeError(f"{exercise.oracle_path}: file is missing")
    outcome = _trusted_job(exercise, _job(exercise, [_file_subject(ORACLE, exercise.oracle_path)]), "running the oracle",
                           worker)
    assert outcome.result is not None
    runs = _split(outcome.result, outcome.observations)
    witnessed.trusted(exercise, runs, ref.instances, ref.witness_raw)
    oracle = runs.get(ORACLE)
    if oracle is None:
        raise JudgeError(f"{exercise.slug}: running the oracle failed: it left no record")
    return Reference(ref.instances, ref.pitfalls, {**ref.subjects, ORACLE: oracle}, ref.unresolved, ref.speed,
                     ref.witness_raw)


def compute_reference(exercise: Exercise, seeds: int | None = None, with_oracle: bool = False,
                      worker: WarmWorker | None = None) -> Reference:
    """Fresh, uncached observations (``seeds`` widens the random cases, for oracle tests)."""
    outcome = _run_trusted(exercise, seeds, with_oracle, worker)
    assert outcome.result is not None
    return _reference_from(exercise, outcome.result, outcome.observations)


def reference_with_oracle(exercise: Exercise, worker: WarmWorker | None = None) -> Reference:
    """The reference, the pitfalls and the oracle, in as few trusted runs as the cache allows
    (`grind validate`): with a cache entry, the oracle runs alone (see with_oracle); without
    one, all of them run in one child and the run, less the oracle, becomes the entry that
    grading the stub, the corpus and the golden files then reads."""
    key = cache.exercise_key(exercise)
    if cache.has(exercise.slug, key):  # reference_for checks the entry (and rebuilds a broken one)
        return with_oracle(exercise, reference_for(exercise, key, worker), worker)
    outcome = _run_trusted(exercise, with_oracle=True, worker=worker)
    assert outcome.result is not None
    reference = _reference_from(exercise, outcome.result, outcome.observations)
    subjects = {sid: record for sid, record in outcome.result.subjects.items() if sid != ORACLE}
    kept = {name: value for name, value in outcome.observations.items()
            if (protocol.split_obs_name(name) or (ORACLE,))[0] != ORACLE}
    cache.store(exercise.slug, key, replace(outcome.result, subjects=subjects), kept)
    return reference


def _reference_from(exercise: Exercise, result: protocol.Result, observations: Observations) -> Reference:
    record = result.subjects.get(REFERENCE)
    if record is not None and record.load_error is not None:  # before "no case instances": say why
        error = record.load_error
        where = f"{exercise.reference_path}:{error.line}" if error.line else str(exercise.reference_path)
        raise JudgeError(f"{where}: the reference does not load: {error.type}: {error.message}")
    problem = reference_problem(result, observations)
    if problem is not None:
        raise JudgeError(f"{exercise.checks_path}: the reference's observations are incomplete ({problem})")
    runs = _split(result, observations)
    raw = witnessed.reference_raw(exercise, runs, result.instances)
    witnessed.trusted(exercise, runs, result.instances, raw)
    ref = Reference(result.instances, result.pitfalls, runs, list(result.unresolved), result.speed, raw)
    own = ref.subjects[REFERENCE]
    for name in ref.instance_names:
        record = own.cases[name]
        if record.status != "ok":
            why = record.error.message if record.error else record.message or "no result"
            raise JudgeError(f"{exercise.reference_path}: the reference fails its own case '{name}': {why}")
        if not record.keys:
            raise JudgeError(f"{exercise.checks_path}: case '{name}' observes nothing; every case must "
                             "return at least one observation")
    return ref


# References already read and checked by this process, with the stamp of the entry they came
# from: grind watch, grind grade and a daemon-served run grade the same exercise again and again,
# and reading and parsing the entry each time cost more than the learner's whole job.
_LOADED: dict[tuple[str, str, str], tuple[tuple[int, ...], Reference]] = {}


def reference_for(exercise: Exercise, key: str | None = None, worker: WarmWorker | None = None) -> Reference:
    """Cached reference observations; computed (and published atomically) on a miss, or when
    the entry on disk is incomplete or corrupt (it is then rebuilt, never trusted).
    ``key`` saves hashing the exercise's files again when the caller already did. An entry this
    process already checked is reused while its files on disk are unchanged (same inode, size and
    mtime); any change to it is read and checked again. ``worker``: a warm server that computes
    a missing entry instead of a process of its own."""
    key = key or cache.exercise_key(exercise)
    where = (exercise.slug, key, str(cache.cache_root()))
    stamp = cache.stamp(exercise.slug, key)
    known = _LOADED.get(where)
    if stamp is not None and known is not None and known[0] == stamp:
        return known[1]
    hit = cache.load(exercise.slug, key)
    if hit is not None and reference_problem(*hit) is None:
        reference = _reference_from(exercise, *hit)
        if stamp is not None:
            _LOADED[where] = (stamp, reference)
        return reference
    begun = time.monotonic()
    outcome = _run_trusted(exercise, worker=worker)
    assert outcome.result is not None
    reference = _reference_from(exercise, outcome.result, outcome.observations)
    cache.store(exercise.slug, key, outcome.result, outcome.observations)
    cache.record_reference_seconds(exercise.slug, time.monotonic() - begun)
    stamp = cache.stamp(exercise.slug, key)
    if stamp is not None:
        _LOADED[where] = (stamp, reference)
    return reference


# ---------------------------------------------------------------------------------------------
# Judging observations


def tolerance_of(exercise: Exercise) -> Callable[[str, str], Tolerance]:
    """compare() passes both dtypes; the exercise decides by the expected (reference) one."""
    return lambda want, have: exercise.tolerance_for(want)


def _error_text(error: protocol.ErrorInfo) -> str:
    text = f"{error.type}: {error.message}" if error.message else error.type
    if error.line:
        text += f" (line {error.line}: {error.code})"
    return text


def _instance_failure(ref_obs: Observations, record: protocol.CaseRecord | None, obs: Observations,
                      tol: Callable[[str, str], Tolerance], step_base: int = 0,
                      entries: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """None if this instance passed, else what went wrong, as data."""
    if record is None:
        return {"status": CheckStatus.NOT_RUN, "message": "not run: the submission stopped before this case"}
    if record.status == "error" and record.error is not None:
        return {"status": CheckStatus.ERROR, "message": _error_text(record.error), "line": record.error.line}
    if record.status != "ok":
        return {"status": CheckStatus.FAILED, "message": record.message}
    if not ref_obs:  # never a pass by comparing nothing (reference_problem makes this unreachable)
        return {"status": CheckStatus.ERROR, "message": "grind has no reference observations for this case"}
    from judge.compare import compare

    mismatch = compare(ref_obs, obs, tol, step_base, entries)
    if mismatch is None:
        return None
    return {"status": CheckStatus.FAILED, "message": mismatch.message, "expected": mismatch.expected,
            "got": mismatch.got, "max_abs_err": mismatch.max_abs_err, "max_rel_err": mismatch.max_rel_err,
            "key": mismatch.key, "series": mismatch.series}


PairSource = Callable[[list[str]], dict[str, SubjectRun]]
PAIR_SUSPECTS = 4  # pairs are tried among the mistakes that explain the most differences


def judge_subject(exercise: Exercise, ref: Reference, run: SubjectRun, pairs: PairSource | None = None) -> Verdict:
    """Turn one subject's observations into checks, a status and a diagnosis. ``pairs`` fetches
    combined pitfalls (two known mistakes run together) when no single one explains it all."""
    if run.forbidden:
        hit = run.forbidden[0]
        line = f" (line {hit.line})" if hit.line else ""
        if hit.api.startswith(MARKS_BREACH):  # the marks check's own sentence (judge/worker/integrity.py)
            return _error_verdict(exercise, Status.FORBIDDEN, hit.api, hit.line)
        return _error_verdict(exercise, Status.FORBIDDEN,
                              f"Forbidden API: {hit.api}{line}. This exercise asks you to write it yourself.",
                              hit.line)
    if run.load_error:
        err = run.load_error
        return _error_verdict(exercise, Status.ERROR, "Your file could not be loaded: " + _error_text(err), err.line)
    tol = tolerance_of(exercise)
    ref_obs = ref.subjects[REFERENCE].obs
    failures: dict[str, dict[str, Any]] = {}
    for instance in ref.instances:
        name = instance.name
        failure = _instance_failure(ref_obs.get(name, {}), run.cases.get(name), run.obs.get(name, {}), tol,
                                    exercise.step_base, instance.entries)
        if failure:
            failures[name] = failure

    diagnoses, by_instance, unexplained, closest = _diagnose(ref, run, list(failures), tol, pairs,
                                                             exercise.step_base)
    diagnosis = diagnoses[0] if diagnoses else None

    checks: list[CheckResult] = []
    for case_name, members in _group(ref.instances):
        failing = [m for m in members if m.name in failures]
        kind = members[0].kind
        if not failing:
            note = f"{len(members)} inputs" if len(members) > 1 else ""
            checks.append(CheckResult(case_name, kind, CheckStatus.PASSED, note, case=case_name,
                                      inputs=len(members)))
            continue
        first = failing[0]  # instances are ordered by size: the first failing is the smallest
        failure = failures[first.name]
        message = failure["message"]
        name = case_name
        if len(members) > 1:
            params = ", ".join(f"{k}={v}" for k, v in first.params.items())
            name = f"{case_name}[{params}]"
            message = f"fails on {len(failing)} of {len(members)} inputs; smallest shown. {message}"
        checks.append(CheckResult(
            name=name, kind=kind, status=failure["status"], message=message, input=first.input,
            expected=failure.get("expected"), got=failure.get("got"),
            max_abs_err=failure.get("max_abs_err"), max_rel_err=failure.get("max_rel_err"),
            pitfall=by_instance.get(first.name), observation=failure.get("key"),
            series=failure.get("series"), instance=first.name, case=case_name,
            inputs=len(members), inputs_failed=len(failing),
        ))
        if "expected" not in failure:
            checks[-1].expected = _expected_preview(ref_obs.get(first.name, {}), failure.get("key"))

    status = Status.PASSED if not failures else Status.FAILED
    line = next((f.get("line") for f in failures.values() if f.get("line")), None)
    passed = sum(c.status is CheckStatus.PASSED for c in checks)
    message = "All checks passed." if not failures else f"{passed} of {len(checks)} checks passed."
    return Verdict(exercise=exercise.slug, status=status, checks=checks, message=message,
                   diagnosis=diagnosis, learner_line=line, diagnoses=diagnoses, unexplained=unexplained,
                   closest=closest)


def _candidates(ref: Reference) -> list[tuple[list[protocol.PitfallMeta], dict[str, protocol.CaseRecord],
                                               dict[str, Observations]]]:
    """Every pitfall, then every combination the exercise ran (``pitfall:a+b``), as evidence."""
    metas = {p.slug: p for p in ref.pitfalls}
    found = []
    for sid, run in ref.subjects.items():
        if not sid.startswith(protocol.PITFALL):
            continue
        slugs = sid[len(protocol.PITFALL):].split("+")
        if all(s in metas for s in slugs) and len(slugs) <= 2:
            found.append(([metas[s] for s in slugs], run.cases, run.obs))
    found.sort(key=lambda c: len(c[0]))  # single pitfalls first: their order breaks ties
    return found


def _where(diffs: list[tuple[str, str]], instances: list[protocol.Instance]) -> str:
    """"worked_example: grad[0], grad[1]; random: total_norm", by check, in case order."""
    case_of = {i.name: i.case for i in instances}
    grouped: dict[str, list[str]] = {}
    for instance, key in diffs:
        keys = grouped.setdefault(case_of.get(instance, instance), [])
        shown = {"<not data>": "returned something that is not data"}.get(key, key.strip("<>"))
        if shown not in keys:
            keys.append(shown)
    shown = [f"{case}: {', '.join(keys)}" for case, keys in grouped.items()]
    more = f"; and {len(shown) - 3} more checks" if len(shown) > 4 else ""
    return "; ".join(shown[:3] if more else shown) + more


def _diagnose(ref: Reference, run: SubjectRun, failing: list[str], tol: Callable[[str, str], Tolerance],
              pairs: PairSource | None = None, step_base: int = 0) -> tuple[list[Diagnosis], dict[str, str], str, str]:
    """The named mistakes, the name to show on each failing instance, what is unexplained, and,
    when nothing is named, the sentence saying which known mistake came closest and how far.

    Single pitfalls first; when none explains everything and several explain something, the
    pairs among the strongest suspects are run together (once, then cached) and tried too."""
    from judge.diagnose import explain

    candidates = _candidates(ref)
    ref_obs = {name: {k: v for k, v in obs.items() if k not in run.untrusted}
               for name, obs in ref.subjects[REFERENCE].obs.items()} if run.untrusted else ref.subjects[REFERENCE].obs
    found = explain(failing, ref.instance_names, ref_obs, run.cases, run.obs, candidates, tol)
    if found is not None and not found.exact and pairs is not None and found.suspects:
        # Two rounds of pairs, each run once per exercise and then cached: first among the
        # strongest suspects; then the strongest with every mistake that shows where it does
        # not explain the learner (a mask ignored only matters on masked inputs, and there the
        # learner's k-scaling hides it from being named alone).
        top = found.suspects[:PAIR_SUSPECTS]
        rounds = [[f"{a}+{b}" for i, a in enumerate(top) for b in top[i + 1:]],
                  [f"{top[0]}+{slug}" for slug in _partners(ref, top, found.unexplained, tol)]]
        extra = Reference(ref.instances, ref.pitfalls, dict(ref.subjects))
        for names in rounds:
            if not names:
                continue
            extra.subjects.update(pairs(names))
            paired = explain(failing, ref.instance_names, ref_obs, run.cases, run.obs,
                             _candidates(extra), tol)
            if paired is not None and paired.exact:
                found = paired
                break
    if found is None:
        return [], {}, "", ""
    if not found.findings:
        return [], {}, "", _closest_text(found.closest, ref.instances, step_base)
    diagnoses: list[Diagnosis] = []
    by_instance: dict[str, str] = {}
    for finding in found.findings:
        where = _where(finding.explains, ref.instances)
        names = " + ".join(p.name for p in finding.pitfalls)
        for meta in finding.pitfalls:
            diagnoses.append(Diagnosis(meta.slug, meta.name, meta.explanation, meta.hint, where,
                                       found.complete, meta.library, meta.convention))
        for instance, _ in finding.explains:
            by_instance.setdefault(instance, names)
    return diagnoses, by_instance, _where(found.unexplained, ref.instances), ""


def _distinct_texts(would: float, gave: float, expected: float | None) -> tuple[str, str, str | None]:
    """Three values written alike (judge.numbers), with as many digits as it takes for the ones
    that differ to read differently ("would give -0.1 where you gave -0.1; expected -0.1" hides
    that the pitfall's value is not the expected one)."""
    from judge.numbers import number_text, pair_text

    values = [would, gave] + ([expected] if expected is not None else [])
    texts = list(pair_text(would, gave))
    if expected is not None:
        texts.append(pair_text(expected, gave)[0])
        for digits in range(2, 18):
            if len(set(texts)) >= len(set(values)):
                break
            texts = [number_text(v, 10.0 ** -digits) for v in values]
    return texts[0], texts[1], texts[2] if expected is not None else None


def _closest_text(near: Any, instances: list[protocol.Instance], step_base: int) -> str:
    """"No known mistake matches; the closest is X, which would give 0.5 where you gave 0.47 ...":
    said instead of a name when no pitfall fits the learner's answer (see judge.diagnose)."""
    from judge.compare import index_text

    if near is None:
        return ""
    meta = near.pitfall
    head = f"No known mistake matches your answer; the closest is {meta.name} ({meta.slug})"
    instance = next((i for i in instances if i.name == near.instance), None)
    case = instance.case if instance is not None else near.instance
    if near.would_give is None or near.gave is None:
        return f"{head}, which would fail {case} in another way than yours."
    where = index_text(near.index, near.key, step_base, instance.entries.get(near.key) if instance and
                       instance.entries else None)
    would, gave, expected = _distinct_texts(near.would_give, near.gave, near.expected)
    place = f"{case}, {near.key}" + (f", {where}" if where else "")
    text = f"{head}, which would give {would} where you gave {gave} ({place}"
    text += f"; expected {expected})." if expected is not None else ")."
    if near.explains:
        text += (f" It agrees with yours on {near.explains} of the observations that differ, and predicts "
                 f"something else on {near.against}.")
    return text


def _partners(ref: Reference, top: list[str], unexplained: list[tuple[str, str]],
              tol: Callable[[str, str], Tolerance]) -> list[str]:
    """Pitfalls (other than the top suspects) that differ from the reference somewhere the lead
    suspect leaves unexplained: the only ones that could complete it as a pair."""
    from judge.diagnose import same_behaviour

    where = {instance for instance, _ in unexplained}
    own = ref.subjects[REFERENCE]
    found = []
    for meta in ref.pitfalls:
        run = ref.subjects.get(protocol.pitfall_subject(meta.slug))
        if meta.slug in top[:PAIR_SUSPECTS] or run is None or run.load_error is not None:
            continue
        if any(not same_behaviour(run.cases.get(i), run.obs.get(i, {}), own.cases.get(i), own.obs.get(i, {}), tol)
               for i in where):
            found.append(meta.slug)
    return found


def _expected_preview(obs: Observations, key: str | None) -> Any:
    from judge.compare import to_json_value

    if key and key in obs:
        return to_json_value(obs[key])
    return {k: to_json_value(v) for k, v in obs.items()} if len(obs) <= 4 else None


def case_count(exercise: Exercise) -> int:
    """How many checks a verdict on ``exercise`` has: one per case, however many inputs it has."""
    return max(len(_group(reference_for(exercise).instances)), 1)


def case_names(exercise: Exercise) -> list[str]:
    """The exercise's cases, in the checks' order: one check each in every verdict."""
    return [case for case, _ in _group(reference_for(exercise).instances)]


def _group(instances: list[protocol.Instance]) -> list[tuple[str, list[protocol.Instance]]]:
    groups: dict[str, list[protocol.Instance]] = {}
    for inst in instances:
        groups.setdefault(inst.case, []).append(inst)
    for members in groups.values():
        members.sort(key=lambda m: (m.params.get("size", 0), m.params.get("seed", 0)))
    return list(groups.items())


def _timeout_line(trace: str, filename: str) -> int | None:
    for match in re.finditer(r'File "(.*)", line (\d+)', trace):
        if match.group(1) == filename:
            return int(match.group(2))
    return None


def run_learner(exercise: Exercise, source: str, filename: str, limits: Limits | None = None,
                worker: WarmWorker | None = None, speed: bool = False, marked: bool = False) -> RunOutcome:
    """``marked``: the child also checks, after every case, that the learner's code replaced
    nothing in the libraries the judge's own code uses (judge/worker/integrity.py)."""
    job = _job(exercise, [{"id": LEARNER, "kind": "file", "path": filename, "source": source}],
               guard=True, forbidden=list(exercise.forbidden), time_speed=speed, **({"marked": True} if marked else {}))
    limits = limits or Limits(wall_s=exercise.time_limit, memory_mb=exercise.memory_mb)
    if worker is not None:
        outcome = worker.run_job(job, limits)
    else:
        outcome = run_job(job, limits, hidden_from_learners(exercise))
    if marked and outcome.result is None and outcome.status == "crashed":
        # Read here, in grind's process, from the exit status alone: the learner's process has
        # no say in it beyond calling the poisoned implementation (judge/worker/poison.py).
        outcome.forbidden_api = poisoned_api(exercise.forbidden, outcome.returncode, outcome.stderr)
    return outcome


def verdict_from_outcome(exercise: Exercise, ref: Reference, outcome: RunOutcome, filename: str,
                         worker: WarmWorker | None = None, source: str | None = None) -> Verdict:
    if outcome.forbidden_api is not None:
        verdict = _error_verdict(exercise, Status.FORBIDDEN,
                                 f"Forbidden API: {outcome.forbidden_api}. This exercise asks you to write it "
                                 "yourself; in a graded run its implementation is absent, and calling it ended "
                                 "the run.")
    elif outcome.status == "timeout":
        line = _timeout_line(outcome.timeout_trace, filename)
        case = (outcome.last_case or "").split(" ", 1)[-1]
        where = f" while running case '{case}'" if case else ""
        at = f", last seen at line {line}" if line else ""
        verdict = _error_verdict(exercise, Status.TIMEOUT,
                                 f"Time limit exceeded: {outcome.message}{where}{at}. Look for a loop that "
                                 f"never ends or work that grows too fast.", line)
    elif outcome.message.startswith(STARTUP_FAILED):
        # Not the learner's doing: the child was still importing torch when its start-up clock ran
        # out (a busy machine). Said as grind's, so nobody goes looking for a bug in their code.
        verdict = _error_verdict(exercise, Status.CRASHED, f"grind's worker did not get going: {outcome.message}. "
                                 "The machine may be busy: run it again.")
    elif outcome.status != "ok" or outcome.result is None:
        verdict = _error_verdict(exercise, Status.CRASHED, f"The submission crashed the worker: {outcome.message}.")
    else:
        try:
            verdict = _judge_learner(exercise, ref, outcome, filename, worker, source)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
            # protocol.parse_result already refused every malformed shape; whatever still gets
            # here was forged from inside the child, so it is the submission's failure, as data.
            verdict = _error_verdict(exercise, Status.CRASHED, "The submission crashed the worker: its result was "
                                     f"malformed ({type(exc).__name__}) and is not trusted.")
    verdict.stdout, verdict.stderr = outcome.stdout, outcome.stderr
    return verdict


def pair_source(exercise: Exercise, worker: WarmWorker | None = None) -> PairSource:
    """Combined pitfalls on demand: each pair ("a+b") is run once in a trusted child, only when
    a diagnosis asks for it, and cached beside the reference (running every pair of adam's
    eighteen mistakes up front would cost a learner's first run half a minute).

    With the ``worker`` that graded the learner (watch, batch grading), the pairs run as one
    more fork of it rather than in a process that imports torch again: a pair job carries its
    own sources and runs only the judge's code, and a fork of the server inherits nothing from
    the learner's earlier job (each job is a fresh copy-on-write fork, killed with all it left)."""

    def fetch(names: list[str]) -> dict[str, SubjectRun]:
        key = cache.exercise_key(exercise)
        wanted = sorted({"+".join(sorted(name.split("+"))) for name in names})
        found: dict[str, SubjectRun] = {}
        missing = []
        for name in wanted:
            hit = cache.load(f"{exercise.slug}.pair.{name}", key)
            if hit is None:
                missing.append(name)
            else:
                found.update(_split(*hit))
        if missing:
            found.update(_run_pairs(exercise, key, missing, worker))
        if exercise.witness and found:
            ref = reference_for(exercise, key, worker)
            witnessed.trusted(exercise, found, ref.instances, ref.witness_raw)
        return found

    return fetch


def _run_pairs(exercise: Exercise, key: str, names: list[str],
               worker: WarmWorker | None = None) -> dict[str, SubjectRun]:
    if exercise.sealed_key:
        return {}  # no pitfalls in a sealed bundle: the pairs it ships are all there is
    subjects = [{"kind": "pitfalls", "path": str(exercise.pitfalls_path),
                 "source": exercise.pitfalls_path.read_text(encoding="utf-8")}]
    budget = exercise.time_limit * (2 + len(names) * 2) + 30
    job = _job(exercise, subjects, combinations=names)
    limits = Limits(wall_s=budget, memory_mb=max(exercise.memory_mb, 4096))
    outcome = worker.run_job(job, limits) if worker is not None else None
    if outcome is None or outcome.result is None:  # no worker, or it failed: a process of its own
        outcome = run_job(job, limits)
    if outcome.result is None:
        return {}  # a diagnosis without pairs is still a diagnosis: never fail the verdict for it
    result, runs = outcome.result, _split(outcome.result, outcome.observations)
    # A pair job records no inputs (result.instances is empty): a pair is complete when it has
    # a record for every instance of the reference.
    instances = reference_for(exercise, key).instances
    expected = {i.name for i in instances}
    found: dict[str, SubjectRun] = {}
    for name in names:
        a, b = name.split("+")
        sid = next((s for s in (protocol.pitfall_subject(f"{a}+{b}"), protocol.pitfall_subject(f"{b}+{a}"))
                    if s in runs), None)
        subject = {sid: result.subjects[sid]} if sid else {}  # empty: this pair cannot be built
        if sid and set(runs[sid].cases) != expected:
            continue
        prefix = f"{sid}{protocol.SEP}"
        obs = {k: v for k, v in outcome.observations.items() if sid and k.startswith(prefix)}
        stored = protocol.Result(token="", observations_sha256="", subjects=subject, instances=instances,
                                 pitfalls=result.pitfalls)
        cache.store(f"{exercise.slug}.pair.{name}", key, stored, obs)
        if sid:
            found[sid] = runs[sid]
    return found


def _judge_learner(exercise: Exercise, ref: Reference, outcome: RunOutcome, filename: str,
                   worker: WarmWorker | None = None, source: str | None = None) -> Verdict:
    assert outcome.result is not None
    run = _split(outcome.result, outcome.observations).get(LEARNER)
    if run is None:
        return _error_verdict(exercise, Status.CRASHED, "The worker returned no observations for the submission.")
    not_counted = witnessed.learner(exercise, ref, run, outcome.witness)
    verdict = judge_subject(exercise, ref, run, pairs=pair_source(exercise, worker))
    if not_counted:
        verdict.notices.append(not_counted)
    speed = outcome.result.speed
    if verdict.passed and speed is not None and ref.speed is not None:
        advice = speed_advice(dict(asdict(speed), reference_s=ref.speed.reference_s),
                              source_of(filename) if source is None else source)
        if advice:
            verdict.notices.append(advice)
    return verdict


def source_of(filename: str) -> str:
    from judge.text import read_source

    try:
        return read_source(Path(filename)).text
    except OSError:
        return ""


def grade_source(exercise: Exercise, key: str, source: str, filename: str, limits: Limits | None = None,
                 worker: WarmWorker | None = None, speed: bool = False, marked: bool = False) -> Verdict:
    """Grade a submission that passed the static checks: run it, compare, diagnose. This is
    also what the per-user daemon runs for ``grind run`` (its warm server as ``worker``), so
    that the client neither loads numpy nor reads the reference: it only renders the verdict."""
    if cache.has(exercise.slug, key):
        # Cached: read it after the learner's child is gone, so the two never share the peak.
        outcome = run_learner(exercise, source, filename, limits, worker, speed, marked)
        ref = reference_for(exercise, key)
    elif isinstance(worker, WarmWorker):
        # Not cached, with a warm server of our own (a class, watch, the corpus, the daemon): the
        # reference is one more fork of it, before the learner's job (a server runs one job at a
        # time). A fork starts in milliseconds; a process of its own imports torch again, about
        # 3.5 s of CPU on a 2-core laptop.
        ref = reference_for(exercise, key, worker)
        outcome = run_learner(exercise, source, filename, limits, worker, speed, marked)
    else:
        # Not cached: the reference's child and the learner's start together, so on a cold
        # cache the two torch imports overlap instead of adding up.
        with ThreadPoolExecutor(max_workers=1) as pool:
            ref_future = pool.submit(reference_for, exercise, key)
            outcome = run_learner(exercise, source, filename, limits, worker, speed, marked)
            ref = ref_future.result()
    verdict = verdict_from_outcome(exercise, ref, outcome, filename, worker, source)
    verdict.isolation = outcome.isolation
    return verdict
