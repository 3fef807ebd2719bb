"""The child side of the worker: the only code that runs next to learner code.

It is started as ``python -I runner.py`` (by path, so nothing of the judge package is imported
here and nothing in the judge can be monkeypatched from the submission in a way that matters),
reads one job as JSON on stdin, and writes back *observations*, never verdicts:

- ``observations.safetensors``: every observed tensor, as plain numpy data;
- ``result.json``: per subject and case, whether it ran, raised, or returned something that is not
  data, plus the run's token and the hash of the observations file.

The parent decides pass/fail by comparing these observations with the reference's, so nothing
the learner does in this process can turn into a pass without producing the right numbers.

This file deliberately imports only the standard library at module level. numpy, torch and
safetensors are imported inside :func:`main` once the limits are in force.
"""

from __future__ import annotations

import faulthandler
import functools
import hashlib
import json
import os
import sys
import time
import traceback
import types
from typing import Any

PREVIEW_ELEMENTS = 1024  # larger tensors are summarised in a verdict's input
INPUT_NUMBERS = 4096  # an input with more numbers has its long lists summarised
LONG_LIST = 64


def _sibling(name: str) -> types.ModuleType:
    """A stdlib-only module next to this file. The child runs this file by path with ``python -I``
    (no script folder on sys.path, and ``judge`` is refused), so it loads siblings by path; the
    parent imports them as ``judge.worker.<name>``."""
    if __package__:
        import importlib

        return importlib.import_module(f"{__package__}.{name}")
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"grind_worker_{name}",
                                                  os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                               f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# The result is encoded by an encoder of grind's own, made before any learner code exists (see
# ranks._ENCODE: json's shared default encoder is the learner's to change).
_ENCODE = json.JSONEncoder().encode
_guards = _sibling("guards")
_integrity = _sibling("integrity")
_landlock = _sibling("landlock")
_poison = _sibling("poison")
_protocol = _sibling("protocol")
_ranks = _sibling("ranks")
_witness = _sibling("witness")
ForbiddenAPI = _guards.ForbiddenAPI
Guards = _guards.Guards


class BadOutput(Exception):
    """The subject produced something that is not plain numeric data."""


def _learner_frames(tb: Any, filename: str) -> list[traceback.FrameSummary]:
    return [f for f in traceback.extract_tb(tb) if f.filename == filename]


def describe_exception(exc: BaseException, filename: str) -> dict[str, Any]:
    """Type, message and the learner's own frames only: the judge's frames are noise to them.
    The exception is the learner's object: if describing it fails, say so instead."""
    try:
        return _describe(exc, filename)
    except BaseException:  # noqa: BLE001 - e.g. an exception whose __str__ raises
        return {"type": "UndescribableException", "message": "the submission raised an exception that could "
                "not be turned into a message", "line": None, "code": "", "traceback": ""}


def _describe(exc: BaseException, filename: str) -> dict[str, Any]:
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return {
            "type": type(exc).__name__,
            "message": str(exc.msg),
            "line": exc.lineno,
            "code": (exc.text or "").strip(),
            "traceback": f'  File "{filename}", line {exc.lineno}\n    {(exc.text or "").strip()}\n',
        }
    frames = _learner_frames(exc.__traceback__, filename)
    last = frames[-1] if frames else None
    if isinstance(exc, SystemExit):
        message = f"the submission called exit({exc.code!r}); return a value instead"
    elif isinstance(exc, MemoryError):
        message = "out of memory" + memory_note()
    elif note := limit_note(exc):
        message = f"{exc} ({note})"
    else:
        message = str(exc)
    return {
        "type": type(exc).__name__,
        "message": message[:2000],
        "line": last.lineno if last else None,
        "code": (last.line or "").strip() if last else "",
        "traceback": "".join(traceback.format_list(frames))[-4000:],
    }


# The functions the conversion below calls, taken before any learner code exists (bind_conversions):
# a seventh review swapped torch.Tensor.detach from a finalizer that ran after the learner's call
# returned and before the conversion, and put it back (a plain write to a class is not an event
# CPython 3.11 audits, so the marks log did not see it).
_CONVERT: dict[str, Any] = {}


def _conversions(np: Any, torch: Any) -> dict[str, Any]:
    return dict(Tensor=torch.Tensor, Parameter=torch.nn.Parameter, detach=torch.Tensor.detach,
                cpu=torch.Tensor.cpu, is_complex=torch.Tensor.is_complex, to=torch.Tensor.to,
                numpy=torch.Tensor.numpy, array=np.array, disable=torch._C.DisableTorchFunctionSubclass,
                bfloat16=torch.bfloat16, float32=torch.float32)


def bind_conversions(np: Any, torch: Any) -> None:
    _CONVERT.update(_conversions(np, torch))


def to_array(value: Any, np: Any, torch: Any) -> Any:
    """Turn one observed value into a plain numpy array, refusing anything that is not data.

    Exact type checks on purpose: a tensor subclass with ``__torch_function__``, a float
    subclass, or an object with a lying ``__eq__`` is rejected here, never compared.
    """
    kind = type(value)
    c = _CONVERT or _conversions(np, torch)
    if kind is c["Tensor"] or kind is c["Parameter"]:
        with c["disable"]():
            tensor = c["cpu"](c["detach"](value))
            if c["is_complex"](tensor):
                raise BadOutput("got a complex tensor where a real one was expected")
            if tensor.dtype is c["bfloat16"]:
                tensor = c["to"](tensor, c["float32"])
            return c["array"](c["numpy"](tensor), copy=True)
    if kind is bool or kind is int or kind is float:
        array = np.array(value)
        if array.dtype.kind not in "biuf":  # an int too large for any integer dtype
            raise BadOutput(f"got the integer {str(value)[:40]}, too large to be a number here")
        return array
    if kind is np.ndarray or kind in (np.bool_, np.float16, np.float32, np.float64, np.int8, np.int16,
                                      np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
        array = np.array(value, copy=True)
        if array.dtype.kind not in "biuf" or array.dtype.itemsize > 8:  # float128 cannot travel
            raise BadOutput(f"got a numpy array of dtype {array.dtype} where numbers were expected")
        return array
    if kind is list or kind is tuple:
        parts = [to_array(v, np, torch) for v in value]
        try:
            stacked = np.stack(parts) if parts else np.zeros((0,))
        except ValueError:
            raise BadOutput("got a ragged list where a rectangular tensor was expected") from None
        if stacked.dtype.kind not in "biuf":
            raise BadOutput(f"got a list holding {stacked.dtype} values where numbers were expected")
        return stacked
    if value is None:
        raise BadOutput("got None where a value was expected (did you forget to return?)")
    if isinstance(value, torch.Tensor):
        raise BadOutput(f"got a subclass of torch.Tensor ({kind.__name__}); return a plain tensor")
    raise BadOutput(f"got an object of type {kind.__name__} where a number or tensor was expected")


def preview(value: Any, np: Any, torch: Any) -> Any:
    """A JSON-able picture of a case input, for the report (trusted inputs only), whole and
    exact: every number as the shortest decimal that reads back to the same value in its own
    dtype (0.1 in float32 is "0.1", 2**23 is 8388608.0), no list cut short. Only an input of
    more than INPUT_NUMBERS numbers (thousands of steps of a long run) has its long lists
    summarised, and a tensor past PREVIEW_ELEMENTS entries its values: nobody reads those in a
    terminal, and ``grind run --repro`` rebuilds them whole."""
    whole = _preview(value, np, torch, None)
    if _numbers(whole) <= INPUT_NUMBERS:
        return whole
    return _preview(value, np, torch, LONG_LIST)


def _numbers(shown: Any) -> int:
    if isinstance(shown, dict):
        return sum(_numbers(v) for v in shown.values())
    if isinstance(shown, list):
        return sum(_numbers(v) for v in shown)
    return 1


def _preview(value: Any, np: Any, torch: Any, cap: int | None) -> Any:
    if isinstance(value, dict):
        return {str(k): _preview(v, np, torch, cap) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not all(type(v) in (int, float, bool) for v in value):
        if cap is not None and len(value) > cap:
            return f"<{len(value)} items: grind run --repro rebuilds them>"
        return [_preview(v, np, torch, cap) for v in value]
    if isinstance(value, torch.Tensor) and value.requires_grad and value.grad is not None:
        return {"grad": _preview(value.grad, np, torch, cap)}
    if isinstance(value, torch.nn.Module):  # what the module is, and every weight it starts from
        return {"module": " ".join(repr(value).split())[:300],
                "parameters": {name: _preview(p.detach(), np, torch, cap) for name, p in value.named_parameters()}}
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    try:
        array = to_array(value, np, torch)
    except BadOutput:
        return repr(value)[:80]
    if array.size > (PREVIEW_ELEMENTS if cap is None else cap):
        return f"<{array.dtype} tensor of shape {list(array.shape)}: grind run --repro rebuilds it>"
    return exact_list(array, np)


def exact_list(array: Any, np: Any) -> Any:
    """``array.tolist()`` with each float the shortest decimal that round-trips in the array's
    own dtype (a float32 0.1 is 0.1, not 0.10000000149011612) and non-finite floats spelled out."""
    if array.dtype.kind != "f":
        return array.tolist()
    flat = [_finite_or_text(float(str(v)) if array.dtype != np.float64 else float(v)) for v in array.reshape(-1)]
    if array.ndim == 0:
        return flat[0]
    return np.array(flat, dtype=object).reshape(array.shape).tolist()


def _finite_or_text(value: float) -> Any:
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return value


def entries_of(case: dict[str, Any], inputs: dict[str, Any]) -> Any:
    """The case's names for the pieces of its flattened observations (its optional "entries"
    function of the fresh inputs), as [label, shape] lists. Trusted code, read before any
    subject touches the inputs."""
    if "entries" not in case:
        return None
    return {str(key): [[str(label), [int(n) for n in shape]] for label, shape in pieces]
            for key, pieces in case["entries"](inputs).items()}


def load_source(source: str, filename: str, name: str, guards: Any = None) -> types.ModuleType:
    """Run ``source`` (text, decoded by the parent) as a fresh module. With ``guards`` it is the
    learner's file: its code objects and globals are the learner's before a line of it runs (the
    guards know learner code by identity), and so are the classes it defines."""
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    import linecache

    # The file itself may be out of reach in the child: the error line shows the code from here.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec") if guards is not None else compile_trusted(source, filename)
    if guards is not None:
        guards.adopt_code(code, from_file=True)
        guards.adopt_namespace(module.__dict__)
    exec(code, module.__dict__)
    if guards is not None:
        guards.adopt_classes(module.__dict__)
    return module


def expand_cases(cases: list[dict[str, Any]], seeds_override: int | None) -> list[dict[str, Any]]:
    """One instance per (case, size, seed), sizes ascending: the first failing instance of a
    random case is then the smallest failing input, by construction."""
    instances = []
    for case in cases:
        if case.get("kind", "edge") == "random":
            seeds = seeds_override or int(case.get("seeds", 2))
            for size in case["sizes"]:
                for seed in range(seeds):
                    instances.append({
                        "name": f"{case['name']}[size={size},seed={seed}]",
                        "case": case, "params": {"size": size, "seed": seed},
                    })
        else:
            instances.append({"name": case["name"], "case": case, "params": {}})
    return instances


def subject_namespace(impl: Any, entry: list[str]) -> types.SimpleNamespace:
    if isinstance(impl, dict):
        return types.SimpleNamespace(**impl)
    if len(entry) == 1 and callable(impl) and not isinstance(impl, types.ModuleType):
        return types.SimpleNamespace(**{entry[0]: impl})  # the entry point itself: a function or a class
    return types.SimpleNamespace(**{name: getattr(impl, name) for name in entry})


class _OverBudget(BaseException):
    pass


def time_call(case: dict[str, Any], subject: Any, budget: float | None) -> float | None:
    """The fastest of several timed calls after one warm-up; None if a call runs past ``budget``
    seconds (stopped with SIGALRM, so a very slow submission cannot turn a pass into a timeout).

    The minimum, not the median: on a loaded machine a call is only ever slowed down, never sped
    up, so the fastest sample is the one closest to the code's own cost. A median of three let
    one preempted millisecond call turn a vectorised answer into "7x slower" advice. At least
    three samples and at most nine, stopping once the samples add up to a quarter second."""
    import signal

    def over(signum: int, frame: Any) -> None:
        raise _OverBudget()

    samples = []
    previous = signal.signal(signal.SIGALRM, over) if budget else None
    try:
        for attempt in range(10):
            if attempt > 3 and sum(samples) > 0.25:
                break
            inputs = case["inputs"]()
            if budget:
                signal.setitimer(signal.ITIMER_REAL, budget)
            started = time.perf_counter()
            try:
                case["call"](subject, **inputs)
            except _OverBudget:
                return None
            except BaseException:  # noqa: BLE001 - a failure here is not the verdict's business
                return None
            finally:
                if budget:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            if attempt:
                samples.append(time.perf_counter() - started)
    finally:
        if budget:
            signal.signal(signal.SIGALRM, previous)
    return min(samples)


def shield_parent(witness_fd: int | None = None) -> None:
    """Fork once, so that the process the submission sees as its parent is this small waiter and
    not the judge: ``os.kill(os.getppid(), SIGKILL)`` then only ends the run (a crash verdict)
    instead of killing grind. The waiter is also a child subreaper: every process the run leaves
    behind (a ``setsid()`` grandchild, a double fork) is re-parented to it and killed when the
    worker ends. Under Landlock the worker confines itself after this fork, so it cannot signal
    the waiter. The waiter mirrors the worker's exit status, signals included.

    With ``witness_fd`` (a pipe to grind that only the waiter keeps: the worker closes it before
    any learner code exists), the waiter is also the run's witness: once it has reaped every
    process of the run, it reports the run's traffic and writes there (see witness.py)."""
    _become_subreaper()
    before = _witness.sample() if witness_fd is not None else {}
    _take_the_run_down_with_parent()
    pid = os.fork()
    if pid == 0:
        import signal

        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the waiter's handler is not the worker's
        die_with_parent()
        if witness_fd is not None:
            os.close(witness_fd)
        return
    status = None
    while status is None:
        try:
            done, code = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if done == pid:
            status = code
    reap_children()
    if witness_fd is not None:
        _witness.report(witness_fd, _witness.since(before))
    code = os.waitstatus_to_exitcode(status) if status is not None else 70
    if code < 0:
        import signal

        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def _take_the_run_down_with_parent() -> None:
    """In the waiter: when grind (our parent) dies, kill every process of the run, then go.

    The waiter used to die with SIGKILL (die_with_parent), which the worker followed, but not a
    double-forked ``setsid()`` grandchild of the learner: re-parented to init once its subreaper
    was gone, it kept running with no wall clock and no disk watch, in a run folder the next grind
    sweeps as abandoned (red team 2, sweep_survivor_submission.py; as root bubblewrap's PID
    namespace ended it, not on a laptop). Now the parent-death signal is SIGTERM, caught: the
    waiter, still the subreaper of everything the run left, kills its children until none is left
    (reap_children), then exits. A learner that can signal the waiter (no Landlock scoping) only
    ends its own run this way, as with SIGKILL before. Set before the fork, so that no moment
    exists where learner code runs under a waiter that would die without taking it along."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    def orphaned(signum: int = 0, frame: Any = None) -> None:
        reap_children()
        os._exit(70)

    parent = os.getppid()
    signal.signal(signal.SIGTERM, orphaned)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # grind died before the line above took effect
        orphaned()


def die_with_parent() -> None:
    """SIGKILL this process when its parent dies (PR_SET_PDEATHSIG), so a run never outlives
    grind (Ctrl-C, a crash): the warm server dies with grind, each job with the server, the
    worker with its waiter. Without bubblewrap's --die-with-parent this is what holds."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        parent = os.getppid()
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # the parent died before the line above took effect
            os._exit(70)


def set_dumpable(dumpable: bool) -> None:
    """PR_SET_DUMPABLE: a process that is not dumpable has its /proc/<pid> files (fd/, mem,
    environ) closed to every process without CAP_SYS_PTRACE, same user included. The warm server
    is not dumpable while a job runs: under bubblewrap on a kernel without Landlock (no scoping),
    a job reopened the server's pipes to grind through /proc/<server>/fd/1 and wrote reply lines
    of its own, which grind took for its classmates' (red team 2, warm_reply_forge.py). It is
    dumpable again between jobs because it reads its own /proc/self/io for the witness, and a
    non-dumpable process's /proc files belong to root (mode 0400: unreadable to ``nobody``)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(4, int(dumpable), 0, 0, 0)  # PR_SET_DUMPABLE
        except (OSError, AttributeError):
            pass


def _become_subreaper() -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            pass


def children_of(pid: int | None = None) -> list[int]:
    """The processes whose parent is ``pid`` (default: this one), from /proc. Shared with grind's
    own orphan sweep (judge.worker.isolation), which imports this stdlib-only file."""
    parent, found = os.getpid() if pid is None else pid, []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    if int(handle.read().rsplit(b")", 1)[1].split()[1]) == parent:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


def reap_children() -> None:
    """SIGKILL every child (orphans re-parented to this subreaper included) until none is left."""
    import signal

    while True:
        for pid in children_of():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


_private_net: bool | None = None  # this process tree's own network namespace: None until tried


def private_network(rules: dict[str, Any] | None) -> None:
    """This process tree's own network namespace, where the rules ask for one: made once."""
    global _private_net
    if rules and rules.get("private_net") and _private_net is None:
        _private_net = _landlock.private_network()


def confine(rules: dict[str, Any] | None) -> None:
    """Confine this process (and what it starts) with Landlock before any submission runs. A
    kernel that refuses is not a reason to run unconfined: exit, and grind says why."""
    if not rules:
        return
    try:
        # TCP only where it cannot leave the run: bubblewrap's network namespace, or one of our
        # own (distributed cases need loopback TCP between their ranks; see landlock.py). Made
        # once per process tree: a warm server makes it before its own Landlock layer (which
        # would deny writing a new namespace's uid map), and its jobs, forks run one at a time
        # and killed to the last process after each, share it.
        private_network(rules)
        tcp = bool(rules.get("loopback_tcp")) or (bool(rules.get("private_net")) and bool(_private_net))
        _landlock.drop_capabilities()  # root in a container: a uid, not CAP_SYS_ADMIN (see there)
        if rules.get("landlock", True):  # False: bubblewrap on a kernel without it (the filter still holds)
            _landlock.restrict(rules["read"], rules["write"], list_only=rules.get("list") or [], deny_tcp=not tcp)
        _landlock.seccomp_filter(inet=tcp)  # doors Landlock leaves open (unix sockets, io_uring, UDP, ...)
    except OSError as exc:
        print(f"grind-confine: {exc}", file=sys.stderr, flush=True)
        os._exit(71)


def limit_note(exc: BaseException) -> str:
    """Name the limit an exception comes from, so "Errno 27" reads as the file-size limit."""
    import errno
    import resource

    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return "the limit on processes and threads was reached"
    if not isinstance(exc, OSError):
        return ""
    if exc.errno == errno.EAGAIN and isinstance(exc, BlockingIOError):
        return "the limit on processes and threads was reached"
    if exc.errno == errno.EFBIG:
        return f"the file-size limit of {resource.getrlimit(resource.RLIMIT_FSIZE)[0] >> 20} MB was reached"
    if exc.errno == errno.EMFILE:
        return f"the limit of {resource.getrlimit(resource.RLIMIT_NOFILE)[0]} open files was reached"
    return ""


def memory_note() -> str:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return f" (the memory limit is {soft >> 20} MB)" if soft != resource.RLIM_INFINITY else ""


_NOT_DELTA = {"__module__", "__doc__", "__qualname__", "__dict__", "__weakref__", "__firstlineno__",
              "__static_attributes__"}


def _combine(a: Any, b: Any) -> Any:
    """Two known mistakes in one implementation, or None when they cannot be combined.

    Class-based pitfalls written as small overrides of a shared base (adam's are) combine by
    inheritance: ``type("A+B", (A, B), {})`` has both overrides, provided they change different
    things. A dict of entry points combines entry by entry."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return None
        parts = {key: _combine(a[key], b[key]) for key in a}
        return parts if all(v is not None for v in parts.values()) else None
    if not (isinstance(a, type) and isinstance(b, type)) or issubclass(a, b) or issubclass(b, a):
        return None
    if (set(vars(a)) - _NOT_DELTA) & (set(vars(b)) - _NOT_DELTA):
        return None  # both change the same thing: together they are not both mistakes
    try:
        return type(f"{a.__name__}+{b.__name__}", (a, b), {})
    except TypeError:  # no consistent method order
        return None


def pitfall_combinations(bundle: Any, path: str, wanted_pairs: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """Pairs of known mistakes run together (subjects ``pitfall:a+b``), so a submission that makes
    two of them (HF's old AdamW: eps before the bias correction *and* decay after the update) is
    named with both. A pitfalls module opts in with ``COMBINE = "all"`` (every pair that
    :func:`_combine` can build) or a list of slug pairs; ``COMBINATIONS = [{"of": [a, b],
    "impl": ...}]`` gives a pair explicitly (function-based pitfalls cannot be combined
    automatically), and a module-level ``combine(a, b)`` builds pairs the module's own way.
    Only the pairs grind asks for (``wanted_pairs``, "a+b") are built: grind asks when no single
    mistake explains a submission, and caches each pair's observations."""
    import itertools

    impls = {p["slug"]: p["impl"] for p in bundle.PITFALLS}
    explicit = {tuple(c["of"]): c["impl"] for c in getattr(bundle, "COMBINATIONS", [])}
    wanted = getattr(bundle, "COMBINE", None)
    pairs = list(itertools.combinations(impls, 2)) if wanted == "all" else [tuple(p) for p in wanted or []]
    pairs += [pair for pair in explicit if pair not in pairs]
    # The module's own combine(a, b) knows its deltas best (adam's merges method overrides).
    maker = getattr(bundle, "combine", None)
    asked = set(wanted_pairs)
    found = []
    for a, b in pairs:
        if f"{a}+{b}" not in asked and f"{b}+{a}" not in asked:
            continue
        impl = explicit.get((a, b))
        if impl is None and a in impls and b in impls:
            impl = maker(a, b) if callable(maker) else _combine(impls[a], impls[b])
        if impl is not None:
            found.append((_protocol.pitfall_subject(f"{a}+{b}"), {"kind": "impl", "impl": impl, "path": path}))
    return found


def main() -> None:
    """Cold mode: one job on stdin, in this process (after the shielding fork, confined)."""
    die_with_parent()
    job = json.loads(sys.stdin.read())
    witness_fd = job.get("witness_fd")
    if isinstance(witness_fd, int):
        # The waiter counts the run's traffic, so it must live in the run's network namespace:
        # made here, before the fork, rather than by the worker as it confines itself.
        private_network(job.get("confine"))
        shield_parent(witness_fd)
    elif job.get("shield", True):
        shield_parent()
    confine(job.get("confine"))
    control = os.fdopen(job["control_fd"], "w", buffering=1) if job.get("control_fd") else None
    execute(job, control)


def uses_torch_optim(job: dict[str, Any]) -> bool:
    """Whether a job may build a torch optimizer: its checks name torch.optim or ask for
    distributed ranks (``world_size``, whose DDP models import the same torch._dynamo), or one of
    its subjects' sources builds or subclasses a torch optimizer (``Optimizer``, ``optim.Adam``,
    ``from torch.optim import``: a learner's ``torch.optim.Optimizer`` subclass imports
    torch._dynamo on construction, 3 s of every such job under the guards, when the checks
    themselves only use the kit). Then the warm server imports it before forking the job (see
    serve). Not on a mere ``optimizer.step()``: every later fork of a server holding torch._dynamo
    costs 18 ms more. Only a cost decision: text that fools it makes a job slower, never different.
    The checks' code is read without its comments and docstrings: a docstring saying "as in
    torch.optim.AdamW" made every training-loop job pay the 18 ms (3.7 instead of 4.4 gradings/s)."""
    checks = _code_only(str(job.get("checks_source", "")))
    if "torch.optim" in checks or "world_size" in checks:
        return True
    return any(spec.get("builds_optimizer") or _protocol.BUILDS_OPTIMIZER.search(str(spec.get("source", "")))
               for spec in job.get("subjects", []) if isinstance(spec, dict))


@functools.lru_cache(maxsize=16)
def _code_only(source: str) -> str:
    """``source`` without its comments and string literals (docstrings included), its tokens run
    together (``torch.optim`` stays one word to search for); the source itself if it does not
    tokenize."""
    import io
    import tokenize

    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return "".join(t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.STRING))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return source


def serve() -> None:
    """Warm mode: import torch once, then run each job (one JSON line on stdin) in a fresh fork.

    The first line carries the server's own Landlock rules (write: its root folder only) and its
    pids cgroup. Each job runs in a child forked *before* its job arrives (:class:`_Spare`: the
    fork, the copy-on-write faults it sets off in both processes, the cgroup and the shielding
    fork cost 30-40 ms on a 2-core laptop, now paid while the learner reads the last verdict).
    The child joins a pids cgroup of its own, takes its own session, then waits for its job on a
    pipe; with the job it takes the job's rlimits and a Landlock layer of its own (write: the
    job's folder only; it cannot signal the server), with stdout and stderr on FIFOs that grind
    reads (the server never holds what a job printed) and the control stream on a pipe the
    server drains. The server enforces the wall clock from the
    "ready" line, kills the child's group and every process left (it is a subreaper), and
    answers one JSON line (protocol.Reply). Nothing a job does can change the server: the child
    is a copy-on-write fork in a nested sandbox, and the next job's child is forked only after
    every process of this one is gone.
    """
    # No PR_SET_PDEATHSIG here: it fires when the *thread* that started us ends, and grind starts
    # the server from whichever thread grades first. grind's death closes our stdin instead (grind
    # holds the only write end): the loop below ends at EOF when idle, and _supervise watches fd 0
    # for the hang-up while a job is in flight, so a SIGKILLed grind does not leave us running
    # until that job's wall clock (minutes, with a long --time-limit).
    passed = os.environ.pop("GRIND_SERVE_FDS", "")
    if passed:  # grind's pipes, passed as fds of their own (see sandbox.WarmWorker._start): fd 0 is
        requests, replies = (int(fd) for fd in passed.split(","))  # still the one watched for the hang-up
        os.dup2(requests, 0)
        os.dup2(replies, 1)
        os.close(requests)
        os.close(replies)
    config = json.loads(sys.stdin.readline())
    _become_subreaper()
    confine(config.get("confine"))
    import numpy  # noqa: F401 - imported once here, inherited by every fork
    import safetensors.numpy  # noqa: F401
    import torch

    torch.set_num_threads(1)
    optimizers_ready = False
    out = sys.stdout
    cgroup = config.get("cgroup")
    # Jobs confine themselves with Landlock exactly when the server does (WarmWorker sends both
    # or neither); from ABI 6 that layer also keeps them from signalling the server.
    scoped = bool(config.get("confine")) and min(_landlock.abi(), _landlock.KNOWN_ABI) >= 6
    _guards.freeze_functions()  # torch's heap, indexed before the first job rather than during it
    print(json.dumps({"ready": True}), file=out, flush=True)
    spare: _Spare | None = None
    while True:
        if spare is None:
            spare = _Spare(cgroup, scoped)
        line = sys.stdin.readline()
        if not line:
            break
        if not line.strip():
            continue
        request = json.loads(line)
        job = request["job"]
        fresh = False
        if not optimizers_ready and (uses_torch_optim(job) or job.get("marked")):
            # The first torch optimizer built in a process imports torch._dynamo, which costs
            # about as much as importing torch, and every forked job paid it again: lr-schedule
            # graded at 1.0 submission/s against clipping's 8.1. Imported here once, in the
            # server, before this job's fork (the job's clock has not started), every later job
            # inherits it; an exercise whose checks never name torch.optim does not pay for it.
            # Only the import: building an optimizer here would also patch its class (torch
            # wraps Optimizer.step in a profiling hook on first use), which changed what the
            # forbidden-API guard saw of torch.optim.SGD.step in every later job.
            import torch._dynamo  # noqa: F401
            optimizers_ready = fresh = True  # the spare was forked without it
        if spare.scoped and not job.get("confine"):
            fresh = True  # a job without its own Landlock layer runs behind the shielding fork
        if fresh or not spare.send(line):  # (send fails when the spare died waiting)
            spare.finish()
            spare = _Spare(cgroup, scoped and bool(job.get("confine")))
            spare.send(line)
        before = _witness.sample() if job.get("witness") else None
        # The job's processes are forks of this one, with its user: closed out of our /proc
        # files (our pipes to grind) while any of them may run (see set_dumpable). The spare was
        # forked dumpable, so the job's own /proc/self is as in a cold run.
        set_dumpable(False)
        reply = spare.supervise(request)
        reply["token"] = job.get("token")  # grind refuses a reply that is not this job's
        if before is not None:
            # The server is this job's witness (see witness.py): everything the job started is
            # reaped first, so that its writes are folded into the server's own count.
            spare.finish()
            spare = None
            set_dumpable(True)  # nothing of the job is left; our own /proc/self/io is read next
            # What the job printed counts among its writes here: grind, which reads the job's
            # stdout and stderr (the server never does), takes it off (sandbox.WarmWorker.run_job).
            reply["witness"] = _witness.since(before)
        try:
            print(json.dumps(reply), file=out, flush=True)
        except BrokenPipeError:
            break
        if spare is not None:
            spare.finish()  # the verdict is on its way; the next job waits for this one to be gone
        spare = None
        set_dumpable(True)  # every process of the job is gone (finish reaped them)
        precompile(job)
    if spare is not None:
        spare.finish()
    reap_children()
    os._exit(0)


class _Spare:
    """The next job's process, forked by the warm server before the job arrives, waiting for it
    on a pipe. Everything that does not depend on the job happens here, off the job's clock:
    the fork, the job's pids cgroup, its session, its output pipes and (where Landlock cannot
    keep a job from signalling the server) the shielding fork."""

    def __init__(self, cgroup: str | None, scoped: bool) -> None:
        self.scoped = scoped
        job_r, self.job_w = os.pipe()
        go_r, go_w = os.pipe()
        pipes = [os.pipe()]  # control only: the job's stdout and stderr never pass through here
        _guards.freeze_functions()  # what this server made is indexed once, not walked by every job
        pid = os.fork()
        if pid == 0:
            os.close(self.job_w)
            os.close(go_w)
            _spare_child(job_r, go_r, pipes, scoped)
        self.pid = pid
        os.close(go_r)
        os.close(job_r)
        for _, write_end in pipes:
            os.close(write_end)
        self.fds = [read_end for read_end, _ in pipes]
        self.cgroup: str | None = None
        if cgroup:
            path = os.path.join(cgroup, f"job-{pid}")
            try:
                os.mkdir(path)
                self.cgroup = path
                with open(os.path.join(path, "cgroup.procs"), "w") as handle:
                    handle.write(str(pid))
            except OSError:
                if self.cgroup:
                    empty_cgroup(self.cgroup)
                self.cgroup = None
        os.write(go_w, b"g")
        os.close(go_w)

    def send(self, line: str) -> bool:
        """Hand the child its job (the request's line, as received); False when it is gone."""
        payload = line.encode()
        try:
            while payload:
                payload = payload[os.write(self.job_w, payload):]
        except OSError:
            return False
        finally:
            os.close(self.job_w)  # the child reads to the end: the job is whole, or nothing
            self.job_w = -1
        return True

    def supervise(self, request: dict[str, Any]) -> dict[str, Any]:
        processes = int(request.get("processes", 128))
        if self.cgroup:
            try:
                with open(os.path.join(self.cgroup, "pids.max"), "w") as handle:
                    handle.write(str(processes))
            except OSError:
                pass  # the child is in it already: the server's own cgroup's bound still holds
        return _supervise(self.pid, self.fds, request["wall_s"], request["startup_s"], self.cgroup,
                          hangup_fd=0)  # our stdin: grind's end of it closes when grind dies

    def finish(self) -> None:
        """Kill what is left of the job (or of a spare never used), wait for all of it, free its
        cgroup and close the pipes: nothing of it survives into the next job."""
        import signal

        if self.job_w >= 0:
            os.close(self.job_w)
            self.job_w = -1
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.cgroup:
            empty_cgroup(self.cgroup)
            self.cgroup = None
        reap_children()  # the spare itself included: it is one of the server's children
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


_SERVER_STREAMS: list[Any] = []  # in a job's child: the server's stdio objects, never collected there


def _spare_child(job_r: int, go_r: int, pipes: list[tuple[int, int]], scoped: bool) -> None:
    """The forked child: wait for the cgroup, take a session and the output pipes, shield the
    server if Landlock will not, then wait for the job and run it. Never returns."""
    import resource

    die_with_parent()
    for read_end, _ in pipes:
        os.close(read_end)
    os.read(go_r, 1)  # wait until the server has put us in the cgroup
    os.close(go_r)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # until the job names its own streams (take_streams)
        os.dup2(null, fd)
    if not scoped:
        shield_parent()
    chunks = []
    while True:
        chunk = os.read(job_r, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(job_r)
    if not chunks:
        os._exit(0)  # not used: the server closed the pipe without a job
    request = json.loads(b"".join(chunks))
    os.chdir(request["job"]["out_dir"])
    take_streams(request["job"])
    job_stdio()
    for name, value in request["rlimits"]:
        try:
            resource.setrlimit(getattr(resource, name), tuple(value))
        except (ValueError, OSError, AttributeError):
            pass
    confine(request["job"].get("confine"))
    control = os.fdopen(pipes[0][1], "w", buffering=1)
    try:
        execute(request["job"], control)
    except BaseException:  # noqa: BLE001 - never return into the server loop
        traceback.print_exc()
    os._exit(70)


def job_stdio() -> None:
    """The job's sys.stdin, sys.stdout and sys.stderr, made once fds 1 and 2 are its FIFOs
    (take_streams). Made earlier, over /dev/null, a stream took its file for a seekable one
    (and keeps that answer), and a submission wrapping sys.stdout.buffer in a TextIOWrapper of
    its own, which asks a seekable file its position, crashed with "Illegal seek" warm, never
    cold."""
    # As a fresh interpreter sets them up (the server started like a cold child, with the same
    # environment), so that a submission behaves warm exactly as cold:
    # - stdout surrogateescape'd under C.UTF-8 and block-buffered on a pipe, stderr
    #   backslashreplace'd and line-buffered: opened strictly, a correct answer that printed a
    #   file name holding a lone surrogate passed cold and failed warm (UnicodeEncodeError);
    # - sys.__stdout__ and friends are the same objects: left as the server's, a submission that
    #   replaced sys.stdout (a TextIOWrapper over its buffer, a StringIO put back from
    #   sys.__stdout__) dropped the last reference to the job's own stream, whose collection
    #   closed fd 1 under it, and a correct answer crashed warm.
    # The server's own stream objects wrap fds 0-2 as well: kept alive here, since collecting
    # one in the child would close its fd; and the job's streams leave their fds open when
    # collected (closefd=False), whatever a submission does with its references to them.
    _SERVER_STREAMS.extend((sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__))
    sys.stdin = sys.__stdin__ = open(os.devnull)
    sys.stdout = sys.__stdout__ = os.fdopen(1, "w", encoding=sys.stdout.encoding, errors=sys.stdout.errors,
                                            closefd=False)
    sys.stderr = sys.__stderr__ = os.fdopen(2, "w", buffering=1, encoding=sys.stderr.encoding,
                                            errors=sys.stderr.errors, closefd=False)


def take_streams(job: dict[str, Any]) -> None:
    """Make the job's FIFOs (made by grind in the job's folder, read by grind) this process's
    stdout and stderr, then remove their names.

    Why not pipes to the server, as before: the server collected each job's output to cap it and
    put it in its reply, and the next job, a fork of the server, found those bytes in its freed
    memory (a classmate's prints, in ``grind grade``). Through a FIFO the bytes go from the
    job's process to grind's; the server never reads one. Opened without blocking (grind holds
    the reading end before it sends the job; a missing reader is ENXIO, never a hang), then made
    blocking, as a pipe is: a flood waits for grind to drain it, and the wall clock ends it."""
    import fcntl

    for fd, key in ((1, "stdout_fifo"), (2, "stderr_fifo")):
        path = job.get(key)
        if not isinstance(path, str):
            continue
        try:
            stream = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # grind is gone: the output goes nowhere, as nobody would read it
        fcntl.fcntl(stream, fcntl.F_SETFL, fcntl.fcntl(stream, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        os.dup2(stream, fd)  # dup2 clears close-on-exec: a subprocess inherits it, as in a cold run
        os.close(stream)
        try:
            os.unlink(path)
        except OSError:
            pass


# Trusted sources (an exercise's checks, the author kit) compiled by the warm server, which its
# forks inherit: a job then execs them instead of compiling them again (about 10 ms of a re-grade
# of clipping). Keyed by the whole text and filename, so a source is only ever matched by itself.
_COMPILED: dict[tuple[str, str], types.CodeType] = {}
_COMPILED_CAP = 64


def precompile(job: dict[str, Any]) -> None:
    """In the warm server, after a job: compile its checks and kit for the jobs that follow (a
    learner's source is never compiled here: compile() of hostile text can exhaust the server)."""
    sources = [(str(job.get("checks_filename", "")), job.get("checks_source"))]
    kit = job.get("kit")
    if isinstance(kit, dict):
        sources += [tuple(entry) for entry in kit.values() if isinstance(entry, list) and len(entry) == 2]
    for filename, source in sources:
        if not isinstance(source, str) or not isinstance(filename, str) or (filename, source) in _COMPILED:
            continue
        if len(_COMPILED) >= _COMPILED_CAP:
            _COMPILED.clear()
        try:
            _COMPILED[(filename, source)] = compile(source, filename, "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # the job compiles it itself and reports the author's mistake


def compile_trusted(source: str, filename: str) -> types.CodeType:
    """The code of a trusted source: the warm server's copy when it has one."""
    code = _COMPILED.get((filename, source))
    return code if code is not None else compile(source, filename, "exec")


def _supervise(pid: int, fds: list[int], wall_s: float, startup_s: float,
               job_cgroup: str | None, hangup_fd: int | None = None) -> dict[str, Any]:
    """Drain the job's control pipe while waiting for it; kill its group at the deadline (wall_s
    after its "ready", startup_s before); return the reply.

    The job's stdout and stderr are not here: they go to grind through FIFOs (take_streams), so
    the server, whose memory the next job's fork copies, never holds a byte of what a job printed.
    Control lines are read in small pieces and only "ready", "case NAME" and "done" are kept.

    A job that says "done" (the runner's last line, after its result is written and its output
    flushed) is answered at once: its processes get SIGKILL, what it printed is already in the
    FIFOs, and the caller waits for it to be gone only after the reply is out (a forked torch
    process takes 10-30 ms to tear down). A submission that says "done" early only cuts its own
    run short: its result is missing or its own. Any other end (exit, crash, timeout) is
    answered after everything the job left has been reaped.

    ``hangup_fd`` (the warm server's stdin, whose only write end grind holds): when it hangs up,
    grind is gone, nobody will read the reply, and the job and this server end at once."""
    import select
    import selectors
    import signal

    started = time.monotonic()
    ready_at: float | None = None
    done = False
    timed_out = False
    status: int | None = None
    control = b""
    last_case: str | None = None
    selector = selectors.DefaultSelector()
    for fd in fds:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)

    def drain(timeout: float) -> int:
        nonlocal control, ready_at, last_case, done
        events = selector.select(timeout)
        for key, _ in events:
            try:
                chunk = os.read(key.fd, 4096)
            except BlockingIOError:
                continue
            if not chunk:
                selector.unregister(key.fd)
                continue
            *lines, control = (control + chunk).split(b"\n")
            control = control[-512:]
            for raw in lines:
                if raw.startswith(b"ready") and ready_at is None:
                    ready_at = time.monotonic()
                elif raw.startswith(b"case "):
                    last_case = raw[5:].strip()[:200].decode("utf-8", "replace")
                elif raw == b"done" and ready_at is not None:
                    done = True
        return len(events)

    # Registered with no events: poll() then reports only POLLHUP/POLLERR, which a pipe's read
    # end gets once every write end is closed. It never reads, so the server's buffered stdin
    # (the next job's line) is left alone.
    hangup = None
    if hangup_fd is not None:
        hangup = select.poll()
        hangup.register(hangup_fd, 0)
    orphaned = False
    while status is None and not done:
        if hangup is not None and hangup.poll(0):
            orphaned = True
            break
        reaped, code = os.waitpid(pid, os.WNOHANG)
        if reaped:
            status = code
            break
        now = time.monotonic()
        deadline = ready_at + wall_s if ready_at is not None else started + startup_s
        if now >= deadline:
            timed_out = True
            break
        drain(min(0.02, max(deadline - now, 0.001)) if selector.get_map() else 0)
        if not selector.get_map():
            time.sleep(0.005)
    try:
        os.killpg(pid, signal.SIGKILL)  # the job's session, then anything that left it
    except (ProcessLookupError, PermissionError):
        pass
    if orphaned:  # grind died mid-job: take the job and everything it started down, then go
        if job_cgroup:
            empty_cgroup(job_cgroup)
        reap_children()
        os._exit(0)
    if done:
        if job_cgroup:
            kill_cgroup(job_cgroup)
        status = 0
    else:
        if job_cgroup:
            empty_cgroup(job_cgroup)
        reap_children()
        if status is None:
            status = 9  # killed at the deadline (reaped above)
        end = time.monotonic() + 0.2  # control lines still in the pipe (the last case's name)
        while selector.get_map() and time.monotonic() < end:
            drain(0.01)
    selector.close()
    return {"exit": os.waitstatus_to_exitcode(status), "timed_out": timed_out, "ready": ready_at is not None,
            "last_case": last_case}


def kill_cgroup(path: str) -> None:
    """SIGKILL every process in a pids cgroup, once, without waiting (see empty_cgroup)."""
    import signal

    try:
        with open(os.path.join(path, "cgroup.procs")) as handle:
            pids = [int(p) for p in handle.read().split()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def empty_cgroup(path: str) -> None:
    """SIGKILL every process in a pids cgroup and in the cgroups below it (a warm server's jobs,
    its waiting spare's among them) until it is empty, then remove it, the ones below first."""
    try:
        below = [entry.path for entry in os.scandir(path) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        below = []
    for child in below:
        empty_cgroup(child)
    for _ in range(200):
        if not os.path.isdir(path):
            return
        kill_cgroup(path)
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.01)


class _NoJudgeImports:
    """A meta-path finder refusing ``judge`` and ``solutions``: an editable install puts the
    repository on sys.path, which would make ``from solutions.clipping.reference import ...``
    work. Nothing in the child needs either (sources arrive on stdin)."""

    BLOCKED = ("judge", "solutions")

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".", 1)[0] in self.BLOCKED:
            raise ImportError(f"{name} cannot be imported from a submission")
        return None


def seal_imports() -> None:
    sys.path[:] = [p for p in sys.path if not os.path.isdir(os.path.join(p or ".", "solutions"))]
    for name in [m for m in sys.modules if m.split(".", 1)[0] in _NoJudgeImports.BLOCKED]:
        del sys.modules[name]
    sys.meta_path.insert(0, _NoJudgeImports())


class _Kit:
    """A meta-path finder serving the author kit, shipped in the job as text, as the package
    ``grind_kit``: ``{"grind_kit": [filename, source], "grind_kit.optim": [...], ...}``. The
    checks and pitfalls import it. A learner's file may import it too: it is trusted code that
    holds no exercise's answer (validate refuses a kit defining an entry point), and what a
    learner patches in it only changes the learner's own observations."""

    def __init__(self, modules: dict[str, list[str]]) -> None:
        self.modules = modules

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in self.modules:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(name, self, origin=self.modules[name][0],
                                               is_package="." not in name)

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        import linecache

        filename, source = self.modules[module.__name__]
        module.__file__ = filename
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show lines
        exec(compile_trusted(source, filename), module.__dict__)


def install_kit(modules: dict[str, list[str]] | None) -> None:
    if modules:
        sys.meta_path.insert(0, _Kit(modules))


class _Run:
    """What the steps of one job share. numpy and torch come in as arguments because this module
    imports neither at load time (they are imported in :func:`execute`, under the limits)."""

    def __init__(self, job: dict[str, Any], control: Any, np: Any, torch: Any) -> None:
        self.job = job
        self.control = control  # the parent's control pipe ("ready", "case ..."), or None
        self.np, self.torch = np, torch
        self.entry: list[str] = job["entry"]
        self.checks: Any = None
        self.instances: list[dict[str, Any]] = []
        self.guards: Any = None  # learner runs only
        self.integrity: Any = None  # marks runs only: integrity.Record
        self.observed: dict[str, Any] = {}  # observation name -> numpy array
        self.result = _protocol.Result(token="", observations_sha256="")
        self.distributed_cases = 0  # numbers each distributed case's rendezvous file
        self.rank_pools: dict[tuple[str, int], Any] = {}  # (subject, world size) -> its kept ranks

    def say(self, line: str) -> None:
        if self.control:
            self.control.write(line + "\n")

    def hits(self) -> list[Any]:
        """The forbidden calls so far (learner runs), as the protocol records them."""
        if self.guards is None:
            return []
        return [_protocol.ForbiddenHit(str(h["api"]), h["line"]) for h in self.guards.hits]

    def check_transition(self) -> None:
        """Marks runs, each time control comes back from the learner's code: the names written
        meanwhile (judge/worker/integrity.py), cheap enough for every call."""
        if self.integrity is not None and self.guards is not None:
            self._record_breaches(self.integrity.transition())

    def check_integrity(self) -> list[dict[str, Any]]:
        """Marks runs: a library function the judge's code uses that the learner replaced, or a
        learner thread still running (judge/worker/integrity.py), each as a forbidden record,
        also kept with the guards' hits so that the subject's record carries it."""
        if self.integrity is None:
            return []
        return self._record_breaches(self.integrity.breaches())

    def _record_breaches(self, breaches: list[str]) -> list[dict[str, Any]]:
        """Breaches as forbidden records, kept with the guards' hits (once each)."""
        found = [{"api": _integrity.describe(b), "line": None} for b in breaches]
        if self.guards is not None:
            self.guards.hits.extend(h for h in found if h not in self.guards.hits)
        return found


def _error(exc: BaseException, filename: str) -> Any:
    return _protocol.ErrorInfo(**describe_exception(exc, filename))


def load_checks(run: _Run) -> None:
    """The cases, one instance per (case, size, seed). The checks module may warm up what its cases
    need (building a torch optimizer imports torch._dynamo, over a second): this runs before
    "ready", outside the learner's clock."""
    filename = run.job["checks_filename"]
    try:
        run.checks = load_source(run.job["checks_source"], filename, "grind_checks")
        cases = list(run.checks.CASES)
    except Exception as exc:  # noqa: BLE001 - the author's file: say where, in one line
        raise authoring_error(exc, filename, "loading the checks") from None
    check_cases(cases, filename)
    run.instances = expand_cases(cases, run.job.get("seeds"))
    if any(case.get("world_size") for case in cases):
        # Before "ready" and before any subject loads: the imports every rank would pay for, and
        # the collectives wrapped so each rank can say where it waits (see ranks.py).
        import torch._dynamo  # noqa: F401 - DDP's constructor imports it: about 3 s in every rank otherwise
        import torch.distributed  # noqa: F401
        import torch.nn.parallel  # noqa: F401

        _ranks.install_tracer(run.torch)


class AuthoringError(Exception):
    """A mistake in the exercise's own trusted files: one line for the author, naming the file."""


def authoring_error(exc: BaseException, filename: str, doing: str) -> AuthoringError:
    """``file:line: what went wrong`` for an exception raised by an exercise's own file."""
    if isinstance(exc, SyntaxError):
        return AuthoringError(f"{exc.filename or filename}:{exc.lineno}: syntax error: {exc.msg}; fix that line")
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    where = f"{filename}:{lines[-1]}" if lines else filename
    return AuthoringError(f"{where}: {doing} raised {type(exc).__name__}: {exc}")


def check_cases(cases: list[Any], filename: str) -> None:
    """Each case a dict with a unique name and a known kind: duplicates would merge, and an
    unknown kind ("egde") would be shown to learners."""
    seen: set[str] = set()
    for index, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("name"), str) or not case["name"]:
            raise AuthoringError(f"{filename}: CASES[{index}] needs a 'name' (a non-empty string)")
        name, kind = case["name"], case.get("kind", "edge")
        if kind not in _protocol.CASE_KINDS:
            raise AuthoringError(f"{filename}: case '{name}' has kind {kind!r}; use one of "
                                 f"{', '.join(_protocol.CASE_KINDS)}")
        if name in seen:
            raise AuthoringError(f"{filename}: two cases are named '{name}'; give each case in CASES its own name")
        seen.add(name)


def check_pitfalls(pitfalls: list[Any], filename: str) -> None:
    """Each pitfall a dict with every key the judge reads, and its own slug."""
    seen: set[str] = set()
    for index, pitfall in enumerate(pitfalls):
        if not isinstance(pitfall, dict):
            raise AuthoringError(f"{filename}: PITFALLS[{index}] must be a dict with keys "
                                 f"{', '.join(_protocol.PITFALL_KEYS)}")
        label = pitfall.get("slug") or pitfall.get("name") or "unnamed"
        for key in _protocol.PITFALL_KEYS:
            if key not in pitfall:
                raise AuthoringError(f"{filename}: PITFALLS[{index}] ({label!r}) is missing key '{key}'; add it "
                                     "to that entry of PITFALLS")
        if pitfall["slug"] in seen:
            raise AuthoringError(f"{filename}: two pitfalls have slug {pitfall['slug']!r}; give each its own slug")
        seen.add(pitfall["slug"])


def list_subjects(run: _Run) -> list[tuple[str, dict[str, Any]]]:
    """(subject id, spec) in run order. A pitfalls bundle is trusted code: it is loaded here and
    becomes one subject per pitfall, whose description (every field PitfallMeta has) goes into
    the result."""
    import dataclasses

    subjects: list[tuple[str, dict[str, Any]]] = []
    for spec in run.job["subjects"]:
        if spec["kind"] != "pitfalls":
            subjects.append((spec["id"], spec))
            continue
        try:
            bundle = load_source(spec["source"], spec["path"], "grind_pitfalls")
            check_pitfalls(list(bundle.PITFALLS), spec["path"])
        except AuthoringError:
            raise
        except Exception as exc:  # noqa: BLE001 - the author's file: say where, in one line
            raise authoring_error(exc, spec["path"], "loading the pitfalls") from None
        described = [f.name for f in dataclasses.fields(_protocol.PitfallMeta)]
        pairs = run.job.get("combinations")  # None: the single pitfalls; a list: only these pairs
        for pitfall in bundle.PITFALLS:
            run.result.pitfalls.append(_protocol.PitfallMeta(**{k: pitfall[k] for k in described if k in pitfall}))
            if pairs is None:
                subjects.append((_protocol.pitfall_subject(pitfall["slug"]),
                                 {"kind": "impl", "impl": pitfall["impl"], "path": spec["path"]}))
        if pairs is not None:
            subjects += pitfall_combinations(bundle, spec["path"], pairs)
    return subjects


def _unlink(path: str | None) -> None:
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


def start_guards(run: _Run) -> None:
    """Learner runs: the "from memory" guards, and a dump of every thread's stack just before the
    parent's deadline, so that a timeout can still point at the learner's line."""
    if not run.job.get("guard"):
        return
    run.guards = Guards(run.job["subjects"][0].get("path", ""))
    run.guards.install(run.job.get("forbidden", []))
    if run.job.get("marked"):  # the implementations themselves, absent (judge/worker/poison.py)
        _poison.install(run.job.get("forbidden", []), run.checks, run.torch, _guards)
        _ranks.POISONED = (_poison.STATUS_BASE, _poison.STATUS_BASE + _poison.STATUS_COUNT)
    dump = open(os.path.join(run.job["out_dir"], "timeout_trace.txt"), "w")
    faulthandler.dump_traceback_later(max(run.job["time_limit"] - 0.3, 0.1), file=dump)


def load_subject(run: _Run, spec: dict[str, Any], module_name: str) -> tuple[Any, Any]:
    """(the entry points as the case code will see them, None), or (None, why there are none).
    Whatever the learner's file raises propagates: the caller records it as a load error.

    A learner's file is loaded as a learner call (anything it does at import is watched), its
    entry points are checked by identity, and the case code gets them wrapped, so that the
    guards know when a call on the learner's behalf is in progress."""
    if spec["kind"] == "impl":
        return subject_namespace(spec["impl"], run.entry), None
    from contextlib import nullcontext

    guards = run.guards
    source = spec["source"] if "source" in spec else _read_staged(spec["source_file"])
    with guards.learner() if guards else nullcontext():
        module = load_source(source, spec.get("path", ""), module_name, guards)
        run.check_transition()  # marks: what the file's own top level changed
        if guards:
            guards.check_exports(module, run.entry, source)
            if guards.hits:
                raise ForbiddenAPI(guards.hits[0]["api"])
        missing = [name for name in run.entry if not hasattr(module, name)]
        if missing:
            return None, _protocol.ErrorInfo("MissingDefinition", f"the file does not define {', '.join(missing)}")
        subject = subject_namespace(module, run.entry)
        if guards:
            subject = types.SimpleNamespace(**{name: guards.entry_point(getattr(subject, name)) for name in run.entry})
    return subject, None


def _read_staged(path: str) -> str:
    """A subject's source, staged by grind as a file of this job's folder (see sandbox.stage_job):
    read once, then deleted."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    _unlink(path)
    return text


def reseed(torch: Any) -> None:
    """What ``torch.manual_seed(0)`` does for this process, at the cost of the CPU generator's
    reset: execute() calls torch.manual_seed(0) once, which also queues the accelerators' seeds
    until one is initialised (torch records the caller's whole stack each time it queues one:
    a few milliseconds, with the guard's profile hook running, per case instance). Each
    instance then resets the CPU generator, and CUDA's too if something initialised it."""
    torch.random.default_generator.manual_seed(0)
    if torch.cuda.is_initialized():
        torch.cuda.manual_seed_all(0)


def observe_case(run: _Run, subject_id: str, subject: Any, instance: dict[str, Any], filename: str,
                 record_input: bool) -> Any:
    """Run one case instance on one subject and keep what it observed, as plain arrays. Whatever
    the subject does (raise, return non-data) becomes the case's record."""
    np, torch = run.np, run.torch
    name, case = instance["name"], instance["case"]
    run.say(f"case {subject_id} {name}")
    reseed(torch)
    inputs = case["inputs"](**instance["params"]) if "inputs" in case else {}
    if record_input:
        run.result.instances.append(_protocol.Instance(
            name, case["name"], case.get("kind", "edge"), instance["params"], preview(inputs, np, torch),
            case.get("shown"), rank_entries(case, entries_of(case, inputs))))
    if case.get("world_size"):
        return observe_ranks(run, subject_id, subject, name, case, filename)
    try:
        raw = case["call"](subject, **inputs)
        if type(raw) is not dict:
            raise BadOutput("the case did not produce observations")
        for key, value in raw.items():
            try:
                run.observed[_protocol.obs_name(subject_id, name, key)] = to_array(value, np, torch)
            except BadOutput as exc:
                raise BadOutput(f"{key}: {exc}") from None
    except BadOutput as exc:
        return _protocol.CaseRecord("bad_output", message=str(exc))
    except BaseException as exc:  # noqa: BLE001 - a learner's exception is data
        return _protocol.CaseRecord("error", error=_error(exc, filename))
    return _protocol.CaseRecord("ok", keys=[str(k) for k in raw])


def rank_entries(case: dict[str, Any], entries: Any) -> Any:
    """A distributed case's observations are named per rank ("rank 1: grads"): so are its entries."""
    if not entries or not case.get("world_size"):
        return entries
    return {f"rank {r}: {key}": pieces for r in range(int(case["world_size"])) for key, pieces in entries.items()}


def _rank_body(run: _Run, subject: Any, filename: str) -> Any:
    """What a rank of a subject's pool does with one case: make the instance's inputs as the
    child made them (the same seed, the same factory), call the case, and write its observations
    as a safetensors file named by the command."""
    np, torch = run.np, run.torch
    from safetensors.numpy import save_file

    instances = {instance["name"]: instance for instance in run.instances}

    def body(rank: int, command: dict[str, Any]) -> dict[str, Any]:
        instance = instances[command["name"]]
        case = instance["case"]
        try:
            reseed(torch)
            inputs = case["inputs"](**instance["params"]) if "inputs" in case else {}
            raw = case["call"](subject, **inputs)
            if type(raw) is not dict:
                raise BadOutput("the case did not produce observations")
            arrays = {}
            for key, value in raw.items():
                try:
                    arrays[str(key)] = np.ascontiguousarray(to_array(value, np, torch))
                except BadOutput as exc:
                    raise BadOutput(f"{key}: {exc}") from None
            breaches = run.check_integrity()  # before the observations leave this rank
            if not breaches:
                save_file(arrays, f"{command['base']}-rank{rank}.safetensors")
            record: dict[str, Any] = {"status": "ok", "keys": list(arrays)}
        except BadOutput as exc:
            record = {"status": "bad_output", "message": str(exc)}
        except BaseException as exc:  # noqa: BLE001 - a learner's exception is data
            record = {"status": "error", "error": describe_exception(exc, filename)}
        run.check_integrity()
        record["forbidden"] = list(run.guards.hits) if run.guards else []
        return record

    return body


def close_rank_pools(run: _Run, subject_id: str | None = None) -> None:
    """Kill the ranks kept for ``subject_id`` (every subject's when None)."""
    for key in [k for k in run.rank_pools if subject_id is None or k[0] == subject_id]:
        run.rank_pools.pop(key).close()


def observe_ranks(run: _Run, subject_id: str, subject: Any, name: str, case: dict[str, Any], filename: str) -> Any:
    """One distributed case (see ranks.py): the case's call on every rank of the subject's rank
    pool (made at its first distributed case, kept for the next ones), each rank's observations
    kept as "rank r: key". A rank that raised makes the case's error (the lowest such rank, named);
    a rank that died or ranks that deadlocked make an error saying where every rank was."""
    from safetensors.numpy import load_file

    torch = run.torch
    world = int(case["world_size"])
    run.distributed_cases += 1
    base = os.path.join(run.job["out_dir"], f"ranks-{run.distributed_cases}")
    pool = run.rank_pools.get((subject_id, world))
    if pool is None or not pool.healthy():
        pool = _ranks.RankPool(torch.distributed, world, base + ".store", _rank_body(run, subject, filename))
        run.rank_pools[(subject_id, world)] = pool
    outcome = pool.run({"name": name, "base": base})
    records = outcome.get("ranks") or outcome.get("records") or {}
    if isinstance(records, list):
        records = dict(enumerate(records))
    for record in records.values():
        if run.guards:
            run.guards.hits.extend(h for h in record.get("forbidden", []) if h not in run.guards.hits)
    failure = outcome.get("failure")
    raised = [r for r in sorted(records) if records[r]["status"] == "error"]
    if failure and failure["type"] == "deadlock":
        # A rank's own exception explains a deadlock better than the deadlock does; gloo's timeout
        # or a reset connection on a rank is only its consequence.
        raised = [r for r in raised if "gloo" not in str(records[r]["error"].get("message", ""))]
    if raised and (not failure or failure["type"] == "deadlock"):
        error = dict(records[raised[0]]["error"])
        error["message"] = f"rank {raised[0]}: {error['message']}"
        if failure:
            error["message"] += f" ({failure['type']}: {failure['message']})"
        return _protocol.CaseRecord("error", error=_protocol.ErrorInfo(**error))
    if failure:
        return _protocol.CaseRecord("error", error=_protocol.ErrorInfo(str(failure["type"]), str(failure["message"])))
    for rank in sorted(records):
        if records[rank]["status"] != "ok":
            return _protocol.CaseRecord("bad_output", message=f"rank {rank}: {records[rank].get('message', '')}")
    keys = []
    for rank in sorted(records):
        path = f"{base}-rank{rank}.safetensors"
        try:
            arrays = load_file(path)
        except Exception:  # noqa: BLE001 - the rank's file is the learner's bytes
            return _protocol.CaseRecord("bad_output", message=f"rank {rank}: its observations could not be read")
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        if sorted(arrays) != sorted(records[rank]["keys"]):
            return _protocol.CaseRecord("bad_output", message=f"rank {rank}: its observations do not match its record")
        for key in records[rank]["keys"]:
            run.observed[_protocol.obs_name(subject_id, name, f"rank {rank}: {key}")] = arrays[key]
            keys.append(f"rank {rank}: {key}")
    return _protocol.CaseRecord("ok", keys=keys)


def run_subject(run: _Run, subject_id: str, spec: dict[str, Any], record_inputs: bool) -> Any:
    """Load one subject and run it over every instance; returns its entry points (None if it
    did not load). Its record is in the result from the start, so a crash leaves no doubt."""
    record = run.result.subjects[subject_id] = _protocol.SubjectRecord()
    started = time.perf_counter()
    filename = spec.get("path", "")
    try:
        subject, record.load_error = load_subject(run, spec, f"grind_subject_{len(run.result.subjects)}")
    except BaseException as exc:  # noqa: BLE001 - anything the learner's import does is data
        record.load_error = _error(exc, filename)
        record.forbidden = run.hits()
        return None
    if record.load_error is not None:
        return None
    # A trusted subject (the reference, a pitfall) is measured here, by the judge's own code: no
    # learner code runs in a trusted job. A learner's figures come from the witness outside.
    witness = run.job.get("witness") if not run.job.get("guard") else None
    before = _witness.sample() if isinstance(witness, dict) else None
    try:
        for instance in run.instances:
            record.cases[instance["name"]] = observe_case(run, subject_id, subject, instance, filename, record_inputs)
    finally:
        close_rank_pools(run, subject_id)  # its ranks reaped: their writes are folded into ours
    if before is not None:
        record_witnessed(run, subject_id, str(witness.get("case")), _witness.since(before))
    run.check_integrity()  # marks: once per subject (every case would cost 0.03 s each, on the clock)
    record.forbidden = run.hits()
    record.elapsed_s = time.perf_counter() - started
    return subject


def record_witnessed(run: _Run, subject_id: str, case_name: str, figures: dict[str, Any]) -> None:
    """A trusted subject's traffic and writes, kept as observations of the exercise's witnessed
    case (``WITNESSED`` keys): the parent turns them into "x the reference's" figures."""
    np = run.np
    record = run.result.subjects[subject_id]
    for instance in run.instances:
        case = record.cases.get(instance["name"])
        if instance["case"].get("name") != case_name or case is None or case.status != "ok":
            continue
        for counter, value in figures.items():
            if isinstance(value, int):
                key = _protocol.WITNESSED + counter
                run.observed[_protocol.obs_name(subject_id, instance["name"], key)] = np.array(value, dtype=np.int64)
                case.keys.append(key)


SPEED_BUDGET_S = 1.0  # a learner's timed call stopped here is "more than N x slower", never a timeout


def time_speed(run: _Run, subject_id: str, subject: Any, speed_case: dict[str, Any]) -> None:
    """Speed runs: the first subject, if it passed every case to the end, timed on the SPEED
    case. In a trusted job that subject is the reference, timed once with the observations the
    cache keeps (so a learner's job never carries the reference, not even to time it); in a
    learner's job it is the learner, with a budget per call, so a very slow answer cannot turn a
    pass into a timeout. The parent puts the two times side by side (judge.speed)."""
    record = run.result.subjects[subject_id]
    if subject is None or record.load_error is not None or any(c.status != "ok" for c in record.cases.values()):
        return
    name = speed_case.get("name", "a larger input")
    if run.job.get("guard"):
        run.result.speed = _protocol.SpeedSample(0.0, SPEED_BUDGET_S, time_call(speed_case, subject, SPEED_BUDGET_S),
                                                 name)
    else:
        seconds = time_call(speed_case, subject, None)
        if seconds is not None:
            run.result.speed = _protocol.SpeedSample(seconds, 0.0, None, name)


def write_result(run: _Run, token: str, save_file: Any) -> None:
    """observations.safetensors, then result.json carrying the run's token and the observations'
    hash. O_EXCL: if the submission already created result.json, refuse to write a second one;
    the parent then sees a forged or doubled result and fails the run."""
    out_dir = run.job["out_dir"]
    obs_path = os.path.join(out_dir, "observations.safetensors")
    save_file(run.observed, obs_path)
    with open(obs_path, "rb") as handle:
        run.result.observations_sha256 = hashlib.sha256(handle.read()).hexdigest()
    run.result.token = token
    run.result.torch_version = run.torch.__version__
    fd = os.open(os.path.join(out_dir, "result.json"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(_ENCODE(run.result.to_json()))  # one write: json.dump writes each token apart


def flush_output() -> None:
    """What the submission printed, out before the process leaves with os._exit: through
    whichever streams it left in sys.stdout and sys.stderr and the interpreter's own. A stream it
    closed or detached is its own business: the result is written already, and a correct answer
    that closed sys.stdout is still a correct answer (it crashed on this flush before)."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - closed, detached, or a learner's object that raises
            pass


def execute(job: dict[str, Any], control: Any) -> None:
    """Run every subject of one job through every case and write the observations.

    ``control`` is the parent's control stream (a text stream on a pipe, or None): "ready" once
    the checks are loaded (the learner's clock starts there), then "case <subject> <instance>"
    before each case, so a timeout can name the case it interrupted. The steps: load the checks,
    list the subjects, start the guards (learner runs), run each subject over every instance,
    time the first one (speed runs: the reference in a trusted job, the learner in a learner's),
    write the result and leave without
    running anything the submission may have registered (atexit handlers, threads)."""
    seal_imports()
    install_kit(job.get("kit"))
    token = job.pop("token")  # out of the job before any learner code can look at it

    import numpy as np
    import torch
    from safetensors.numpy import save_file

    torch.set_num_threads(1)
    bind_conversions(np, torch)
    run = _Run(job, control, np, torch)
    try:
        load_checks(run)
        if job.get("marked"):
            # torch._dynamo, imported on first use (an optimizer, DDP), patches torch as it loads
            # (torch.manual_seed wrapped, properties registered): imported before the integrity
            # record, and before "ready", so not on the learner's clock (a warm server imports it
            # once, before it forks the first marks job: see serve).
            import torch._dynamo  # noqa: F401
            if job.get("guard"):
                # The record's walk (0.2-0.4 s) before "ready": not on the learner's clock; it is
                # refreshed once the guards' stand-ins are in place (below).
                run.integrity = _integrity.baseline()
        run.say("ready")
        subjects = list_subjects(run)
    except AuthoringError as exc:
        sys.stderr.write(f"{_protocol.AUTHORING_PREFIX}{exc}\n")
        sys.stderr.flush()
        os._exit(1)
    # Trusted runs check the manifest's forbidden names here, where torch is: a typo guards nothing.
    run.result.unresolved = [d for d in job.get("check_forbidden", []) if _guards._resolve(d) is None]
    speed_case = getattr(run.checks, "SPEED", None) if job.get("time_speed") else None
    torch.manual_seed(0)  # every generator torch has; each case instance then only reseeds (see reseed)
    start_guards(run)
    if run.integrity is not None and run.guards is not None:
        # Taken after the checks wrapped what they watch and before the guards' profile hook
        # (which would see every call of its walk); refreshed now that their stand-ins are in
        # place: all before the learner's file exists in this process. From here every write to
        # a library's attribute is logged, and looked at each time a learner call returns.
        run.integrity.refresh()
        learner_file, guards = str(run.job["subjects"][0].get("path", "")), run.guards

        def is_learner(frame: Any) -> bool:
            return frame.f_code.co_filename == learner_file or guards._learner_frame(frame)

        run.integrity.watch_writes(is_learner)
        guards.before_learner, guards.after_learner = run.integrity.enter, run.check_transition

    first = None
    for index, (subject_id, spec) in enumerate(subjects):
        subject = run_subject(run, subject_id, spec, record_inputs=bool(job.get("record_inputs")) and index == 0)
        first = subject if index == 0 else first

    if run.guards:
        run.guards.stop_watching()  # the learner's speed is timed without the guard's overhead
    if isinstance(speed_case, dict) and subjects:
        time_speed(run, subjects[0][0], first, speed_case)
    if run.guards:
        faulthandler.cancel_dump_traceback_later()
    if run.check_integrity() and subjects:
        run.result.subjects[subjects[0][0]].forbidden = run.hits()
    write_result(run, token, save_file)
    flush_output()
    run.say("done")  # a warm server answers now, without waiting for this process to tear down
    os._exit(0)  # skip atexit handlers and non-daemon threads the submission may have left


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        main()
