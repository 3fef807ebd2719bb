"""The reference's observations: computed in a trusted child, cached, checked before use.

The reference, the pitfalls and (for ``grind validate``) the oracle run in one trusted job of the
exercise's own files; their observations become the cache entry that every later grade reads
(judge.cache), checked on every read since it lives on disk. Pairs of pitfalls, run only when a
diagnosis asks for them, are cached beside it. A job runs in a ``JobRunner``: a warm server when
the caller has one, else a process of its own (judge.executor.ColdRunner).

Only problems on grind's side raise here (JudgeError): a broken exercise, a reference that fails
its own cases.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from judge import cache, kept, witnessed
from judge.environment import require_torch
from judge.errors import JudgeError
from judge.executor import ColdRunner
from judge.kit import kit_dir, kit_modules
from judge.models import Exercise
from judge.subjects import ORACLE, REFERENCE, Reference, SubjectRun, group_cases, split_runs
from judge.worker import protocol
from judge.worker.sandbox import Limits

if TYPE_CHECKING:
    from judge.compare import Observations
    from judge.executor import JobRunner
    from judge.worker.sandbox import RunOutcome

COLD = ColdRunner()  # trusted jobs hide nothing: they carry their own sources and run no learner code

# Combined pitfalls, fetched by name ("a+b") when a diagnosis asks for them (see pair_source).
PairSource = Callable[[list[str]], dict[str, SubjectRun]]


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


def job_for(exercise: Exercise, subjects: list[protocol.SubjectSpec], *, guard: bool = False,
            forbidden: list[str] | None = None, marked: bool = False, record_inputs: bool = False,
            seeds: int | None = None, time_speed: bool = False, check_forbidden: list[str] | None = None,
            combinations: list[str] | None = None) -> protocol.Job:
    """The typed job (worker/protocol.Job) for ``subjects`` of ``exercise``: the checks, the kit,
    the entry points, then only the options given (the wire carries no key that is not set)."""
    job = protocol.Job(checks_source=exercise.checks_path.read_text(encoding="utf-8"),
                       checks_filename=str(exercise.checks_path),
                       kit=kit_modules(kit_dir(exercise)),  # grind_kit, for the checks and pitfalls
                       entry=list(exercise.entry), subjects=subjects)
    if exercise.witness:
        job["witness"] = {"case": exercise.witness[0], "counter": exercise.witness[1]}
    if guard:
        job["guard"] = True
        job["forbidden"] = list(forbidden or [])
    if marked:
        job["marked"] = True
    if record_inputs:
        job["record_inputs"] = True
    if seeds is not None or record_inputs:
        job["seeds"] = seeds
    if time_speed:
        job["time_speed"] = True
    if check_forbidden is not None:
        job["check_forbidden"] = check_forbidden
    if combinations is not None:
        job["combinations"] = combinations
    return job


def file_subject(subject_id: str, path: Path, source: str | None = None) -> protocol.SubjectSpec:
    text = source if source is not None else path.read_text(encoding="utf-8")
    return {"id": subject_id, "kind": "file", "path": str(path), "source": text}


def _run_trusted(exercise: Exercise, seeds: int | None = None, with_oracle: bool = False,
                 worker: JobRunner | None = None) -> RunOutcome:
    """Run the reference, the pitfalls and optionally the oracle, in one trusted child (a fork of
    ``worker`` when given)."""
    require_torch()  # validate and grade reach here first: a missing torch is exit 5, not "failed"
    if exercise.sealed_key:
        raise JudgeError(f"{exercise.slug}: this is a sealed bundle (no reference in it) and its shipped reference "
                         f"observations (key {exercise.sealed_key}, in {cache.cache_root()}) are missing or corrupt; "
                         "rebuild it with 'grind autograder build'")
    subjects = [file_subject(REFERENCE, exercise.reference_path)]
    if with_oracle:
        if not exercise.oracle_path.is_file():
            raise JudgeError(f"{exercise.oracle_path}: file is missing")
        subjects.append(file_subject(ORACLE, exercise.oracle_path))
    subjects.append({"kind": "pitfalls", "path": str(exercise.pitfalls_path),
                     "source": exercise.pitfalls_path.read_text(encoding="utf-8")})
    # The reference's time on the SPEED case rides along (kept in the cache with its observations):
    # a learner's speed run is compared with it and never carries the reference.
    outcome = _trusted_job(exercise, job_for(exercise, subjects, record_inputs=True, seeds=seeds, time_speed=True,
                                          check_forbidden=list(exercise.forbidden)), "computing the reference",
                           worker)
    assert outcome.result is not None
    kept.apply(outcome, outcome.result.instances)  # observed by grind, as a learner's are
    return outcome


def _trusted_job(exercise: Exercise, job: protocol.Job, doing: str, worker: JobRunner | None = None) -> RunOutcome:
    """A job of the exercise's own files, in a process of its own or, with ``worker``, in a fork
    of that warm server (`grind validate` runs everything of one exercise in one server: the job
    carries its sources, so the server's hidden folders do not matter). A warm job that crashed
    without an authoring error (the server died under it) runs again in a process of its own,
    unless grading was stopped (Ctrl-C in watch mode): a worker saves time, never a reference."""
    budget = exercise.time_limit * (2 + len(job["subjects"]) * 4) + 30
    limits = Limits(wall_s=budget, memory_mb=max(exercise.memory_mb, 4096))
    outcome = (worker if worker is not None else COLD).run_job(job, limits)
    if (worker is not None and not worker.shut and outcome.result is None and outcome.status == "crashed"
            and protocol.AUTHORING_PREFIX not in outcome.stderr):
        outcome = COLD.run_job(job, limits)
    if outcome.result is None:
        for line in outcome.stderr.splitlines():
            if line.startswith(protocol.AUTHORING_PREFIX):  # the checks or pitfalls are broken: say where
                raise JudgeError(line[len(protocol.AUTHORING_PREFIX):])
        detail = (outcome.stderr.strip().splitlines() or [""])[-1]
        raise JudgeError(f"{exercise.slug}: {doing} failed: {outcome.message} {detail}".strip())
    return outcome


def with_oracle(exercise: Exercise, ref: Reference, worker: JobRunner | None = None) -> Reference:
    """``ref`` with the oracle's run added, from a trusted job that runs the oracle alone: `grind
    validate` compares the oracle with the reference the cache already holds (keyed by every
    file of the exercise, checked like any entry) instead of running the reference and every
    pitfall again for it."""
    require_torch()
    if not exercise.oracle_path.is_file():
        raise JudgeError(f"{exercise.oracle_path}: file is missing")
    outcome = _trusted_job(exercise, job_for(exercise, [file_subject(ORACLE, exercise.oracle_path)]), "running the oracle",
                           worker)
    assert outcome.result is not None
    kept.apply(outcome, ref.instances)
    runs = split_runs(outcome.result, outcome.observations)
    witnessed.trusted(exercise, runs, ref.instances, ref.witness_raw)
    oracle = runs.get(ORACLE)
    if oracle is None:
        raise JudgeError(f"{exercise.slug}: running the oracle failed: it left no record")
    return Reference(ref.instances, ref.pitfalls, {**ref.subjects, ORACLE: oracle}, ref.unresolved, ref.speed,
                     ref.witness_raw)


def compute_reference(exercise: Exercise, seeds: int | None = None, with_oracle: bool = False,
                      worker: JobRunner | None = None) -> Reference:
    """Fresh, uncached observations (``seeds`` widens the random cases, for oracle tests)."""
    outcome = _run_trusted(exercise, seeds, with_oracle, worker)
    assert outcome.result is not None
    return _reference_from(exercise, outcome.result, outcome.observations)


def reference_with_oracle(exercise: Exercise, worker: JobRunner | None = None) -> Reference:
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
    own = {name: value for name, value in outcome.observations.items()
            if (protocol.split_obs_name(name) or (ORACLE,))[0] != ORACLE}
    cache.store(exercise.slug, key, replace(outcome.result, subjects=subjects), own)
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
    runs = split_runs(result, observations)
    raw = witnessed.reference_raw(exercise, runs, result.instances)
    witnessed.trusted(exercise, runs, result.instances, raw)
    ref = Reference(result.instances, result.pitfalls, runs, list(result.unresolved), result.speed, raw)
    own = ref.subjects[REFERENCE]
    for name in ref.instance_names:
        case = own.cases[name]
        if case.status != "ok":
            why = case.error.message if case.error else case.message or "no result"
            raise JudgeError(f"{exercise.reference_path}: the reference fails its own case '{name}': {why}")
        if not case.keys:
            raise JudgeError(f"{exercise.checks_path}: case '{name}' observes nothing; every case must "
                             "return at least one observation")
    return ref


# References already read and checked by this process, with the stamp of the entry they came
# from: grind watch, grind grade and a daemon-served run grade the same exercise again and again,
# and reading and parsing the entry each time cost more than the learner's whole job.
# At most KEPT_REFERENCES of them, the most recently used: each is 3-5 MB (every pitfall's
# observations), and a daemon that served every exercise once held all of them for its life.
_LOADED: dict[tuple[str, str, str], tuple[tuple[int, ...], Reference]] = {}
KEPT_REFERENCES = 3


def _keep(where: tuple[str, str, str], stamp: tuple[int, ...], reference: Reference) -> None:
    _LOADED.pop(where, None)
    _LOADED[where] = (stamp, reference)  # the newest last
    while len(_LOADED) > KEPT_REFERENCES:
        del _LOADED[next(iter(_LOADED))]


def loaded_reference(exercise: Exercise, key: str) -> Reference | None:
    """The reference this process has already read, if its entry on disk is unchanged; None
    otherwise (nothing is read here: a cold run reads it only after the learner's child is gone)."""
    known = _LOADED.get((exercise.slug, key, str(cache.cache_root())))
    return known[1] if known is not None and known[0] == cache.stamp(exercise.slug, key) else None


def reference_for(exercise: Exercise, key: str | None = None, worker: JobRunner | None = None) -> Reference:
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
        _keep(where, stamp, known[1])
        return known[1]
    hit = cache.load(exercise.slug, key)
    if hit is not None and reference_problem(*hit) is None:
        reference = _reference_from(exercise, *hit)
        if stamp is not None:
            _keep(where, stamp, reference)
        return reference
    begun = time.monotonic()
    outcome = _run_trusted(exercise, worker=worker)
    assert outcome.result is not None
    reference = _reference_from(exercise, outcome.result, outcome.observations)
    cache.store(exercise.slug, key, outcome.result, outcome.observations)
    cache.record_reference_seconds(exercise.slug, time.monotonic() - begun)
    stamp = cache.stamp(exercise.slug, key)
    if stamp is not None:
        _keep(where, stamp, reference)
    return reference


def case_count(exercise: Exercise) -> int:
    """How many checks a verdict on ``exercise`` has: one per case, however many inputs it has."""
    return max(len(group_cases(reference_for(exercise).instances)), 1)


def case_names(exercise: Exercise) -> list[str]:
    """The exercise's cases, in the checks' order: one check each in every verdict."""
    return [case for case, _ in group_cases(reference_for(exercise).instances)]


def pair_source(exercise: Exercise, worker: JobRunner | None = None) -> PairSource:
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
                found.update(split_runs(*hit))
        if missing:
            found.update(_run_pairs(exercise, key, missing, worker))
        if exercise.witness and found:
            ref = reference_for(exercise, key, worker)
            witnessed.trusted(exercise, found, ref.instances, ref.witness_raw)
        return found

    return fetch


def _run_pairs(exercise: Exercise, key: str, names: list[str],
               worker: JobRunner | None = None) -> dict[str, SubjectRun]:
    if exercise.sealed_key:
        return {}  # no pitfalls in a sealed bundle: the pairs it ships are all there is
    subjects: list[protocol.SubjectSpec] = [{"kind": "pitfalls", "path": str(exercise.pitfalls_path),
                                            "source": exercise.pitfalls_path.read_text(encoding="utf-8")}]
    budget = exercise.time_limit * (2 + len(names) * 2) + 30
    job = job_for(exercise, subjects, combinations=names)
    limits = Limits(wall_s=budget, memory_mb=max(exercise.memory_mb, 4096))
    outcome = worker.run_job(job, limits) if worker is not None else None
    if outcome is None or outcome.result is None:  # no worker, or it failed: a process of its own
        outcome = COLD.run_job(job, limits)
    if outcome.result is None:
        return {}  # a diagnosis without pairs is still a diagnosis: never fail the verdict for it
    # A pair job records no inputs (result.instances is empty): a pair is complete when it has
    # a record for every instance of the reference.
    instances = reference_for(exercise, key).instances
    kept.apply(outcome, instances)
    return _store_pairs(exercise, key, names, outcome.result, outcome.observations, instances)


def _store_pairs(exercise: Exercise, key: str, names: list[str], result: protocol.Result,
                 observations: Observations, instances: list[protocol.Instance]) -> dict[str, SubjectRun]:
    """Cache each pair the job ran (one that cannot be built is cached empty, so it is not run
    again); the complete ones, by subject id."""
    runs = split_runs(result, observations)
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
        obs = {k: v for k, v in observations.items() if sid and k.startswith(prefix)}
        stored = protocol.Result(token="", observations_sha256="", subjects=subject, instances=instances,
                                 pitfalls=result.pitfalls)
        cache.store(f"{exercise.slug}.pair.{name}", key, stored, obs)
        if sid:
            found[sid] = runs[sid]
    return found
