"""Name the classic mistake a failing submission makes.

A pitfall *fits* when, on every case where the learner failed, the pitfall produced the same
observations (or raised the same exception). Among the pitfalls that fit, the one agreeing with
the learner on the most cases overall wins, so a narrow pitfall never steals a broad diagnosis.
"""

from __future__ import annotations

from typing import Callable

from judge.compare import Observations, compare
from judge.models import Tolerance
from judge.worker.protocol import CaseRecord, PitfallMeta


def same_behaviour(
    a_case: CaseRecord | None,
    a_obs: Observations,
    b_case: CaseRecord | None,
    b_obs: Observations,
    tolerance: Callable[[str, str], Tolerance],
) -> bool:
    """Did two subjects behave the same on one case instance?"""
    if a_case is None or b_case is None:
        return False
    if a_case.status != b_case.status:
        return False
    if a_case.status == "ok":
        return compare(a_obs, b_obs, tolerance) is None and set(a_obs) == set(b_obs)
    if a_case.status == "error":
        return a_case.error is not None and b_case.error is not None and a_case.error.type == b_case.error.type
    return True  # both produced something that is not data


def diagnose(
    failing: list[str],
    instances: list[str],
    learner_cases: dict[str, CaseRecord],
    learner_obs: dict[str, Observations],
    pitfalls: list[PitfallMeta],
    pitfall_cases: dict[str, dict[str, CaseRecord]],
    pitfall_obs: dict[str, dict[str, Observations]],
    tolerance: Callable[[str, str], Tolerance],
) -> PitfallMeta | None:
    """Return the metadata of the pitfall that best explains the failures, or None."""
    if not failing:
        return None
    best: tuple[int, int, PitfallMeta] | None = None
    for order, meta in enumerate(pitfalls):
        cases, obs = pitfall_cases.get(meta.slug, {}), pitfall_obs.get(meta.slug, {})

        def agrees(name: str, cases: dict[str, CaseRecord] = cases, obs: dict[str, Observations] = obs) -> bool:
            return same_behaviour(cases.get(name), obs.get(name, {}), learner_cases.get(name),
                                  learner_obs.get(name, {}), tolerance)

        if not all(agrees(name) for name in failing):
            continue
        score = sum(agrees(name) for name in instances)
        if best is None or score > best[0]:
            best = (score, order, meta)
    return best[2] if best else None
