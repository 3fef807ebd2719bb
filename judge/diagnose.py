"""Name the classic mistake a failing submission makes.

A pitfall *fits* when, on every case where the learner failed, the pitfall produced the same
observations (or raised the same exception). Among the pitfalls that fit, the one agreeing with
the learner on the most cases overall wins, so a narrow pitfall never steals a broad diagnosis.
"""

from __future__ import annotations

from typing import Any, Callable

from judge.compare import Observations, compare
from judge.models import Tolerance


def same_behaviour(
    a_case: dict[str, Any] | None,
    a_obs: Observations,
    b_case: dict[str, Any] | None,
    b_obs: Observations,
    tolerance: Callable[[str, str], Tolerance],
) -> bool:
    """Did two subjects behave the same on one case instance?"""
    if a_case is None or b_case is None:
        return False
    if a_case["status"] != b_case["status"]:
        return False
    if a_case["status"] == "ok":
        return compare(a_obs, b_obs, tolerance) is None and set(a_obs) == set(b_obs)
    if a_case["status"] == "error":
        return bool(a_case["error"]["type"] == b_case["error"]["type"])
    return True  # both produced something that is not data


def diagnose(
    failing: list[str],
    instances: list[str],
    learner_cases: dict[str, Any],
    learner_obs: dict[str, Observations],
    pitfalls: list[dict[str, Any]],
    pitfall_cases: dict[str, dict[str, Any]],
    pitfall_obs: dict[str, dict[str, Observations]],
    tolerance: Callable[[str, str], Tolerance],
) -> dict[str, Any] | None:
    """Return the metadata of the pitfall that best explains the failures, or None."""
    if not failing:
        return None
    best: tuple[int, int, dict[str, Any]] | None = None
    for order, meta in enumerate(pitfalls):
        cases, obs = pitfall_cases.get(meta["slug"], {}), pitfall_obs.get(meta["slug"], {})

        def agrees(name: str, cases: dict[str, Any] = cases, obs: dict[str, Observations] = obs) -> bool:
            return same_behaviour(cases.get(name), obs.get(name, {}), learner_cases.get(name),
                                  learner_obs.get(name, {}), tolerance)

        if not all(agrees(name) for name in failing):
            continue
        score = sum(agrees(name) for name in instances)
        if best is None or score > best[0]:
            best = (score, order, meta)
    return best[2] if best else None
