"""One way to write a number, for every line a learner reads: check lines, the failure block,
expected and got, the closest-mistake sentence.

Two habits made verdicts hard to read: a fixed 6 significant digits with trailing zeros ("got
0.500000") and raw float64 text ("0.0055000000000000005"), sometimes on one line. Here a number
is written as the shortest decimal that is right at the precision that matters: within a tenth
of the exercise's relative tolerance (so a value read off the screen and typed back into a test
still passes the same comparison), and never shorter than it takes for two values that differ
to read differently. Whole numbers read as integers ("3", "8388608"), NaN and the infinities are
spelled out.

Standard library only: the core (judge.compare, judge.grade), the view models and every
renderer use it, and none of them may reach rich or numpy through it.
"""

from __future__ import annotations

import math
from typing import Any

DEFAULT_RTOL = 1e-6  # a value with no tolerance in sight (an input): 7 significant digits at most
_SHARE = 0.1  # rounding may move a value by at most this share of the tolerance


def number_text(value: Any, rtol: float | None = None) -> str:
    """``value`` as the shortest decimal within ``rtol / 10`` of it (relative), whole numbers as
    integers. ``rtol=0`` asks for the exact shortest text that reads back to the same float."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value  # "nan", "inf" as JSON spells them
    x = float(value)
    if x != x:
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    if rtol == 0:
        return _fixed(repr(x), x)
    allowed = _SHARE * (DEFAULT_RTOL if rtol is None else rtol) * abs(x)
    for digits in range(1, 18):
        text = f"{x:.{digits}g}"
        if abs(float(text) - x) <= allowed:
            return _fixed(text, x)
    return _fixed(repr(x), x)


def pair_text(expected: float, got: float, rtol: float | None = None) -> tuple[str, str]:
    """Two values that differ, each written by ``number_text`` and, where that reads alike,
    with more digits until they do not ("expected 0.1, got 0.1" would leave a learner staring
    at identical numbers)."""
    a, b = number_text(expected, rtol), number_text(got, rtol)
    if a != b or _same(expected, got):
        return a, b
    for digits in range(2, 18):
        a, b = _digits(expected, digits), _digits(got, digits)
        if a != b:
            return a, b
    return number_text(expected, 0), number_text(got, 0)


def _same(x: Any, y: Any) -> bool:
    try:
        fx, fy = float(x), float(y)
    except (TypeError, ValueError):
        same: bool = x == y  # values read from JSON: their == is the builtins'
        return same
    return fx == fy or (fx != fx and fy != fy)


def _digits(value: Any, digits: int) -> str:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(x) or (x.is_integer() and abs(x) < 1e16):
        return number_text(x)
    return _fixed(f"{x:.{digits}g}", x)


def _fixed(text: str, x: float) -> str:
    """A number of ordinary size in positional notation: "1234570" rather than "1.23457e+06"
    (exponents stay for the very small and very large, where they are shorter to read)."""
    if "e" not in text or not 1 <= abs(x) < 1e16:
        return text
    return str(int(float(text)))


def magnitude_text(value: float) -> str:
    """An error's size: 3 significant digits are plenty to say how far off ("0.00136"), a whole
    number exactly."""
    x = float(value)
    if not math.isfinite(x) or (x.is_integer() and abs(x) < 1e16):
        return number_text(x)
    return _fixed(f"{x:.3g}", x)
