"""Compare observations, in numpy, in the parent.

Every array here came from an untrusted child through safetensors, so it is plain data: we check
its name, kind and shape against the reference's before looking at a single value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from judge.models import Tolerance
from judge.numbers import magnitude_text, pair_text  # noqa: F401 - re-exported: one formatter everywhere

PREVIEW_ELEMENTS = 1024  # larger observations are summarised
NUMERIC_KINDS = "biuf"

Observations = dict[str, np.ndarray]


SERIES_POINTS = 5000


def series_of(want: np.ndarray, have: np.ndarray, first_step: int = 0, axis: str = "step") -> dict[str, Any] | None:
    """Both sides of a 1-D sequence (an LR schedule, a loss scale over steps), for plotting;
    ``first_step`` is the number the statement gives its first entry, ``axis`` what an entry is
    ("step", or "index" for a vector that is not over steps, numbered from 0 as its message says)."""
    if want.ndim != 1 or have.shape != want.shape or not 4 <= want.size <= SERIES_POINTS:
        return None
    return {"expected": shortest_floats(want), "got": shortest_floats(have), "first_step": first_step, "axis": axis}


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
    """A JSON-able picture of an array: every value, exactly (see ``exact_values``), unless it
    is too large to read, when a summary says its dtype and shape."""
    if array.size > PREVIEW_ELEMENTS:
        return f"<{array.dtype} array of shape {list(array.shape)}>"
    return exact_values(array)


def exact_values(array: np.ndarray) -> Any:
    """``array.tolist()`` where each float is the shortest decimal that reads back to the same
    value in the array's own dtype: a float32 0.1 shows as 0.1 (not 0.100000001), 2**23 as
    8388608.0 (not 8.38861e+06), and two values that differ never print alike. NaN and the
    infinities are spelled out, since JSON has no numbers for them."""
    if array.dtype.kind != "f":
        return array.tolist()
    values = [_spelled(v) for v in shortest_floats(array)]
    if array.ndim == 0:
        return values[0]
    return np.array(values, dtype=object).reshape(array.shape).tolist()


def shortest_floats(array: np.ndarray) -> list[float]:
    """The array's values, flattened, each as the Python float whose shortest decimal is the
    shortest one that round-trips in the array's dtype (str of a numpy float32 is that)."""
    if array.dtype == np.float64 or array.dtype.kind != "f":
        return [float(v) for v in array.reshape(-1)]
    return [float(str(v)) for v in array.reshape(-1)]


def _spelled(value: float) -> Any:
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return value


Entries = list[tuple[str, list[int]]]


def _entry_text(flat: int, entries: Entries) -> str | None:
    """Name one entry of a flattened observation by its piece: "param 1 (bias)[2]"."""
    for label, shape in entries:
        size = int(np.prod(shape)) if shape else 1
        if flat < size:
            if not shape:
                return label
            where = np.unravel_index(flat, shape)
            return f"{label}[{', '.join(str(int(i)) for i in where)}]"
        flat -= size
    return None


def index_text(index: tuple[int, ...], key: str, step_base: int = 0, entries: Entries | None = None) -> str:
    """Where in an observation: "step 3" for sequences over steps (numbered from the
    exercise's ``step_base``, as its statement numbers them), the piece's own name for an entry
    of a flattened observation, else a plain index."""
    rest = index
    words = []
    if "step" in key and index:
        words.append(f"step {index[0] + step_base}")
        rest = index[1:]
    if rest and entries and len(rest) == 1:
        named = _entry_text(rest[0], entries)
        if named is not None:
            return ", ".join(words + [named])
    if rest:
        inner = ", ".join(str(i) for i in rest)
        words.append(f"entry {inner}" if words else (f"index {inner}" if len(rest) == 1 else f"index [{inner}]"))
    return ", ".join(words)


def compare(
    expected: Observations,
    got: Observations,
    tolerance: Callable[[str, str], Tolerance],
    step_base: int = 0,
    entries: dict[str, Entries] | None = None,
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
        if _identical(want, have):
            continue
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
        mismatch = _compare_values(key, want, have, tolerance(str(want.dtype), str(have.dtype)), step_base,
                                   (entries or {}).get(key))
        if mismatch:
            return mismatch
    return None


def matches(expected: Observations, got: Observations, tolerance: Callable[[str, str], Tolerance]) -> bool:
    """``compare(expected, got, tolerance) is None``, without building the mismatch's message and
    exact values. A diagnosis asks this thousands of times per failing submission (every pitfall
    and pair against the learner, per case and observation), and the messages it never shows
    were most of the parent's time on a failing grade (1.35 s of clipping's 4 s)."""
    for key, want in expected.items():
        if key not in got:
            return False
        have = got[key]
        if _identical(want, have):
            continue
        if have.dtype.kind not in NUMERIC_KINDS or (want.dtype.kind == "b") != (have.dtype.kind == "b"):
            return False
        if want.shape != have.shape:
            return False
        tol = tolerance(str(want.dtype), str(have.dtype))
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            if not np.isclose(have.astype(np.float64), want.astype(np.float64), rtol=tol.rtol, atol=tol.atol,
                              equal_nan=True).all():
                return False
    return True


def _identical(want: np.ndarray, have: np.ndarray) -> bool:
    """The same numbers bit for bit (a NaN where a NaN is): a match at any tolerance, known
    without np.isclose, which costs about 40 us even on a 2-element array; most observations
    of a passing submission are identical, and a re-grade compares a thousand of them."""
    return (want.dtype == have.dtype and want.shape == have.shape and want.dtype.kind in NUMERIC_KINDS
            and want.tobytes() == have.tobytes())


def _scalar(array: np.ndarray, index: tuple[int, ...]) -> Any:
    """One element for a message, as an int when the array holds integers or booleans."""
    value = array[index]
    if array.dtype.kind in "biu":
        return bool(value) if array.dtype.kind == "b" else int(value)
    return _spelled(shortest_floats(np.asarray(value))[0])


def _distinct(want: np.ndarray, have: np.ndarray, index: tuple[int, ...], rtol: float | None = None) -> tuple[Any, Any]:
    """Both sides of the first mismatch, written by judge.numbers: the shortest text right at the
    tolerance's precision, with more digits only where the two would otherwise read alike."""
    a, b = _scalar(want, index), _scalar(have, index)
    if isinstance(a, (bool, int)) or isinstance(b, (bool, int)):
        return a, b
    return pair_text(a, b, rtol)


def _compare_values(key: str, want: np.ndarray, have: np.ndarray, tol: Tolerance, step_base: int = 0,
                    entries: Entries | None = None) -> Mismatch | None:
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
    shown_want, shown_have = _distinct(want, have, first, tol.rtol)
    if want.ndim:
        where = f" (first differs at {index_text(first, key, step_base, entries)}: expected {shown_want}, got {shown_have})"
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
        # A 1-D observation whose entries are named pieces (one value per parameter) is not a
        # sequence over steps: no "step: expected / yours" table or curve for it.
        # One naming and one numbering with the message's "first differs at ...": a vector that is
        # not over steps (a gradient) is numbered by index from 0, never called "step".
        None if entries else (series_of(want, have, step_base) if "step" in key else series_of(want, have, 0, "index")),
    )
