"""Plain data that flows through the pipeline: exercises, check results, verdicts.

Everything here is JSON-friendly so that a verdict can be printed with ``--json``, stored in
progress, or written in a batch format without another translation layer.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any

from judge.text import json_ready, safe_data


class Status(str, Enum):
    """The overall outcome of grading one submission."""

    PASSED = "passed"
    FAILED = "failed"  # ran, but a check failed
    FORBIDDEN = "forbidden"  # called the built-in it was asked to write from memory
    ERROR = "error"  # could not be loaded (syntax/import error, missing function)
    TIMEOUT = "timeout"  # killed at the wall-clock or CPU limit
    CRASHED = "crashed"  # the worker died or produced no honest result


class CheckStatus(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # the learner's code raised on this case
    NOT_RUN = "not_run"  # the run stopped before this case produced anything


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


@dataclass(frozen=True)
class Exercise:
    """One exercise: the learner-facing manifest plus where its two folders live."""

    slug: str
    title: str
    topic: str
    difficulty: str
    entry: tuple[str, ...]
    hints: tuple[str, ...]
    time_limit: float
    tolerance: dict[str, Tolerance]
    forbidden: tuple[str, ...]
    memory_mb: int
    interview_minutes: int
    exercise_dir: Path
    solution_dir: Path
    step_base: int = 1  # verdicts number steps as the statement does: from 1 (updates) or 0 (an index)
    # (case, counter, supersedes): a case whose run grind counts from outside the learner's
    # process, with a counter of witness.py ("traffic" between ranks, or file "writes"), and the
    # in-process observations that count stands for (see judge/witnessed.py)
    witness: tuple[str, str, tuple[str, ...]] | None = None
    # A Gradescope bundle ships no reference and no pitfalls, only their observations, cached at
    # build time under this key (solutions/<slug>/sealed.json): nothing is recomputed, so there
    # is nothing a submission could run or read to copy the answer (see judge/autograder.py).
    sealed_key: str | None = None
    # [marks] weights: (case, points) for the cases the author weighted; every other case is
    # worth 1 (judge.formats.score). A tuple, not a dict: the manifest is frozen and hashable.
    weights: tuple[tuple[str, float], ...] = ()
    partial: bool = False  # [marks] partial: a case of several inputs earns its weight's share passed

    @property
    def scanned_strictly(self) -> bool:
        """Whether marks read this exercise's answers with the strict scan (judge/introspection.py:
        any computed ``getattr``, any unpickling): its verdict rests on something observed inside
        the learner's process, a forbidden call seen by the guards or a fact about how the ranks
        ran (a witnessed exercise), which a door into the interpreter could reach."""
        return bool(self.forbidden) or self.witness is not None

    @property
    def stub_path(self) -> Path:
        return self.exercise_dir / "stub.py"

    @property
    def statement_path(self) -> Path:
        return self.exercise_dir / "README.md"

    @property
    def reference_path(self) -> Path:
        return self.solution_dir / "reference.py"

    @property
    def checks_path(self) -> Path:
        return self.solution_dir / "checks.py"

    @property
    def pitfalls_path(self) -> Path:
        return self.solution_dir / "pitfalls.py"

    @property
    def oracle_path(self) -> Path:
        return self.solution_dir / "oracle.py"

    def tolerance_for(self, dtype: str) -> Tolerance:
        """The tolerance for an observation, chosen by the *reference's* dtype only: a learner
        cannot loosen the check by answering a float64 question in float32."""
        return self.tolerance.get(dtype) or self.tolerance.get("default") or Tolerance(1e-5, 1e-6)


@dataclass
class Diagnosis:
    """A known-wrong variant that the learner's observations match, and where.

    ``explains`` says which checks and observations it accounts for ("worked_example: grad[0],
    grad[1]"); ``complete`` is False when other differences remain that no known mistake
    explains. ``library`` and ``convention`` are set when the "mistake" is a real library's
    own convention (or bug), so the learner hears where their habit comes from."""

    slug: str
    name: str
    explanation: str
    hint: str
    explains: str = ""
    complete: bool = True
    library: str = ""
    convention: bool = False


@dataclass
class CheckResult:
    """One named case of one exercise, judged."""

    name: str
    kind: str  # example | edge | random
    status: CheckStatus
    message: str = ""
    input: Any = None
    expected: Any = None
    got: Any = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    pitfall: str | None = None  # the diagnosed pitfall's name, on the failing checks it explains
    observation: str | None = None  # which observed value differed first, e.g. "grad[0]"
    series: dict[str, Any] | None = None  # full expected/got sequences, for a plot
    instance: str | None = None  # the case instance shown (a random case's smallest failing one)
    case: str | None = None  # the case's own name: ``name`` may add the failing input, ``case`` never does
    inputs: int = 1  # how many inputs the case ran (a random case: several) ...
    inputs_failed: int = 0  # ... and how many of them failed: [marks] partial credits the rest

    def to_json(self) -> dict[str, Any]:
        """JSON-ready, with learner text escaped: a message may hold a lone surrogate, which no
        encoder accepts, and this dict is printed, stored and written in every batch format."""
        data = asdict(self)
        data["status"] = self.status.value
        ready: dict[str, Any] = json_ready(safe_data(data))
        return ready


@dataclass
class Verdict:
    """The judge's answer about one submission. A learner's failure lives here, as data."""

    exercise: str
    status: Status
    checks: list[CheckResult] = field(default_factory=list)
    message: str = ""
    diagnosis: Diagnosis | None = None
    learner_line: int | None = None
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    submission: str = ""
    notices: list[str] = field(default_factory=list)
    isolation: str = ""  # the isolation level the submission ran under (see grind doctor)
    diagnoses: list[Diagnosis] = field(default_factory=list)  # every mistake named; diagnosis is the first
    unexplained: str = ""  # differences no known mistake explains, when some are named
    closest: str = ""  # when none is named: the known mistake nearest the answer, and how it differs

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    @property
    def first_failure(self) -> CheckResult | None:
        return next((c for c in self.checks if c.status is not CheckStatus.PASSED), None)

    @property
    def smallest_failure(self) -> CheckResult | None:
        """The failing check a verdict shows first and --repro writes out: the statement's worked
        example when one fails (kind ``example``: the learner can check it by hand against the
        statement; the smallest of them if several), otherwise the one with the smallest input
        (numbers across its inputs; the earlier check on a tie), because a learner reads and
        re-runs three numbers faster than three hundred. A check that did not run on an input (a
        load error, a stop) comes after every check that did."""
        failing = [c for c in self.checks if c.status is not CheckStatus.PASSED]
        if not failing:
            return None
        return min(failing, key=lambda c: (c.input is None, c.kind != "example", input_size(c.input)))

    def to_json(self) -> dict[str, Any]:
        """JSON-ready, with learner text (messages, output, file names) escaped: see CheckResult."""
        data = {
            "exercise": self.exercise,
            "status": self.status.value,
            "message": self.message,
            "submission": self.submission,
            "learner_line": self.learner_line,
            "pitfall": asdict(self.diagnosis) if self.diagnosis else None,
            "pitfalls": [asdict(d) for d in self.diagnoses],
            "unexplained": self.unexplained,
            "closest": self.closest,
            "checks": [c.to_json() for c in self.checks],
            "stdout": self.stdout,
            "stderr": self.stderr,
            "duration_s": round(self.duration_s, 3),
            "notices": self.notices,
            "isolation": self.isolation,
        }
        return {key: value if key == "checks" else json_ready(safe_data(value)) for key, value in data.items()}


def input_size(value: Any) -> int:
    """How many numbers ``value`` (a check's JSON input) holds; an array too large to send
    whole arrives as "<float32 array of shape [64, 128]>" and counts as its shape's product."""
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, (int, float)):
        return 1
    if isinstance(value, str):
        if value.startswith("<") and "shape [" in value:
            size = 1
            for part in value.split("shape [", 1)[1].split("]", 1)[0].split(","):
                size *= int(part) if part.strip().isdigit() else 1
            return size
        return 0
    if isinstance(value, dict):
        return sum(input_size(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(input_size(v) for v in value)
    return 0


# ---------------------------------------------------------------------------------------------
# The daemon's wire: a verdict crosses from the per-user daemon to the ``grind run`` that asked,
# and must arrive exactly as it was computed (the learner's text, NaN and all), so that a verdict
# over the daemon renders, records and exits the same as a cold one. ``to_json`` is not that: it
# spells NaN as "nan" and escapes learner text for printing. Python's json keeps both (NaN as a
# token, a lone surrogate as an escape); tuples become lists, which nothing downstream tells apart.
# The daemon is grind's own (same user, and a secret only grind's processes can read), but its
# answer is still parsed field by field: anything unexpected raises ValueError and the client
# grades cold.


def _fields(cls: type, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"a {cls.__name__} is not an object")
    known = {f.name for f in fields(cls)}
    if not set(data) <= known:
        raise ValueError(f"a {cls.__name__} has unknown fields {sorted(set(data) - known)}")
    return data


def _typed(value: Any, kinds: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kinds):
        raise ValueError(f"{what} has the wrong type")
    return value


def _diagnosis_from_wire(data: Any) -> Diagnosis:
    raw = _fields(Diagnosis, data)
    for name in ("slug", "name", "explanation", "hint", "explains", "library"):
        _typed(raw.get(name, ""), str, name)
    for name in ("complete", "convention"):
        _typed(raw.get(name, False), bool, name)
    return Diagnosis(**raw)


def _check_from_wire(data: Any) -> CheckResult:
    raw = dict(_fields(CheckResult, data))
    raw["status"] = CheckStatus(raw.get("status"))
    for name in ("name", "kind", "message"):
        _typed(raw.get(name, ""), str, name)
    for name in ("pitfall", "observation", "instance", "case"):
        _typed(raw.get(name), (str, type(None)), name)
    for name in ("max_abs_err", "max_rel_err"):
        _typed(raw.get(name), (float, int, type(None)), name)
    _typed(raw.get("series"), (dict, type(None)), "series")
    for name in ("inputs", "inputs_failed"):
        _typed(raw.get(name, 0), int, name)
    return CheckResult(**raw)


def verdict_to_wire(verdict: Verdict) -> str:
    data = asdict(verdict)
    data["status"] = verdict.status.value
    for check in data["checks"]:
        check["status"] = check["status"].value
    return json.dumps(data)


def verdict_from_wire(text: str | bytes) -> Verdict:
    """The verdict ``verdict_to_wire`` wrote; ValueError for anything else."""
    try:
        return _verdict_from_wire(json.loads(text))
    except TypeError as exc:  # a field missing, or of a type no check above expected
        raise ValueError(f"not a verdict: {exc}") from None


def _verdict_from_wire(data: Any) -> Verdict:
    raw = dict(_fields(Verdict, data))
    raw["status"] = Status(raw.get("status"))
    for name in ("exercise", "message", "stdout", "stderr", "submission", "isolation", "unexplained", "closest"):
        _typed(raw.get(name, ""), str, name)
    _typed(raw.get("learner_line"), (int, type(None)), "learner_line")
    raw["duration_s"] = float(_typed(raw.get("duration_s", 0.0), (float, int), "duration_s"))
    raw["checks"] = [_check_from_wire(c) for c in _typed(raw.get("checks", []), list, "checks")]
    raw["diagnoses"] = [_diagnosis_from_wire(d) for d in _typed(raw.get("diagnoses", []), list, "diagnoses")]
    raw["diagnosis"] = None if raw.get("diagnosis") is None else _diagnosis_from_wire(raw["diagnosis"])
    raw["notices"] = [_typed(n, str, "a notice") for n in _typed(raw.get("notices", []), list, "notices")]
    return Verdict(**raw)
