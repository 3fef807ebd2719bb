"""Name the classic mistake(s) a failing submission makes, and say what each one explains.

A failing submission differs from the reference in some *differences*: one per failing case
instance and observation (``(instance, "grad[0]")``), or per instance where it raised or returned
non-data. A pitfall *explains* a difference when it behaves exactly like the learner there.

1. **Exact**: pitfalls that behave like the learner on every failing instance. Among them the
   one agreeing with the learner on the most instances overall wins, so a narrow pitfall never
   steals a broad diagnosis. Combined pitfalls (``pitfall:a+b``, two known mistakes run
   together in the trusted child) compete here too and are named as both mistakes.
2. **Partial**: otherwise, the pitfall explaining the most differences is named with what it
   explains, then the one explaining most of the rest (at most ``MAX_FINDINGS``), and whatever no
   pitfall explains is reported as unexplained. Real code often makes one known mistake plus
   one of its own, or two known mistakes that show on different checks; a diagnosis that
   demanded every difference at once would name neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from judge.compare import Observations, matches
from judge.models import Tolerance
from judge.worker.protocol import CaseRecord, PitfallMeta

MAX_FINDINGS = 3
Difference = tuple[str, str]  # (instance, observation key | "<raised X>" | "<not data>" | "<not run>")


@dataclass
class Finding:
    """One named mistake (or two, for a combination) and the differences it explains."""

    pitfalls: list[PitfallMeta]
    explains: list[Difference]


@dataclass
class Explanation:
    findings: list[Finding]
    unexplained: list[Difference] = field(default_factory=list)
    complete: bool = True  # every difference is explained
    exact: bool = False  # one candidate behaves like the learner on every failing instance
    suspects: list[str] = field(default_factory=list)  # slugs explaining any difference, most first


def same_behaviour(
    a_case: CaseRecord | None,
    a_obs: Observations,
    b_case: CaseRecord | None,
    b_obs: Observations,
    tolerance: Callable[[str, str], Tolerance],
    by_message: bool = True,
) -> bool:
    """Did two subjects behave the same on one case instance?

    ``by_message=False`` compares only the exception type of two errors: :func:`explain` falls
    back to it when no pitfall raises the learner's exact message."""
    if a_case is None or b_case is None:
        return False
    if a_case.status != b_case.status:
        return False
    if a_case.status == "ok":
        return matches(a_obs, b_obs, tolerance) and set(a_obs) == set(b_obs)
    if a_case.status == "error":
        # The type and the message: one exception type covers many mistakes (GradScaler raises
        # AssertionError for update() without an inf check and for unscale_ without a scale),
        # and a diagnosis quotes the message, so a match on the type alone names a mistake the
        # learner did not make.
        a, b = a_case.error, b_case.error
        if a is None or b is None:
            return False
        return (a.type, a.message) == (b.type, b.message) if by_message else a.type == b.type
    return True  # both produced something that is not data


def differences(
    failing: list[str],
    ref_obs: dict[str, Observations],
    learner_cases: dict[str, CaseRecord],
    learner_obs: dict[str, Observations],
    tolerance: Callable[[str, str], Tolerance],
) -> list[Difference]:
    """Every way the learner differs from the reference on the failing instances."""
    found: list[Difference] = []
    for name in failing:
        record = learner_cases.get(name)
        if record is None:
            found.append((name, "<not run>"))
        elif record.status == "error":
            found.append((name, f"<raised {record.error.type if record.error else '?'}>"))
        elif record.status != "ok":
            found.append((name, "<not data>"))
        else:
            have = learner_obs.get(name, {})
            for key, want in ref_obs.get(name, {}).items():
                if key not in have or not matches({key: want}, {key: have[key]}, tolerance):
                    found.append((name, key))
    return found


def _explains(diff: Difference, case: CaseRecord | None, obs: Observations, learner_case: CaseRecord | None,
              learner_obs: Observations, tolerance: Callable[[str, str], Tolerance], by_message: bool) -> bool:
    name, key = diff
    if case is None or learner_case is None or key == "<not run>":
        return False
    if key.startswith("<"):
        return same_behaviour(case, obs, learner_case, learner_obs, tolerance, by_message)
    if case.status != "ok" or key not in obs or key not in learner_obs:
        return False
    return matches({key: obs[key]}, {key: learner_obs[key]}, tolerance)


def explain(
    failing: list[str],
    instances: list[str],
    ref_obs: dict[str, Observations],
    learner_cases: dict[str, CaseRecord],
    learner_obs: dict[str, Observations],
    candidates: list[tuple[list[PitfallMeta], dict[str, CaseRecord], dict[str, Observations]]],
    tolerance: Callable[[str, str], Tolerance],
) -> Explanation | None:
    """The findings that explain the learner's failures, or None when no pitfall explains any.

    ``candidates`` are (pitfalls, case records, observations): one pitfall, or two run together.

    Errors match first on type and message. Only when that leaves no candidate behaving exactly
    like the learner are they matched on type alone: a learner's own wording of the same
    mistake (its own assert text, a different shape in a broadcast error) must still be named,
    but a pitfall raising the learner's very message is better evidence than one raising the
    same type for another reason."""
    if not failing:
        return None

    diffs = differences(failing, ref_obs, learner_cases, learner_obs, tolerance)

    def attempt(by_message: bool) -> Explanation | None:
        def agrees(cases: dict[str, CaseRecord], obs: dict[str, Observations], name: str) -> bool:
            return same_behaviour(cases.get(name), obs.get(name, {}), learner_cases.get(name),
                                  learner_obs.get(name, {}), tolerance, by_message)

        best: tuple[int, int, int] | None = None
        for order, (metas, cases, obs) in enumerate(candidates):
            if not all(agrees(cases, obs, name) for name in failing):
                continue
            # Fewer mistakes first (a single pitfall beats a pair that also fits), then breadth.
            score = (-len(metas), sum(agrees(cases, obs, name) for name in instances), -order)
            if best is None or score > best:
                best = score
        if best is not None:
            metas = candidates[-best[2]][0]
            return Explanation([Finding(metas, diffs)], exact=True)

        # Partial: a greedy cover of the differences, single pitfalls only (pairs that explain
        # only part of it would name two mistakes on the strength of one).
        covers: list[tuple[list[PitfallMeta], set[Difference], int]] = []
        for metas, cases, obs in candidates:
            if len(metas) != 1:
                continue
            explained = {d for d in diffs if _explains(d, cases.get(d[0]), obs.get(d[0], {}), learner_cases.get(d[0]),
                                                       learner_obs.get(d[0], {}), tolerance, by_message)}
            if explained:
                covers.append((metas, explained, sum(agrees(cases, obs, name) for name in instances)))
        covers.sort(key=lambda c: (-len(c[1]), -c[2]))
        suspects = [c[0][0].slug for c in covers]
        remaining = set(diffs)
        findings: list[Finding] = []
        while remaining and covers and len(findings) < MAX_FINDINGS:
            metas, explained, _ = max(covers, key=lambda c: (len(c[1] & remaining), c[2]))
            gained = explained & remaining
            if not gained:
                break
            findings.append(Finding(metas, [d for d in diffs if d in gained]))
            remaining -= gained
        if not findings:
            return None
        return Explanation(findings, [d for d in diffs if d in remaining], complete=not remaining, suspects=suspects)

    strict = attempt(True)
    if strict is not None and strict.exact:
        return strict
    loose = attempt(False)
    if loose is not None and loose.exact:
        return loose
    return strict if strict is not None else loose
