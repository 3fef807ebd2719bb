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

   A partial name must *fit*: where the pitfall predicts a difference from the reference, the
   learner should have made that very difference, within the exercise's tolerance. Each
   observation where the pitfall differs from the reference and the learner does something else
   (another wrong value, or the reference's own value) counts *against* it, unless another
   mistake named with it explains that observation; it is named only when the observations it
   explains outnumber those against it ``FIT`` times over. Where the pitfall agrees with the
   reference it predicts nothing, so the learner's other mistakes there are what the name does
   not cover (reported as unexplained). A mistake that merely coincides with the learner's on
   some inputs (RMSprop's mean square started at the first g^2 equals Adam's bias correction
   under a constant gradient, and nowhere else) would otherwise be named for the checks where
   they agree, and send the learner after a mistake they did not make.
3. **Closest**: when no pitfall fits, none is named; :class:`Near` says which one came closest
   and what it would have given where the learner's answer differs from it, so the verdict can
   say "no known mistake matches; the closest is X, which would give 0.5 where you gave 0.47".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from judge.compare import Observations, matches
from judge.models import Tolerance
from judge.worker.protocol import CaseRecord, PitfallMeta

MAX_FINDINGS = 3
# A partial name fits when the observations it explains outnumber, FIT times over, those where it
# predicts a difference the learner does not make (and no other named mistake explains).
FIT = 2
Difference = tuple[str, str]  # (instance, observation key | "<raised X>" | "<not data>" | "<not run>")


@dataclass
class Finding:
    """One named mistake (or two, for a combination) and the differences it explains."""

    pitfalls: list[PitfallMeta]
    explains: list[Difference]


@dataclass
class Near:
    """The pitfall that came closest when none fits, and one place where it parts from the learner.

    ``index`` is the element's index in ``key`` of ``instance`` (the first where the two differ);
    ``would_give`` and ``gave`` are the pitfall's and the learner's values there, ``expected`` the
    reference's. ``explains`` and ``against`` count the observations it agrees with the learner on
    and those where it predicts a difference the learner does not make."""

    pitfall: PitfallMeta
    instance: str
    key: str
    index: tuple[int, ...] = ()
    would_give: float | None = None
    gave: float | None = None
    expected: float | None = None
    explains: int = 0
    against: int = 0


@dataclass
class Explanation:
    findings: list[Finding]
    unexplained: list[Difference] = field(default_factory=list)
    complete: bool = True  # every difference is explained
    exact: bool = False  # one candidate behaves like the learner on every failing instance
    suspects: list[str] = field(default_factory=list)  # slugs explaining any difference, most first
    closest: Near | None = None  # when nothing is named: the pitfall nearest the learner's answer
    breadth: int = 0  # exact: on how many instances (failing or not) the candidate behaves like the learner


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


Candidate = tuple[list[PitfallMeta], dict[str, CaseRecord], dict[str, Observations]]  # pitfall(s), records, observations
Cover = tuple[list[PitfallMeta], set[Difference], int]  # pitfall, the differences it explains, its breadth


def explain(
    failing: list[str],
    instances: list[str],
    ref_obs: dict[str, Observations],
    learner_cases: dict[str, CaseRecord],
    learner_obs: dict[str, Observations],
    candidates: list[Candidate],
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
    strict, loose = (_attempt(_Round(failing, instances, ref_obs, learner_cases, learner_obs, candidates, tolerance,
                                     diffs, by_message)) for by_message in (True, False))
    named = _named(strict, loose)
    if named is not None:
        return named
    found = strict if strict is not None else loose
    if found is None:
        found = Explanation([], list(diffs), complete=False)
    try:
        found.closest = closest(diffs, ref_obs, learner_cases, learner_obs, candidates, instances, tolerance)
    except (ValueError, TypeError, IndexError, ArithmeticError):
        # The sentence is a courtesy; a learner's odd data (an object array, a ragged shape) must
        # leave the verdict a verdict, with its failures, and never turn it into grind's error.
        found.closest = None
    return found if found.closest is not None or found.suspects else None


def _named(strict: Explanation | None, loose: Explanation | None) -> Explanation | None:
    """Of the two rounds' answers, the one that names a mistake, or None when neither does."""
    def rank(found: Explanation) -> tuple[int, int]:
        return -len(found.findings[0].pitfalls), found.breadth

    if strict is not None and strict.exact and not (loose is not None and loose.exact and rank(loose) > rank(strict)):
        # The learner's very message is better evidence than the same error type, unless the
        # type-alone match behaves like the learner on more instances: a deadlock's wording
        # depends on timing, while a pitfall that hangs where the learner passed is another
        # mistake (a zero shard skipped is not every small shard skipped).
        return strict
    if loose is not None and loose.exact:
        return loose
    for found in (strict, loose):
        if found is not None and found.findings:
            return found
    return None


@dataclass(frozen=True)
class _Round:
    """One round of matching the candidates against the learner: errors compared on type and
    message (``by_message``), or on type alone."""

    failing: list[str]
    instances: list[str]
    ref_obs: dict[str, Observations]
    learner_cases: dict[str, CaseRecord]
    learner_obs: dict[str, Observations]
    candidates: list[Candidate]
    tolerance: Callable[[str, str], Tolerance]
    diffs: list[Difference]
    by_message: bool

    def agrees(self, cases: dict[str, CaseRecord], obs: dict[str, Observations], name: str,
               message: bool | None = None) -> bool:
        return same_behaviour(cases.get(name), obs.get(name, {}), self.learner_cases.get(name),
                              self.learner_obs.get(name, {}), self.tolerance,
                              self.by_message if message is None else message)


def _attempt(round_: _Round) -> Explanation | None:
    exact = _exact(round_)
    return exact if exact is not None else _partial(round_)


def _exact(round_: _Round) -> Explanation | None:
    """The candidate behaving like the learner on every failing instance, if any."""
    best: tuple[int, int, int] | None = None
    for order, (metas, cases, obs) in enumerate(round_.candidates):
        if not all(round_.agrees(cases, obs, name) for name in round_.failing):
            continue
        # Fewer mistakes first (a single pitfall beats a pair that also fits), then breadth,
        # counted on type alone in both rounds so that the two rounds' winners compare.
        score = (-len(metas), sum(round_.agrees(cases, obs, name, False) for name in round_.instances), -order)
        if best is None or score > best:
            best = score
    if best is None:
        return None
    metas = round_.candidates[-best[2]][0]
    return Explanation([Finding(metas, round_.diffs)], exact=True, breadth=best[1])


def _explained(diffs: list[Difference], cases: dict[str, CaseRecord], obs: dict[str, Observations],
               learner_cases: dict[str, CaseRecord], learner_obs: dict[str, Observations],
               tolerance: Callable[[str, str], Tolerance], by_message: bool) -> set[Difference]:
    """The differences one candidate explains (behaves exactly like the learner there)."""
    return {d for d in diffs if _explains(d, cases.get(d[0]), obs.get(d[0], {}), learner_cases.get(d[0]),
                                          learner_obs.get(d[0], {}), tolerance, by_message)}


def _partial(round_: _Round) -> Explanation | None:
    """Partial: a greedy cover of the differences, single pitfalls only (pairs that explain
    only part of it would name two mistakes on the strength of one)."""
    diffs = round_.diffs
    covers = _covers(round_)
    suspects = [c[0][0].slug for c in covers]
    chosen, remaining = _fitting_cover(round_, covers)
    if not chosen:
        if not suspects:
            return None
        return Explanation([], list(diffs), complete=False, suspects=suspects)
    findings = [Finding(c[0], [d for d in diffs if d in gained]) for c, gained in chosen]
    return Explanation(findings, [d for d in diffs if d in remaining], complete=not remaining, suspects=suspects)


def _fitting_cover(round_: _Round, covers: list[Cover]) -> tuple[list[tuple[Cover, set[Difference]]], set[Difference]]:
    """The greedy cover, kept only where its names fit together, else made again of the pitfalls
    that fit on their own."""
    against = {id(c): set(contradictions(round_.diffs, c[1], *_runs(round_.candidates, c[0]), round_.ref_obs,
                                         round_.instances, round_.tolerance))
               for c in covers}

    # A compound fits when whatever each of its mistakes predicts and the learner does not do
    # is explained by another of them (per-tensor clipping explains the gradients, a summed
    # norm the returned total: each predicts the other's observation wrong). Otherwise only
    # pitfalls that fit on their own are named: nowhere do they predict a difference the
    # learner does not make.
    def fits(c: Cover, others: list[Cover]) -> bool:
        unexplained_against = against[id(c)] - set().union(*(o[1] for o in others))
        return len(c[1]) > FIT * len(unexplained_against)

    chosen, remaining = _cover(covers, round_.diffs)
    if not all(fits(c, [o for o, _ in chosen if o is not c]) for c, _ in chosen):
        chosen, remaining = _cover([c for c in covers if fits(c, [])], round_.diffs)
    return chosen, remaining


def _covers(round_: _Round) -> list[Cover]:
    """Each single pitfall explaining any difference, with what it explains and its breadth;
    the most explaining first."""
    covers: list[Cover] = []
    for metas, cases, obs in round_.candidates:
        if len(metas) != 1:
            continue
        explained = _explained(round_.diffs, cases, obs, round_.learner_cases, round_.learner_obs, round_.tolerance,
                               round_.by_message)
        if explained:
            covers.append((metas, explained, sum(round_.agrees(cases, obs, name) for name in round_.instances)))
    covers.sort(key=lambda c: (-len(c[1]), -c[2]))
    return covers


def _cover(pool: list[Cover], diffs: list[Difference]) -> tuple[list[tuple[Cover, set[Difference]]], set[Difference]]:
    """Greedily, the pitfalls explaining most of what is left (at most MAX_FINDINGS), each with
    what it gained, and the differences none of them explains."""
    remaining = set(diffs)
    chosen: list[tuple[Cover, set[Difference]]] = []
    while remaining and pool and len(chosen) < MAX_FINDINGS:
        best = max(pool, key=lambda c: (len(c[1] & remaining), c[2]))
        if not best[1] & remaining:
            break
        chosen.append((best, best[1] & remaining))
        remaining -= best[1]
    return chosen, remaining


def _runs(candidates: list[Candidate],
          metas: list[PitfallMeta]) -> tuple[dict[str, CaseRecord], dict[str, Observations]]:
    for their, cases, obs in candidates:
        if their is metas:
            return cases, obs
    raise KeyError(metas)


def _differs(want: np.ndarray, got: np.ndarray | None, key: str, tolerance: Callable[[str, str], Tolerance]) -> bool:
    return got is None or not matches({key: want}, {key: got}, tolerance)


def contradictions(
    diffs: list[Difference],
    explained: set[Difference],
    cases: dict[str, CaseRecord],
    obs: dict[str, Observations],
    ref_obs: dict[str, Observations],
    instances: list[str],
    tolerance: Callable[[str, str], Tolerance],
) -> list[Difference]:
    """The observations where a pitfall predicts a difference from the reference that the
    learner does not make: the learner matches the reference there, or differs in another way.
    Where the pitfall agrees with the reference it predicts nothing, so a learner's other mistake
    there does not count against it. A pitfall that raises (or returns no data) predicts the whole
    instance, and counts once against it unless the learner did the same there."""
    found: list[Difference] = []
    for name in instances:
        case = cases.get(name)
        if case is None:
            continue
        if case.status != "ok":
            if not any(d in explained for d in diffs if d[0] == name):
                found.append((name, "<instance>"))
            continue
        have = obs.get(name, {})
        for key, array in ref_obs.get(name, {}).items():
            if (name, key) not in explained and _differs(array, have.get(key), key, tolerance):
                found.append((name, key))
    return found


def closest(
    diffs: list[Difference],
    ref_obs: dict[str, Observations],
    learner_cases: dict[str, CaseRecord],
    learner_obs: dict[str, Observations],
    candidates: list[Candidate],
    instances: list[str],
    tolerance: Callable[[str, str], Tolerance],
) -> Near | None:
    """The single pitfall nearest the learner's answer when none fits, and where it parts from it.

    Only a pitfall that predicts a difference somewhere the learner has one qualifies. The one
    explaining the most observations wins, then the one differing from the reference in the most
    of the places where the learner does (a narrow pitfall that shows on one check is not the
    closest to an answer wrong everywhere), then, on the first observation where the two
    disagree, the one whose value is nearer the learner's, relative to the learner's own
    distance from the reference."""
    best: tuple[tuple[float, ...], Near] | None = None
    for order, (metas, cases, obs) in enumerate(candidates):
        if len(metas) != 1:
            continue
        explained = _explained(diffs, cases, obs, learner_cases, learner_obs, tolerance, True)
        overlap = _overlap(diffs, cases, obs, ref_obs, tolerance)
        where = _parting(diffs, explained, cases, obs, ref_obs, learner_obs, tolerance)
        if where is None and not explained:
            continue
        against = contradictions(diffs, explained, cases, obs, ref_obs, instances, tolerance)
        if where is None:
            near = Near(metas[0], diffs[0][0], diffs[0][1], explains=len(explained), against=len(against))
            distance = float("inf")
        else:
            near, distance = _near_at(metas[0], where, len(explained), len(against), tolerance)
        score = (len(explained), overlap, -(distance if distance == distance else float("inf")), -order)
        if best is None or score > best[0]:
            best = (score, near)
    return best[1] if best is not None else None


def _overlap(diffs: list[Difference], cases: dict[str, CaseRecord], obs: dict[str, Observations],
             ref_obs: dict[str, Observations], tolerance: Callable[[str, str], Tolerance]) -> int:
    """In how many of the learner's differences the pitfall differs from the reference too."""
    overlap = 0
    for name, key in diffs:
        case, want = cases.get(name), ref_obs.get(name, {}).get(key)
        if case is not None and (case.status != "ok" or (want is not None and _differs(
                want, obs.get(name, {}).get(key), key, tolerance))):
            overlap += 1
    return overlap


Parting = tuple[str, str, np.ndarray, np.ndarray, np.ndarray]  # instance, key, reference's, pitfall's, learner's


def _parting(diffs: list[Difference], explained: set[Difference], cases: dict[str, CaseRecord],
             obs: dict[str, Observations], ref_obs: dict[str, Observations], learner_obs: dict[str, Observations],
             tolerance: Callable[[str, str], Tolerance]) -> Parting | None:
    """The first numeric observation, of the same shape on all three sides, where the pitfall
    differs from the reference and not as the learner does."""
    for name, key in diffs:
        if key.startswith("<") or (name, key) in explained:
            continue
        case = cases.get(name)
        if case is None or case.status != "ok" or key not in obs.get(name, {}):
            continue
        want = ref_obs.get(name, {}).get(key)
        mine = obs[name][key]
        yours = learner_obs.get(name, {}).get(key)
        if want is None or yours is None or mine.shape != want.shape or yours.shape != want.shape:
            continue
        if not _differs(want, mine, key, tolerance) or mine.dtype.kind not in "biuf" or yours.dtype.kind not in "biuf":
            continue
        return name, key, want, mine, yours
    return None


def _near_at(pitfall: PitfallMeta, where: Parting, explains: int, against: int,
             tolerance: Callable[[str, str], Tolerance]) -> tuple[Near, float]:
    """Where the pitfall and the learner part (the first element apart), and how far the
    pitfall's value is from the learner's relative to the learner's from the reference."""
    name, key, want, mine, yours = where
    tol = tolerance(str(want.dtype), str(yours.dtype))
    w, m, y = (a.astype(np.float64) for a in (want, mine, yours))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        apart = ~np.isclose(m, y, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
        if not apart.any():
            apart = ~np.isclose(m, w, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
        index = tuple(int(i) for i in np.argwhere(apart)[0]) if apart.ndim else ()
        gap, spread = np.abs(m - y), np.abs(y - w)
        gap, spread = gap[np.isfinite(gap)], spread[np.isfinite(spread)]
        distance = float(gap.max() / spread.max()) if gap.size and spread.size and spread.max() > 0 \
            else float("inf")
    return Near(pitfall, name, key, index, float(m[index]), float(y[index]), float(w[index]), explains, against), distance
