"""Compare observations, in numpy, in the parent.

Every array here came from an untrusted child through safetensors, so it is plain data: we check
its name, kind and shape against the reference's before looking at a single value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from judge.models import Tolerance

PREVIEW_ELEMENTS = 16
NUMERIC_KINDS = "biuf"

Observations = dict[str, np.ndarray]


SERIES_POINTS = 5000


def series_of(want: np.ndarray, have: np.ndarray) -> dict[str, list[float]] | None:
    """Both sides of a 1-D sequence (an LR schedule, a loss scale over steps), for plotting."""
    if want.ndim != 1 or have.shape != want.shape or not 4 <= want.size <= SERIES_POINTS:
        return None
    return {"expected": [float(v) for v in want], "got": [float(v) for v in have]}


@dataclass
class Mismatch:
    """The first difference between two sets of observations of one case."""

    key: str
    message: str
    expected: Any = None
    got: Any = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    series: dict[str, list[float]] | None = None


def to_json_value(array: np.ndarray) -> Any:
    """A small JSON-able picture of an array: the values when it is small, else a summary."""
    if array.size > PREVIEW_ELEMENTS:
        return f"<{array.dtype} array of shape {list(array.shape)}>"
    return _jsonable(array.tolist())


def _jsonable(value: Any) -> Any:
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return float(f"{value:.6g}")
    return value


def _index_text(index: tuple[int, ...], key: str) -> str:
    """Observations named "... per step" are sequences over steps: say "step 3", not "index 3"."""
    if "step" in key:
        rest = f" (entry {', '.join(str(i) for i in index[1:])})" if len(index) > 1 else ""
        return f"step {index[0]}{rest}"
    if len(index) == 1:
        return f"index {index[0]}"
    return f"index [{', '.join(str(i) for i in index)}]"


def compare(
    expected: Observations,
    got: Observations,
    tolerance: Callable[[str, str], Tolerance],
) -> Mismatch | None:
    """Return the first mismatch, or None when ``got`` matches ``expected``.

    ``tolerance(expected_dtype, got_dtype)`` gives the rtol/atol to use; NaN matches NaN and
    infinities must match exactly.
    """
    for key in expected:
        if key not in got:
            return Mismatch(key, f"{key}: no value was produced")
    for key, want in expected.items():
        have = got[key]
        if have.dtype.kind not in NUMERIC_KINDS:
            return Mismatch(key, f"{key}: got data of dtype {have.dtype}, expected numbers")
        if (want.dtype.kind == "b") != (have.dtype.kind == "b"):
            wanted = "True/False" if want.dtype.kind == "b" else "numbers"
            return Mismatch(key, f"{key}: expected {wanted}, got {have.dtype} values",
                            to_json_value(want), to_json_value(have))
        if want.shape != have.shape:
            return Mismatch(
                key,
                f"{key}: expected shape {list(want.shape)}, got shape {list(have.shape)}",
                to_json_value(want),
                to_json_value(have),
            )
        mismatch = _compare_values(key, want, have, tolerance(str(want.dtype), str(have.dtype)))
        if mismatch:
            return mismatch
    return None


def _scalar(array: np.ndarray, index: tuple[int, ...]) -> Any:
    """One element for a message, as an int when the array holds integers or booleans."""
    value = array[index]
    if array.dtype.kind in "biu":
        return bool(value) if array.dtype.kind == "b" else int(value)
    return _jsonable(float(value))


def _distinct(want: np.ndarray, have: np.ndarray, index: tuple[int, ...]) -> tuple[Any, Any]:
    """Both sides of the first mismatch, as text with the same number of significant digits,
    as many as it takes for them to look different: "expected 0.1, got 0.1" would leave a
    learner staring at identical numbers, and "expected 2.20561, got 2.206" at a rounding."""
    a, b = _scalar(want, index), _scalar(have, index)
    if not isinstance(a, float) or not isinstance(b, float):
        return a, b
    return pair_text(float(want[index]), float(have[index]))


def pair_text(x: float, y: float) -> tuple[str, str]:
    """Two floats written alike (same significant digits, trailing zeros kept) and distinctly."""
    if not (np.isfinite(x) and np.isfinite(y)):
        return _number_text(x), _number_text(y)
    for digits in (6, 9, 12, 17):
        a, b = f"{x:#.{digits}g}", f"{y:#.{digits}g}"
        if a != b:
            break
    return _tidy(a), _tidy(b)


def _tidy(text: str) -> str:
    """"3.00000" stays (it is compared with "2.99999"), but "3." loses its bare point."""
    return text[:-1] if text.endswith(".") else text


def _number_text(value: float) -> str:
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return _tidy(f"{value:#.6g}")


def _compare_values(key: str, want: np.ndarray, have: np.ndarray, tol: Tolerance) -> Mismatch | None:
    w = want.astype(np.float64)
    h = have.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        close = np.isclose(h, w, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
        if close.all():
            return None
        # Errors are measured where the values differ: matching infinities (or NaNs) are equal,
        # and an expected 0 has no relative error (dividing by it would report 1e+297).
        finite = np.isfinite(w) & np.isfinite(h)
        abs_err = np.where(close, 0.0, np.where(finite, np.abs(h - w), np.inf))
        has_rel = ~close & (w != 0)
        rel_err = np.where(has_rel, np.where(finite, abs_err / np.where(w != 0, np.abs(w), 1.0), np.inf), 0.0)
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0]) if want.ndim else ()
    shown_want, shown_have = _distinct(want, have, first)
    if want.ndim:
        where = f" (first differs at {_index_text(first, key)}: expected {shown_want}, got {shown_have})"
    else:
        where = f": expected {shown_want}, got {shown_have}"
    what = "NaN appeared" if np.isnan(h).any() and not np.isnan(w).any() else "values differ"
    return Mismatch(
        key,
        f"{key}: {what}{where}",
        to_json_value(want),
        to_json_value(have),
        float(abs_err.max()),
        float(rel_err.max()) if has_rel.any() else None,
        series_of(want, have),
    )
