"""Learner-speed feedback: advice on a correct but slow answer. It never changes the verdict.

The child times the reference and then the learner on the exercise's larger ``SPEED`` case; here
we turn the two times into a sentence, and read the learner's source for the usual cause.
"""

from __future__ import annotations

import ast
from typing import Any

SLOWER = 5.0  # report from this ratio on


def probable_cause(source: str) -> str:
    """The most likely reason a correct answer is slow, from its syntax alone."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "extra work on every call"
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While, ast.comprehension))]
    nested = any(_has_inner_loop(loop) for loop in loops)
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    if nested or ("item" in calls and loops):
        return "a Python loop over individual elements (use whole-tensor operations)"
    if "tolist" in calls or "numpy" in calls:
        return "converting tensors to Python lists or numpy and back"
    if loops:
        return "a Python loop where a vectorised tensor operation would do"
    return "extra work on every call (copies, or recomputing something that could be computed once)"


def _has_inner_loop(loop: ast.AST) -> bool:
    """A for or while statement with another inside it (comprehensions are not counted)."""
    return isinstance(loop, (ast.For, ast.While)) and any(
        isinstance(inner, (ast.For, ast.While)) for inner in ast.walk(loop) if inner is not loop)


def speed_advice(speed: dict[str, Any], source: str) -> str | None:
    reference = float(speed.get("reference_s") or 0.0)
    learner = speed.get("learner_s")
    if reference <= 0:
        return None
    if learner is None:
        ratio_text = f"more than {float(speed['budget_s']) / reference:.0f}×"
    else:
        ratio = float(learner) / reference
        if ratio < SLOWER:
            return None
        ratio_text = f"{ratio:.0f}×"
    return (f"Correct, but {ratio_text} slower than the reference on {speed.get('case', 'a larger input')}. "
            f"Probable cause: {probable_cause(source)}. (Advice only: the verdict stands.)")
