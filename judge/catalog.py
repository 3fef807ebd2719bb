"""Find exercises and turn each ``exercise.toml`` into an :class:`Exercise`.

Validation is strict and every problem is one line naming the file, the key and (where the
key is present) its line, because instructors fix manifests by reading that line.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from judge.errors import ManifestError, UsageError
from judge.models import Exercise, Tolerance

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DIFFICULTIES = ("easy", "medium", "hard")
TOLERANCE_DTYPES = ("float16", "float32", "float64", "default")
WITNESS_COUNTERS = ("traffic", "writes")  # what judge/worker/witness.py counts
SLUG_RE = re.compile(r"^[a-z][a-z0-9-]*$")
CASE_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def content_root() -> Path:
    """Where ``exercises/`` and ``solutions/`` live.

    ``GRIND_CONTENT`` wins (instructors pointing at their own course); then the copy shipped
    inside the wheel; then the repository checkout this package was imported from.
    """
    env = os.environ.get("GRIND_CONTENT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent
    bundled = here / "_content"
    if (bundled / "exercises").is_dir():
        return bundled
    return here.parent


def _line_of(text: str, key: str) -> str:
    for number, line in enumerate(text.splitlines(), start=1):
        if re.match(rf"^\s*{re.escape(key)}\s*=", line) or re.match(rf"^\s*\[{re.escape(key)}[.\]]", line):
            return f" (line {number})"
    return ""


class _Manifest:
    """Typed access to one parsed manifest, raising ManifestError with file, key and line."""

    def __init__(self, path: Path, text: str, data: dict[str, Any]) -> None:
        self.path, self.text, self.data = path, text, data

    def fail(self, key: str, problem: str) -> ManifestError:
        return ManifestError(f"{self.path}: key '{key}'{_line_of(self.text, key)} {problem}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ..., what: str = "") -> Any:
        if key not in self.data:
            if default is ...:
                raise self.fail(key, "is missing")
            return default
        value = self.data[key]
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            raise self.fail(key, f"must be {what or 'a number'}, not a boolean")
        if not isinstance(value, kind):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise self.fail(key, f"must be {what or names}, got {type(value).__name__}")
        return value

    def str_list(self, key: str, default: Any = ...) -> tuple[str, ...]:
        value = self.get(key, list, default, "a list of strings")
        if not all(isinstance(v, str) and v.strip() for v in value):
            raise self.fail(key, "must be a list of non-empty strings")
        return tuple(value)


STR_LIST = "a list of strings"  # a Key's kind: a list of non-empty strings, read as a tuple


@dataclass(frozen=True)
class Key:
    """One manifest key: its TOML type, its default (``...``: required), and what it must hold.
    ``check`` names the problem with a well-typed value (None: fine); ``parse`` turns a table
    into what the Exercise holds, failing through the manifest so the line is named."""

    kind: type | tuple[type, ...] | str | None  # None: known, read elsewhere (order)
    default: Any = ...
    convert: Callable[[Any], Any] | None = None
    check: Callable[[Any], str | None] | None = None
    parse: Callable[[_Manifest, Any], Any] | None = None


def _tolerance(m: _Manifest, table: dict[str, Any]) -> dict[str, Tolerance]:
    tolerance: dict[str, Tolerance] = {}
    for dtype, tol in table.items():
        if dtype not in TOLERANCE_DTYPES:
            raise m.fail("tolerance", f"has an entry '{dtype}'; use one of {', '.join(TOLERANCE_DTYPES)}")
        if not isinstance(tol, dict) or set(tol) != {"rtol", "atol"}:
            raise m.fail("tolerance", f"entry '{dtype}' must be a table with exactly rtol and atol")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in tol.values()):
            raise m.fail("tolerance", f"entry '{dtype}' needs non-negative numbers")
        tolerance[dtype] = Tolerance(float(tol["rtol"]), float(tol["atol"]))
    tolerance.setdefault("default", Tolerance(1e-5, 1e-6))
    return tolerance


def _witness(m: _Manifest, witness: dict[str, Any]) -> tuple[str, str, tuple[str, ...]] | None:
    if not witness:
        return None
    supersedes = witness.get("supersedes", [])
    if (not {"case", "counter"} <= set(witness) <= {"case", "counter", "supersedes"}
            or not isinstance(witness.get("case"), str) or witness.get("counter") not in WITNESS_COUNTERS
            or not isinstance(supersedes, list) or not all(isinstance(k, str) for k in supersedes)):
        raise m.fail("witness", "must be a table with 'case' (a case name), 'counter' "
                     f"(one of {', '.join(WITNESS_COUNTERS)}) and optionally 'supersedes' (observation names)")
    return witness["case"], witness["counter"], tuple(supersedes)


def _marks(m: _Manifest, marks: dict[str, Any]) -> tuple[tuple[tuple[str, float], ...], bool]:
    return _weights(m, marks), _partial(m, marks)


# The manifest's schema, in the order keys are checked (the first problem is the one reported).
SCHEMA: dict[str, Key] = {
    "difficulty": Key(str, check=lambda v: None if v in DIFFICULTIES else
                      f"must be one of {', '.join(DIFFICULTIES)}, got '{v}'"),
    "entry": Key(STR_LIST, check=lambda v: None if v and all(e.isidentifier() for e in v) else
                 "must list the Python names the learner defines"),
    "time_limit": Key((int, float), 10, convert=float,
                      check=lambda v: None if 0 < v <= 600 else "must be between 0 and 600 seconds"),
    "tolerance": Key(dict, {}, parse=_tolerance),
    "memory_mb": Key(int, 4096, check=lambda v: None if v >= 512 else
                     "must be at least 512 (torch alone needs that much address space)"),
    "step_base": Key(int, 1, check=lambda v: None if v in (0, 1) else
                     "must be 0 or 1: the number the statement gives the first step"),
    "witness": Key(dict, {}, parse=_witness),
    "marks": Key(dict, {}, parse=_marks),
    "title": Key(str),
    "topic": Key(str),
    "hints": Key(STR_LIST),
    "forbidden": Key(STR_LIST, []),
    "interview_minutes": Key(int, 20),
    "order": Key(None),  # sorts the curriculum: read by Catalog._order_key
}
KNOWN_KEYS = set(SCHEMA)


def _read_manifest(path: Path) -> _Manifest:
    """The parsed manifest, or one line saying why there is none."""
    if not path.is_file():
        raise ManifestError(f"{path}: file is missing")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML: {exc}") from None
    return _Manifest(path, text, data)


def _value(m: _Manifest, name: str, key: Key) -> Any:
    """One key's value, typed, checked and parsed as SCHEMA says."""
    kind = key.kind  # STR_LIST, or a TOML type (None, the keys read elsewhere, never comes here)
    value = m.str_list(name, key.default) if isinstance(kind, str) or kind is None else m.get(name, kind, key.default)
    if key.convert is not None:
        value = key.convert(value)
    problem = key.check(value) if key.check is not None else None
    if problem is not None:
        raise m.fail(name, problem)
    return key.parse(m, value) if key.parse is not None else value


def load_exercise(exercise_dir: Path, solutions_root: Path) -> Exercise:
    """Load and validate one exercise folder."""
    slug = exercise_dir.name
    m = _read_manifest(exercise_dir / "exercise.toml")
    unknown = sorted(set(m.data) - KNOWN_KEYS)
    if unknown:
        raise m.fail(unknown[0], f"is not a known key (known: {', '.join(sorted(KNOWN_KEYS))})")
    if not SLUG_RE.match(slug):
        raise ManifestError(f"{exercise_dir}: folder name must be a lowercase slug like 'loss-scaling'")
    values = {name: _value(m, name, key) for name, key in SCHEMA.items() if key.kind is not None}
    weights, partial = values.pop("marks")
    solution_dir = solutions_root / slug
    sealed_key = _sealed_key(solution_dir)
    exercise = Exercise(slug=slug, exercise_dir=exercise_dir, solution_dir=solution_dir, sealed_key=sealed_key,
                        weights=weights, partial=partial, **values)
    for required in (exercise.statement_path, exercise.stub_path):
        if not required.is_file():
            raise ManifestError(f"{required}: file is missing")
    needed = (exercise.checks_path,) if sealed_key else (exercise.reference_path, exercise.checks_path,
                                                         exercise.pitfalls_path)
    for required in needed:
        if not required.is_file():
            raise ManifestError(f"{required}: file is missing (every exercise needs a reference, checks and pitfalls)")
    return exercise


SEALED = "sealed.json"


def _sealed_key(solution_dir: Path) -> str | None:
    """The cache key a sealed exercise (a Gradescope bundle's: checks only, no reference or
    pitfalls) reads its shipped observations under; None for an ordinary exercise."""
    path = solution_dir / SEALED
    if not path.is_file():
        return None
    import json

    try:
        key = json.loads(path.read_text(encoding="utf-8")).get("key")
    except (OSError, ValueError, AttributeError) as exc:
        raise ManifestError(f"{path}: not a sealed exercise's key file ({exc})") from None
    if not isinstance(key, str) or not re.fullmatch(r"[0-9a-f]{32}", key):
        raise ManifestError(f"{path}: 'key' must be the 32-hex-digit cache key the bundle was built with")
    return key


def _partial(m: _Manifest, marks: dict[str, Any]) -> bool:
    """``[marks] partial = true``: a case of several inputs (a random case) earns its weight's
    share of inputs passed, 3 of 4 inputs: 0.75 of its weight (judge.formats.earned)."""
    value = marks.get("partial", False)
    if not isinstance(value, bool):
        raise m.fail("marks", f"partial must be true or false, got {value!r}")
    return value


def _weights(m: _Manifest, marks: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """``[marks] weights = {case = points, ...}``: what each case is worth in a class's marks
    (every case not named is worth 1). Names are checked against the checks' cases where the
    cases are known, when a class is graded (judge.batch.weights_problem); here only the shape:
    a name like a case's, a finite number >= 0, and not every case worth nothing."""
    unknown = sorted(set(marks) - {"weights", "partial"})
    if unknown:
        raise m.fail("marks", f"has a key '{unknown[0]}'; the keys are weights and partial")
    table = marks.get("weights", {})
    if not isinstance(table, dict):
        raise m.fail("marks", "weights must be a table of case = points, e.g. weights = {worked_example = 2}")
    weights = []
    for case, points in table.items():
        if not CASE_NAME_RE.match(case):
            raise m.fail("marks", f"weights names '{case}', which is not a case name")
        if isinstance(points, bool) or not isinstance(points, (int, float)) or not 0 <= points < float("inf"):
            raise m.fail("marks", f"weight of '{case}' must be a number >= 0, got {points!r}")
        weights.append((case, float(points)))
    return tuple(weights)


class Catalog:
    """All exercises under one content root, loaded lazily and validated on access."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or content_root()
        self.exercises_root = self.root / "exercises"
        self.solutions_root = self.root / "solutions"

    def slugs(self) -> list[str]:
        if not self.exercises_root.is_dir():
            return []
        found = [p for p in self.exercises_root.iterdir() if (p / "exercise.toml").is_file()]
        return [p.name for p in sorted(found, key=self._order_key)]

    def _order_key(self, folder: Path) -> tuple[int, str]:
        # `order = N` in the manifest sorts the curriculum; read cheaply, validated on load.
        try:
            text = (folder / "exercise.toml").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""  # reported properly when this exercise is loaded
        match = re.search(r"^order\s*=\s*(\d+)", text, re.M)
        return (int(match.group(1)) if match else 10_000, folder.name)

    def get(self, slug: str) -> Exercise:
        folder = self.exercises_root / slug
        # Look at the one folder; sorting every manifest (slugs()) is only needed for a suggestion.
        if not SLUG_RE.match(slug) or not (folder / "exercise.toml").is_file():
            raise UsageError(unknown_name_message(slug, self.slugs()))
        return load_exercise(folder, self.solutions_root)

    def all(self) -> list[Exercise]:
        return [self.get(s) for s in self.slugs()]

    def load_all(self) -> tuple[list[Exercise], list[ManifestError]]:
        """Every loadable exercise, plus the problems of the others: one broken folder must
        not hide the rest of the course from a learner."""
        good, bad = [], []
        for slug in self.slugs():
            try:
                good.append(self.get(slug))
            except ManifestError as exc:
                bad.append(exc)
        return good, bad


def unknown_name_message(name: str, known: list[str]) -> str:
    import difflib  # only for a name that is not there: every `grind run` loads this module

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    if not close:
        # prefixes and substrings catch "clip" -> "clipping", which difflib's ratio misses
        close = [k for k in known if k.startswith(name) or name in k][:1]
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return f"Unknown exercise '{name}'.{hint} Run 'grind list' to see them all."
