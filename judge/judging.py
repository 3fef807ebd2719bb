"""Judging: one subject's observations against the reference's, as checks and a diagnosis.

Pure comparison: nothing here runs a child (pairs of pitfalls come from a ``PairSource`` the
caller gives). numpy, through judge.compare and judge.diagnose, is imported inside the functions
that compare: on a warm cache the parent then loads it only after the learner's child has exited,
which keeps the peak memory of ``grind run`` near that of torch alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from judge.models import CheckResult, CheckStatus, Diagnosis, Exercise, Status, Tolerance, Verdict
from judge.static_checks import error_verdict
from judge.subjects import REFERENCE, Reference, SubjectRun, group_cases
from judge.worker import protocol
from judge.worker.integrity import PREFIX as MARKS_BREACH

if TYPE_CHECKING:
    from judge.compare import Observations
    from judge.diagnose import Explanation
    from judge.trusted import PairSource

PAIR_SUSPECTS = 4  # pairs are tried among the mistakes that explain the most differences


def tolerance_of(exercise: Exercise) -> Callable[[str, str], Tolerance]:
    """compare() passes both dtypes; the exercise decides by the expected (reference) one."""
    return lambda want, have: exercise.tolerance_for(want)


def error_text(error: protocol.ErrorInfo) -> str:
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
        return {"status": CheckStatus.ERROR, "message": error_text(record.error), "line": record.error.line}
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


def judge_subject(exercise: Exercise, ref: Reference, run: SubjectRun, pairs: PairSource | None = None) -> Verdict:
    """Turn one subject's observations into checks, a status and a diagnosis. ``pairs`` fetches
    combined pitfalls (two known mistakes run together) when no single one explains it all."""
    refused = _refusal(exercise, run)
    if refused is not None:
        return refused
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
    checks = [_case_check(case_name, members, failures, by_instance, ref_obs)
              for case_name, members in group_cases(ref.instances)]
    status = Status.PASSED if not failures else Status.FAILED
    line = next((f.get("line") for f in failures.values() if f.get("line")), None)
    passed = sum(c.status is CheckStatus.PASSED for c in checks)
    message = "All checks passed." if not failures else f"{passed} of {len(checks)} checks passed."
    return Verdict(exercise=exercise.slug, status=status, checks=checks, message=message,
                   diagnosis=diagnosis, learner_line=line, diagnoses=diagnoses, unexplained=unexplained,
                   closest=closest)


def _refusal(exercise: Exercise, run: SubjectRun) -> Verdict | None:
    """The verdict of a subject that used a forbidden API or did not load: nothing to compare."""
    if run.forbidden:
        hit = run.forbidden[0]
        line = f" (line {hit.line})" if hit.line else ""
        if hit.api.startswith(MARKS_BREACH):  # the marks check's own sentence (judge/worker/integrity.py)
            return error_verdict(exercise, Status.FORBIDDEN, hit.api, hit.line)
        return error_verdict(exercise, Status.FORBIDDEN,
                             f"Forbidden API: {hit.api}{line}. This exercise asks you to write it yourself.",
                             hit.line)
    if run.load_error:
        err = run.load_error
        return error_verdict(exercise, Status.ERROR, "Your file could not be loaded: " + error_text(err), err.line)
    return None


def _case_check(case_name: str, members: list[protocol.Instance], failures: dict[str, dict[str, Any]],
                by_instance: dict[str, str], ref_obs: dict[str, Observations]) -> CheckResult:
    """One case's check: passed, or its smallest failing input with what went wrong there."""
    failing = [m for m in members if m.name in failures]
    kind = members[0].kind
    if not failing:
        note = f"{len(members)} inputs" if len(members) > 1 else ""
        return CheckResult(case_name, kind, CheckStatus.PASSED, note, case=case_name, inputs=len(members))
    first = failing[0]  # instances are ordered by size: the first failing is the smallest
    failure = failures[first.name]
    message = failure["message"]
    name = case_name
    if len(members) > 1:
        params = ", ".join(f"{k}={v}" for k, v in first.params.items())
        name = f"{case_name}[{params}]"
        message = f"fails on {len(failing)} of {len(members)} inputs; smallest shown. {message}"
    check = CheckResult(
        name=name, kind=kind, status=failure["status"], message=message, input=first.input,
        expected=failure.get("expected"), got=failure.get("got"),
        max_abs_err=failure.get("max_abs_err"), max_rel_err=failure.get("max_rel_err"),
        pitfall=by_instance.get(first.name), observation=failure.get("key"),
        series=failure.get("series"), instance=first.name, case=case_name,
        inputs=len(members), inputs_failed=len(failing),
    )
    if "expected" not in failure:
        check.expected = _expected_preview(ref_obs.get(first.name, {}), failure.get("key"))
    return check


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
    lines = [f"{case}: {', '.join(keys)}" for case, keys in grouped.items()]
    more = f"; and {len(lines) - 3} more checks" if len(lines) > 4 else ""
    return "; ".join(lines[:3] if more else lines) + more


def _diagnose(ref: Reference, run: SubjectRun, failing: list[str], tol: Callable[[str, str], Tolerance],
              pairs: PairSource | None = None, step_base: int = 0) -> tuple[list[Diagnosis], dict[str, str], str, str]:
    """The named mistakes, the name to show on each failing instance, what is unexplained, and,
    when nothing is named, the sentence saying which known mistake came closest and how far.

    Single pitfalls first; when none explains everything and several explain something, the
    pairs among the strongest suspects are run together (once, then cached) and tried too."""
    from judge.diagnose import explain

    ref_obs = {name: {k: v for k, v in obs.items() if k not in run.untrusted}
               for name, obs in ref.subjects[REFERENCE].obs.items()} if run.untrusted else ref.subjects[REFERENCE].obs
    found = explain(failing, ref.instance_names, ref_obs, run.cases, run.obs, _candidates(ref), tol)
    if found is not None and not found.exact and pairs is not None and found.suspects:
        found = _with_pairs(found, ref, run, failing, ref_obs, tol, pairs)
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


def _with_pairs(found: Explanation, ref: Reference, run: SubjectRun, failing: list[str],
                ref_obs: dict[str, Observations], tol: Callable[[str, str], Tolerance],
                pairs: PairSource) -> Explanation:
    """``found``, or what pairs of pitfalls explain exactly when no single one does.

    Two rounds of pairs, each run once per exercise and then cached: first among the strongest
    suspects; then the strongest with every mistake that shows where it does not explain the
    learner (a mask ignored only matters on masked inputs, and there the learner's k-scaling
    hides it from being named alone)."""
    from judge.diagnose import explain

    top = found.suspects[:PAIR_SUSPECTS]
    rounds = [[f"{a}+{b}" for i, a in enumerate(top) for b in top[i + 1:]],
              [f"{top[0]}+{slug}" for slug in _partners(ref, top, found.unexplained, tol)]]
    extra = Reference(ref.instances, ref.pitfalls, dict(ref.subjects))
    for names in rounds:
        if not names:
            continue
        extra.subjects.update(pairs(names))
        paired = explain(failing, ref.instance_names, ref_obs, run.cases, run.obs, _candidates(extra), tol)
        if paired is not None and paired.exact:
            return paired
    return found


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
