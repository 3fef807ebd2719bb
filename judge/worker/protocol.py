"""The parent <-> child boundary of the worker, as types.

Everything that crosses the boundary is described here, once:

- :class:`Job` goes from grind (trusted) to the runner (trusted code, running next to the
  learner's). It is plain JSON on the child's stdin.
- :class:`Result` comes back from the child. The runner writes it, but the learner's code runs in
  the same process and can forge it (it can find the run's token in the runner's frames). So
  :func:`parse_result` treats every byte as hostile: each field is type-checked and bounded, and
  a value that is not what the runner would write raises :class:`ProtocolError`, which grind turns
  into a ``crashed`` verdict naming what was wrong. A forged result can then only ever hold
  values, and those still have to equal the reference's.
- :class:`Reply` is the warm server's answer about one job (exit status, captured output).
- :class:`Limits` and :class:`RunOutcome` are the parent's side of one run (what the child may
  use, what became of it), and :class:`Worker` is what grading asks of whatever runs its jobs
  (``sandbox.WarmWorker`` is one, and so is a cold runner over ``sandbox.run_job``).

Observation names are ``subject::instance::key`` in the safetensors file; :func:`obs_name` and
:func:`split_obs_name` are the only code that builds or splits them, and pitfalls are subjects
named ``pitfall:<slug>`` (:func:`pitfall_subject`).

Stdlib only: the child loads this file by path (``python -I``, no ``judge`` package there).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

if TYPE_CHECKING:  # the parent's view of the observations; never imported in the child
    import numpy as np

SEP = "::"
# The raw figures a trusted job keeps for the exercise's witnessed case ("witnessed: traffic"),
# which the parent turns into a figure relative to the reference (see judge/witnessed.py).
WITNESSED = "witnessed: "
PITFALL = "pitfall:"
MAX_TEXT = 20_000  # any one string the child sends back (messages, tracebacks, previews)
MAX_ITEMS = 100_000  # entries in any one list or mapping


class ProtocolError(ValueError):
    """The child's answer is not what the runner writes: malformed, forged or truncated."""


def obs_name(subject: str, instance: str, key: str) -> str:
    return f"{subject}{SEP}{instance}{SEP}{key}"


def split_obs_name(name: str) -> tuple[str, str, str] | None:
    parts = name.split(SEP, 2)
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None


# Files a distributed case keeps for grind to read after the run, from outside every process that
# held learner code (judge/kept.py): one folder per subject and case instance, named so that the
# parent finds it without the child's word. Each rank learns its folder's path from the
# GRIND_KEPT variable while the case runs.
KEPT = "kept"
KEPT_VARIABLE = "GRIND_KEPT"
KEPT_CHECKPOINT = "checkpoint.pt"  # the file's name in its folder
# What the child saw at the checkpoint's path the moment each rank's record arrived, and when the
# watcher let the case's first held save go, kept as that rank's observation ([inode, ctime ns,
# size, grant's ctime ns], -1 for what was not there) until judge/kept.py turns it into "readable
# at return" and "written by a held torch.save" and drops it.
KEPT_SEEN = "checkpoint when the rank returned"


def kept_folder(subject: str, instance: str) -> str:
    """The name of the folder, under ``KEPT`` in the run's folder, of one subject's case instance."""
    import hashlib

    return hashlib.sha256(f"{subject}\0{instance}".encode("utf-8", "backslashreplace")).hexdigest()[:32]


@dataclass
class KeptCase:
    """What grind read, after the run, in one kept folder (judge/worker/outputs.read_kept): the
    checkpoint's state_dict (None: missing, not a regular file, or not a plain state_dict), whether
    it ends as a finished zip does, and its inode, ctime and size."""

    state: dict[Any, Any] | None = None
    finished: bool = False
    ctime_ns: int | None = None
    inode: int | None = None
    size: int | None = None


def pitfall_subject(slug: str) -> str:
    return PITFALL + slug


# ---------------------------------------------------------------------------------------------
# Parent -> child (trusted both ends; typed for the reader's sake)


class SubjectSpec(TypedDict, total=False):
    id: str  # "learner", "reference", "oracle" (absent for the pitfalls bundle)
    kind: str  # "file": one module defining the entry points; "pitfalls": a PITFALLS list
    path: str  # shown in tracebacks; the child never reads it (sources travel in the job)
    source: str
    source_file: str  # instead of source: staged in the run's folder, read once and deleted (sandbox.stage_job)
    builds_optimizer: bool  # the staged source builds a torch optimizer (BUILDS_OPTIMIZER)


class _Paths(TypedDict):
    read: list[str]
    list: list[str]  # folders split around a hidden one: names visible, contents not
    write: list[str]


class Confinement(_Paths, total=False):
    """What the child may touch once confined (Landlock; a macOS profile has the same shape)."""

    loopback_tcp: bool  # bubblewrap's network namespace: TCP stays on the run's loopback
    private_net: bool  # no bubblewrap: the child makes a network namespace of its own
    landlock: bool  # False under bubblewrap on a kernel without Landlock: the seccomp filter only


class WitnessSpec(TypedDict):
    """The exercise's witnessed case and counter (``witnessed = ["case", "traffic"]``)."""

    case: str
    counter: str


class Job(TypedDict, total=False):
    """One job, as JSON on the child's stdin (cold) or inside a warm server's request line.

    The grading code fills the first group (what to run); ``sandbox`` adds the second (where and
    how: the token, the folder, the pipes, the confinement) just before it sends the job."""

    checks_source: str
    checks_filename: str
    kit: dict[str, list[str]]  # module name ("grind_kit", "grind_kit.optim") -> [filename, source]
    entry: list[str]
    subjects: list[SubjectSpec]
    witness: WitnessSpec  # a witnessed exercise: the traffic and writes of each subject's run
    guard: bool  # install the "from memory" guards (learner runs only)
    forbidden: list[str]
    check_forbidden: list[str]  # trusted runs: forbidden names to resolve in this torch (Result.unresolved)
    marked: bool  # grind grade and friends: the integrity record around the learner's calls
    seeds: int | None
    record_inputs: bool
    time_speed: bool  # time the first subject on the checks' SPEED case (the reference, or the learner)
    speed_enough_s: float  # a learner's speed run: a call faster than this ends its timing (no advice
    # is given under SLOWER x the reference's time, so one such call decides it; judge.pipeline)
    combinations: list[str]  # pitfall pairs ("a+b") to run, instead of the single pitfalls
    costs: dict[str, float]  # a practice job: the reference's seconds per instance (child/halves.py)
    # Added by the sandbox:
    token: str  # proves the result was written by this run's runner (never sent back twice)
    out_dir: str  # the run's private temp dir: the child's cwd and HOME
    time_limit: float
    control_fd: int  # a pipe: "ready" and "case ..." lines, read by the parent (never a file)
    witness_fd: int  # cold witnessed runs: the waiter's pipe for the run's figures (witness.py)
    shield: bool  # fork a waiter so the submission's getppid() is not the judge
    confine: Confinement | None
    stdout_fifo: str  # warm runs: the FIFOs grind reads the job's output from (child/server.take_streams)
    stderr_fifo: str


@dataclass(frozen=True)
class Limits:
    """Resource limits for one child. The wall clock starts when the child reports that it has
    imported torch and loaded the checks (over a pipe, before any learner code runs), so a slow
    import never eats into the learner's time."""

    wall_s: float = 10.0
    memory_mb: int = 4096
    cpu_s: float | None = None  # default: derived from wall_s
    file_mb: int = 64
    open_files: int = 256
    output_bytes: int = 64 * 1024
    processes: int = 128  # processes + threads of this run (a pids cgroup where possible)
    disk_mb: int = 256  # all the files of one run together (file_mb is per file); see judge.worker.disk

    @property
    def cpu_limit(self) -> int:
        """CPU seconds: generous by default (torch's import counts too), explicit when set."""
        return int(self.cpu_s if self.cpu_s is not None else self.wall_s * 2 + 30)


@dataclass
class RunOutcome:
    """What happened to one child, as data. ``status`` is one of ok, timeout, crashed."""

    status: str
    message: str = ""
    result: Result | None = None
    observations: dict[str, np.ndarray] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    returncode: int | None = None
    duration_s: float = 0.0
    last_case: str | None = None
    timeout_trace: str = ""
    isolation: str = ""
    witness: dict[str, int | None] | None = None  # traffic and writes, counted outside (witness.py)
    forbidden_api: str | None = None  # marks: the API whose poisoned implementation ended the run (poison.py)
    kept: dict[str, KeptCase] = field(default_factory=dict)  # read by grind after the run (judge/kept.py)


class Worker(Protocol):
    """What a worker that runs jobs offers the grading code: a cold runner (a process of its own
    per job, over ``sandbox.run_job``) and ``sandbox.WarmWorker`` (forks of a server that imported
    torch once) are both one. A job it cannot run is an outcome (``crashed``), never an exception;
    ``shut`` is true once its owner closed it (Ctrl-C in watch mode), and then a failed trusted job
    is not run again. Starting and stopping a warm server (``start``, ``alive``, ``close``) is its
    owner's business, not grading's. The per-user daemon's client is not a Worker: it gives whole
    verdicts (an executor)."""

    @property
    def shut(self) -> bool: ...

    def run_job(self, job: Job, limits: Limits) -> RunOutcome: ...


# ---------------------------------------------------------------------------------------------
# Child -> parent (hostile until parsed)


@dataclass
class ErrorInfo:
    """An exception the subject raised, reduced to text the report can show."""

    type: str
    message: str
    line: int | None = None
    code: str = ""
    traceback: str = ""

    @classmethod
    def parse(cls, raw: Any, where: str) -> ErrorInfo:
        d = _dict(raw, where)
        return cls(_text(d, "type", where), _text(d, "message", where), _opt_int(d.get("line"), f"{where}.line"),
                   _text(d, "code", where, default=""), _text(d, "traceback", where, default=""))


@dataclass
class CaseRecord:
    """How one subject fared on one case instance: ``ok`` (observations under ``keys``),
    ``error`` (it raised) or ``bad_output`` (it returned something that is not data)."""

    status: str
    keys: list[str] = field(default_factory=list)
    message: str = ""
    error: ErrorInfo | None = None

    @classmethod
    def parse(cls, raw: Any, where: str) -> CaseRecord:
        d = _dict(raw, where)
        status = d.get("status")
        if status == "ok":
            return cls("ok", keys=[_str(k, f"{where}.keys") for k in _list(d.get("keys"), f"{where}.keys")])
        if status == "error":
            return cls("error", error=ErrorInfo.parse(d.get("error"), f"{where}.error"))
        if status == "bad_output":
            return cls("bad_output", message=_text(d, "message", where))
        raise ProtocolError(f"{where}: unknown case status {str(status)[:40]!r}")

    def to_json(self) -> dict[str, Any]:
        if self.status == "ok":
            return {"status": "ok", "keys": self.keys}
        if self.status == "error":
            return {"status": "error", "error": asdict(self.error) if self.error else None}
        return {"status": self.status, "message": self.message}


@dataclass
class ForbiddenHit:
    api: str
    line: int | None = None

    @classmethod
    def parse(cls, raw: Any, where: str) -> ForbiddenHit:
        d = _dict(raw, where)
        return cls(_text(d, "api", where), _opt_int(d.get("line"), f"{where}.line"))


@dataclass
class SubjectRecord:
    """One subject's whole run: a load error, or one record per case instance."""

    load_error: ErrorInfo | None = None
    cases: dict[str, CaseRecord] = field(default_factory=dict)
    forbidden: list[ForbiddenHit] = field(default_factory=list)
    elapsed_s: float = 0.0
    # Seconds per case instance. The reference's, kept in the cache, tell a later learner's job
    # how to share its instances between two processes (child/job.py, _shared_instances).
    case_s: dict[str, float] = field(default_factory=dict)
    # Its cases ran in two processes and its own code changed what it keeps between calls (a
    # module-level counter): the verdict of one process in order is then the one that stands.
    carried_state: bool = False

    @classmethod
    def parse(cls, raw: Any, where: str) -> SubjectRecord:
        d = _dict(raw, where)
        load_error = d.get("load_error")
        cases = _dict(d.get("cases", {}), f"{where}.cases")
        case_s = _dict(d.get("case_s", {}), f"{where}.case_s")
        return cls(
            ErrorInfo.parse(load_error, f"{where}.load_error") if load_error is not None else None,
            {_str(name, f"{where}.cases"): CaseRecord.parse(rec, f"{where}.cases[{str(name)[:60]}]")
             for name, rec in cases.items()},
            [ForbiddenHit.parse(h, f"{where}.forbidden") for h in _list(d.get("forbidden", []), f"{where}.forbidden")],
            _float(d.get("elapsed_s", 0.0), f"{where}.elapsed_s"),
            {_str(name, f"{where}.case_s"): _float(s, f"{where}.case_s") for name, s in case_s.items()},
            d.get("carried_state", False) is True,
        )

    def to_json(self) -> dict[str, Any]:
        return {"load_error": asdict(self.load_error) if self.load_error else None,
                "cases": {k: v.to_json() for k, v in self.cases.items()},
                "forbidden": [asdict(h) for h in self.forbidden], "elapsed_s": self.elapsed_s,
                "case_s": self.case_s, "carried_state": self.carried_state}


@dataclass
class Instance:
    """One concrete input of a case (random cases have one per size and seed), in run order."""

    name: str
    case: str
    kind: str
    params: dict[str, Any]
    input: Any = None
    shown: list[str] | None = None
    # What the entries of a flattened observation are: {observation: [(label, shape), ...]},
    # in order along its last axis, so a verdict says "param 1 (bias)[2]", not "entry 6".
    entries: dict[str, list[tuple[str, list[int]]]] | None = None

    @classmethod
    def parse(cls, raw: Any, where: str) -> Instance:
        d = _dict(raw, where)
        kind = _text(d, "kind", where)
        if kind not in CASE_KINDS:
            raise ProtocolError(f"{where}: unknown case kind {kind[:40]!r}")
        params = _dict(d.get("params", {}), f"{where}.params")
        for key, value in params.items():
            if type(value) is not int:
                raise ProtocolError(f"{where}.params.{str(key)[:40]}: not an integer")
        shown = d.get("shown")
        entries = d.get("entries")
        return cls(_text(d, "name", where), _text(d, "case", where), kind, params, _json_value(d.get("input")),
                   [_str(s, f"{where}.shown") for s in _list(shown, f"{where}.shown")] if shown is not None else None,
                   _entries(entries, f"{where}.entries") if entries is not None else None)


def _entries(raw: Any, where: str) -> dict[str, list[tuple[str, list[int]]]]:
    out: dict[str, list[tuple[str, list[int]]]] = {}
    for key, pieces in _dict(raw, where).items():
        listed = []
        for piece in _list(pieces, f"{where}.{str(key)[:40]}"):
            pair = _list(piece, f"{where}.{str(key)[:40]}")
            if len(pair) != 2:
                raise ProtocolError(f"{where}.{str(key)[:40]}: each entry is [label, shape]")
            shape = _list(pair[1], f"{where}.{str(key)[:40]}")
            if not all(type(n) is int and n >= 0 for n in shape):
                raise ProtocolError(f"{where}.{str(key)[:40]}: a shape holds non-negative integers")
            listed.append((_str(pair[0], where, 200), shape))
        out[_str(key, where)] = listed
    return out


@dataclass
class PitfallMeta:
    """A known mistake, as the author describes it. ``library`` names a real library whose own
    behaviour this is; ``convention`` says it is a legitimate different convention there (not
    a bug), so the learner hears "library X does it this way" rather than "this is wrong"."""

    slug: str
    name: str
    explanation: str
    hint: str
    library: str = ""
    convention: bool = False

    @classmethod
    def parse(cls, raw: Any, where: str) -> PitfallMeta:
        d = _dict(raw, where)
        return cls(_text(d, "slug", where), _text(d, "name", where), _text(d, "explanation", where),
                   _text(d, "hint", where), _text(d, "library", where, default=""), d.get("convention") is True)


@dataclass
class SpeedSample:
    reference_s: float
    budget_s: float
    learner_s: float | None
    case: str

    @classmethod
    def parse(cls, raw: Any, where: str) -> SpeedSample:
        d = _dict(raw, where)
        learner = d.get("learner_s")
        return cls(_float(d.get("reference_s"), f"{where}.reference_s"), _float(d.get("budget_s"), f"{where}.budget_s"),
                   _float(learner, f"{where}.learner_s") if learner is not None else None, _text(d, "case", where))


# A mistake in the exercise's own trusted files (checks, pitfalls), found by the trusted child:
# it writes one line starting with this to stderr and exits, and the parent shows that line alone.
AUTHORING_PREFIX = "grind-authoring: "
CASE_KINDS = ("example", "edge", "random")
PITFALL_KEYS = ("slug", "name", "explanation", "hint", "impl")


@dataclass
class Result:
    """Everything one run observed, except the tensors (those travel in safetensors)."""

    token: str
    observations_sha256: str
    subjects: dict[str, SubjectRecord] = field(default_factory=dict)
    instances: list[Instance] = field(default_factory=list)
    pitfalls: list[PitfallMeta] = field(default_factory=list)
    speed: SpeedSample | None = None
    torch_version: str = ""
    unresolved: list[str] = field(default_factory=list)  # forbidden names that name nothing in this torch

    def to_json(self) -> dict[str, Any]:
        return {
            "token": self.token, "observations_sha256": self.observations_sha256,
            "subjects": {k: v.to_json() for k, v in self.subjects.items()},
            # Shallow: an instance's fields are plain JSON values already, and asdict's deep copy of
            # every input preview was a fifth of a small job's time in the child.
            "instances": [dict(vars(i)) for i in self.instances], "pitfalls": [asdict(p) for p in self.pitfalls],
            "speed": asdict(self.speed) if self.speed else None, "torch_version": self.torch_version,
            "unresolved": self.unresolved,
        }


def parse_result(raw: bytes) -> Result:
    """Parse (never trust) a result document. Raises ProtocolError naming the first problem."""
    try:
        doc = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except ProtocolError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProtocolError(f"result.json is not valid JSON ({type(exc).__name__})") from None
    d = _dict(doc, "result")
    subjects = _dict(d.get("subjects"), "subjects")
    speed = d.get("speed")
    return Result(
        token=_text(d, "token", "result"),
        observations_sha256=_text(d, "observations_sha256", "result"),
        subjects={_str(sid, "subjects"): SubjectRecord.parse(rec, f"subjects[{str(sid)[:60]}]")
                  for sid, rec in subjects.items()},
        instances=[Instance.parse(i, "instances") for i in _list(d.get("instances", []), "instances")],
        pitfalls=[PitfallMeta.parse(p, "pitfalls") for p in _list(d.get("pitfalls", []), "pitfalls")],
        speed=SpeedSample.parse(speed, "speed") if speed is not None else None,
        torch_version=_text(d, "torch_version", "result", default=""),
        unresolved=[_str(n, "unresolved") for n in _list(d.get("unresolved", []), "unresolved")],
    )


@dataclass
class Reply:
    """The warm server's answer about one job. The server is trusted code, but it shares a
    sandbox with the jobs, so grind parses this as strictly as a result."""

    exit: int
    timed_out: bool
    ready: bool
    stdout: str = ""
    stderr: str = ""
    last_case: str | None = None
    witness: dict[str, int | None] | None = None  # the job's traffic and writes (witness.py)
    token: str = ""  # the job's token, as grind sent it: a reply of another job's is refused

    @classmethod
    def parse(cls, raw: bytes) -> Reply:
        try:
            d = _dict(json.loads(raw.decode("utf-8"), parse_constant=_no_constant), "reply")
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ProtocolError("the warm worker's reply is not valid JSON") from None
        code = d.get("exit")
        if type(code) is not int or not -256 < code < 256:
            raise ProtocolError("the warm worker's reply has no exit status")
        last = d.get("last_case")
        return cls(code, d.get("timed_out") is True, d.get("ready") is True,
                   _text(d, "stdout", "reply", default="", limit=1 << 20),
                   _text(d, "stderr", "reply", default="", limit=1 << 20),
                   _str(last, "reply.last_case")[:200] if last is not None else None,
                   parse_witness(d.get("witness")),
                   _str(d["token"], "reply.token", 200) if d.get("token") is not None else "")


def parse_witness(raw: Any) -> dict[str, int | None] | None:
    """The witness's figures ({"traffic": bytes, "writes": bytes}, either may be null), or None
    when absent or not of that shape: a figure that cannot be read is never a zero."""
    if type(raw) is not dict:
        return None
    figures: dict[str, int | None] = {}
    for key in ("traffic", "writes"):
        value = raw.get(key)
        if value is not None and (type(value) is not int or not 0 <= value < 1 << 62):
            return None
        figures[key] = value
    return figures


# ---------------------------------------------------------------------------------------------
# Validators: each names the field that was wrong, for the crashed verdict's message.


def _no_constant(name: str) -> Any:
    raise ProtocolError(f"{name} is not a JSON number")


def _dict(value: Any, where: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise ProtocolError(f"{where}: expected an object, got {type(value).__name__}")
    if len(value) > MAX_ITEMS:
        raise ProtocolError(f"{where}: too many entries")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if type(value) is not list:
        raise ProtocolError(f"{where}: expected a list, got {type(value).__name__}")
    if len(value) > MAX_ITEMS:
        raise ProtocolError(f"{where}: too many entries")
    return value


def _str(value: Any, where: str, limit: int = MAX_TEXT) -> str:
    if type(value) is not str:
        raise ProtocolError(f"{where}: expected text, got {type(value).__name__}")
    if len(value) > limit:
        raise ProtocolError(f"{where}: text too long")
    return value


def _text(d: dict[str, Any], key: str, where: str, default: str | None = None, limit: int = MAX_TEXT) -> str:
    if key not in d and default is not None:
        return default
    return _str(d.get(key), f"{where}.{key}", limit)


def _opt_int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if type(value) is not int or not 0 <= value < 10**9:
        raise ProtocolError(f"{where}: expected a line number")
    return value


def _float(value: Any, where: str) -> float:
    if type(value) not in (int, float):
        raise ProtocolError(f"{where}: expected a number, got {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float (a forged report's 10**400)
        number = math.inf
    if not math.isfinite(number) or not 0 <= number < 1e9:
        raise ProtocolError(f"{where}: {str(value)[:40]} is not a duration")
    return number


def _json_value(value: Any, depth: int = 0) -> Any:
    """A case's input preview: any JSON, bounded in depth and text."""
    if depth > 20:
        raise ProtocolError("an input preview is nested too deeply")
    if isinstance(value, dict):
        return {_str(k, "input"): _json_value(v, depth + 1) for k, v in _dict(value, "input").items()}
    if isinstance(value, list):
        return [_json_value(v, depth + 1) for v in _list(value, "input")]
    if isinstance(value, str):
        return _str(value, "input")
    if value is None or type(value) in (bool, int, float):
        return value
    raise ProtocolError("an input preview holds something that is not JSON")


# A subject whose source builds or subclasses a torch optimizer: its job wants torch._dynamo
# imported in the warm server first (see child/server.uses_torch_optim). Read by the parent, which
# stages the source as a file, and by the runner, for a source sent in the job.
BUILDS_OPTIMIZER = re.compile(r"Optimizer|optim\.[A-Z]|from\s+torch\.optim\b|import\s+torch\.optim\b")
