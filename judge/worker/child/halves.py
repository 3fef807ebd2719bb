"""A practice job's case instances shared between two processes, so that an exercise whose checks
take a fifth of a second (loss-scaling's 2,100-step run beside its random runs) gives its verdict
in about half that on a machine with two cores.

The parent sends the reference's seconds per instance (``job["costs"]``, measured when the
reference was computed and kept in the cache with its observations). :func:`plan` splits the
instances into two groups of about equal cost (longest first, each to the lighter group: the
same costs give the same split, so a verdict does not depend on the machine's timing).
:func:`observe_halves` forks after the learner's file has loaded; the fork runs the second group
and sends its records, observations and forbidden calls back on a pipe (JSON and safetensors,
nothing unpickled), while this process runs the first. Whatever the fork did not send (it died,
or the learner's code in it ended the process) runs here afterwards, exactly as it would have
without the split, so a crash is still the learner's crash.

One process running every case in order is what a verdict means (a cold run, marks), and the
split must never give another. Every instance starts from the same seed (run.reseed), so only
two things can tell the two apart, and both are checked:

- code that carries state from one case to the next (a module-level counter, a class attribute,
  a mutable default argument): each process fingerprints what the learner's module holds
  (:func:`state_of`) before its first case and after its last, and a change in either marks the
  subject ``carried_state``, whose job grind runs again in one process (judge/pipeline.py). A
  review's answer stopped growing the scale after 2,200 updates in one process: in order it
  failed, split it passed;
- threads the learner's file started at import (a thread pool, OpenMP's workers): a fork has
  none of them, and a correct answer that used its pool hung there. No split then.

Never for marks (a marked run's integrity record is one process's), a witnessed exercise (grind
counts the whole run's writes from outside), distributed cases (their ranks are forks already),
or a machine that gives this process one core.
"""

from __future__ import annotations

import os
import re
import struct
import types
from typing import Any, Callable

from .. import protocol as _protocol
from .values import ENCODE

# Below this many seconds of cases a fork (a few milliseconds) and a merge buy nothing.
WORTH_S = 0.04
# The larger group must be at most this share of the whole, or the split buys too little.
AT_MOST = 0.8
_HEADER = struct.Struct("<QQ")  # the JSON's length, then the observations' length
_CAP = 1 << 30  # more than this back from the fork is not a report: run its part here
_FINGERPRINT_NODES = 20_000  # a module holding more than this is taken as carrying state


def plan(job: dict[str, Any], instances: list[dict[str, Any]], new_threads: int = 0,
         ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(this process's instances, the fork's), each in run order; None when not worth it or not
    safe. ``new_threads``: threads the learner's file started (a fork would have none of them)."""
    costs = job.get("costs")
    if (not isinstance(costs, dict) or not job.get("guard") or job.get("marked") or job.get("witness")
            or new_threads > 0 or len(instances) < 2 or any(i["case"].get("world_size") for i in instances)):
        return None
    seconds = [costs.get(i["name"]) for i in instances]
    if not all(type(s) is float and s >= 0 for s in seconds):
        return None  # costs of another case list (the checks changed): share nothing
    total = sum(s for s in seconds if s is not None)
    if total < WORTH_S or _cores() < 2:
        return None
    loads, groups = [0.0, 0.0], [[], []]  # type: tuple[list[float], list[list[int]]]
    for index in sorted(range(len(instances)), key=lambda i: (-(seconds[i] or 0.0), i)):
        lighter = 0 if loads[0] <= loads[1] else 1
        loads[lighter] += seconds[index] or 0.0
        groups[lighter].append(index)
    if max(loads) > AT_MOST * total:
        return None
    return [instances[i] for i in sorted(groups[0])], [instances[i] for i in sorted(groups[1])]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def thread_count() -> int:
    """This process's threads, C ones included (OpenMP's, faulthandler's watchdog): 1 when it
    cannot be told."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def observe_halves(run: Any, subject_id: str, record: Any, mine: list[dict[str, Any]], theirs: list[dict[str, Any]],
                   observe: Callable[[dict[str, Any]], Any], flush: Callable[[], None],
                   module: types.ModuleType | None = None) -> bool:
    """Fill ``record`` (a SubjectRecord) with every instance of ``mine`` and ``theirs``, the
    latter run in a fork. ``observe(instance)`` runs one and returns its CaseRecord (its
    observations land in ``run.observed``); ``flush`` empties the learner's output buffers, so
    that nothing printed before the fork comes out twice; ``module`` is the learner's file,
    whose state each process fingerprints before and after. False, having run nothing, when that
    state cannot be read (no module, a C object such as an ``lru_cache`` or a ``Generator``)."""
    import time

    state = state_of(module)
    if state is None:
        return False  # what it keeps cannot be read: every case in order, here
    flush()
    read_fd, write_fd = os.pipe()
    before = set(run.observed)
    places = _Places(run, subject_id)
    hits_before = list(run.guards.hits) if run.guards is not None else []
    run.say = places.earliest  # both processes' "case" lines: the earliest case running
    try:
        pid = os.fork()
    except OSError:
        del run.say
        return False
    if pid == 0:  # the fork: run the second group, report it, leave
        os.close(read_fd)
        try:
            _arm_dump(run)
            data = _report(run, theirs, places.watching(observe, 1), before, lambda: state != state_of(module),
                           places)
            places.done(1)  # before the write, which waits until this process reads it
            view = memoryview(data)
            while view:
                view = view[os.write(write_fd, view):]
            os.close(write_fd)
        finally:
            flush()
            os._exit(0)
    os.close(write_fd)
    watched = places.watching(observe, 0)
    for instance in mine:
        started = time.perf_counter()
        record.cases[instance["name"]] = watched(instance)
        record.case_s[instance["name"]] = time.perf_counter() - started
    places.done(0)
    _quiet_dump(run)  # from here this process only waits: a timeout's stack is the fork's
    raw = _read_all(read_fd)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    _rearm_dump(run)
    del run.say  # the class's own again
    carried = _merge(run, record, raw, {i["name"] for i in theirs}, places)
    if run.guards is not None:  # in the order one process meets them: by instance
        merged: list[dict[str, Any]] = []
        for hit in hits_before + [hit for _, hit in sorted(places.hits_at, key=lambda pair: pair[0])]:
            if hit not in merged:  # once each, as the guards keep them (both processes may see one)
                merged.append(hit)
        run.guards.hits[:] = merged
    for instance in theirs:  # what the fork did not report runs here, as it would have unshared
        if instance["name"] not in record.cases:
            started = time.perf_counter()
            record.cases[instance["name"]] = observe(instance)
            record.case_s[instance["name"]] = time.perf_counter() - started
    record.carried_state = carried or state != state_of(module)
    order = [i["name"] for i in run.instances]
    record.cases = {name: record.cases[name] for name in order if name in record.cases}
    return True


# --- What the learner's module keeps between calls --------------------------------------------

_LOADER_NAMES = frozenset({"__name__", "__doc__", "__package__", "__loader__", "__spec__", "__file__", "__cached__",
                           "__builtins__"})
_TYPE_GET = {name: type.__dict__[name].__get__ for name in ("__dict__", "__flags__", "__mro__")}
_CLASS_DICT = _TYPE_GET["__dict__"]


def state_of(module: types.ModuleType | None) -> Any:
    """A fingerprint of what the learner's file can keep from one case to the next, read
    without running any of its code (types are taken from ``type()``, attributes through
    ``type``'s and the built-in containers' own C methods): its module's names, the classes and
    functions it defines (attributes, slots, defaults, closures, names and docs), what those
    hold a dozen levels deep (containers, an object's dict and slots, a tensor's version, grad
    and values, an array's bytes), the library classes it names (one level), and the few
    process-wide places a counter could hide (``builtins``, non-module entries of
    ``sys.modules``, the environment). None when there is no module, it holds more than can be
    looked at cheaply, or it holds a C object whose state cannot be read (an ``lru_cache``, a
    ``torch.Generator``): such a file is not split. Not seen: a library module's own names (a
    counter set on ``torch``), the global random generators, memory reached through ``ctypes``,
    files. A best effort against state kept by mistake: code that means to tell the two
    processes apart can (its process tree in ``/proc``), which only its own practice verdict
    suffers; marks never split."""
    import builtins
    import sys

    if module is None:
        return None
    try:
        namespace = object.__getattribute__(module, "__dict__")
    except AttributeError:
        return None
    if type(namespace) is not dict:
        return None
    name = namespace.get("__name__")
    walk = _Walk(name if type(name) is str else "")
    try:
        own = walk.pairs([(k, v) for k, v in list(namespace.items()) if k not in _LOADER_NAMES], 0)
        # libraries' places, read leniently (a library's own object there is no reason not to split)
        places = (tuple((str(k), _shallow(v)) for k, v in list(vars(builtins).items())),
                  tuple(sorted(((str(k), _shallow(v)) for k, v in list(sys.modules.items())
                                if not issubclass(type(v), types.ModuleType)), key=repr)),
                  tuple(sorted(os.environ.items())))
        return own, places
    except Exception:  # noqa: BLE001 - too much, a C object's hidden state, a learner object that refused
        return None


class _TooMuch(Exception):
    pass


# Classes made in C name their methods with C descriptors (a slot wrapper, a method descriptor); a
# class statement never does. Such a class's instances may keep state in C (an lru_cache's
# cache), unless the C class is one whose contents are read here or cannot change.
_C_PARTS = (types.WrapperDescriptorType, types.MethodDescriptorType, types.ClassMethodDescriptorType)
_PLAIN_BASES = frozenset({object, dict, list, set, frozenset, tuple, int, float, str, bytes, bool, complex})


def _python_made(kind: type) -> bool:
    """Whether every class ``kind`` inherits from, but the plain built-in ones, was made by a
    class statement: then an instance keeps its state in its dict, its slots and (for a dict,
    list or set subclass) its contents, all of which are read here."""
    for cls in _TYPE_GET["__mro__"](kind):
        if cls in _PLAIN_BASES:
            continue
        if not _TYPE_GET["__flags__"](cls) & (1 << 9):  # not a heap type: a static C type
            return False
        if any(type(v) in _C_PARTS for v in list(_CLASS_DICT(cls).values())):
            return False
    return True


class _Opaque(Exception):
    """An object whose state cannot be read without running its code: no split for this file."""


# C objects that keep no state of their own: builtins and the descriptors a class holds
_STATELESS = frozenset({types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodDescriptorType,
                        types.ClassMethodDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType,
                        type(Ellipsis), type(NotImplemented), range, slice, type(re.compile("")),
                        types.GenericAlias, types.UnionType})
_TYPING_MODULES = frozenset({"typing", "collections.abc", "_collections_abc"})  # annotations' objects


def _immutable_torch(value: Any) -> bool:
    """torch's dtypes, devices and layouts (module-level constants in many answers): immutable."""
    import sys

    torch = sys.modules.get("torch")
    return torch is not None and type(value) in (torch.dtype, torch.device, torch.layout, torch.memory_format)


def _number(value: Any) -> Any:
    """A plain value as it is: a float by its bits (0.0 and -0.0 differ, a NaN is itself)."""
    kind = type(value)
    if kind is float:
        return ("float", float.hex(value))
    return (kind.__name__, value)


def _shallow(value: Any, depth: int = 0) -> Any:
    """A library's value (a class attribute, a builtin): plain values and the plain containers
    they sit in, a few levels; anything else by identity (its state is the library's)."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str, bytes, complex):
        return _number(value)
    if depth < 4 and kind in (list, tuple, set, frozenset, dict):
        items = list(value.items()) if kind is dict else list(value)
        if len(items) <= 256:
            inner = [(_shallow(k, depth + 1), _shallow(v, depth + 1)) if kind is dict else _shallow(k, depth + 1)
                     for k, v in (items if kind is dict else [(item, None) for item in items])]
            return (kind.__name__, id(value), tuple(sorted(inner, key=repr)) if kind in (set, frozenset) else tuple(inner))
    return ("id", id(value))


class _Walk:
    def __init__(self, module_name: str) -> None:
        self.module_name, self.nodes, self.seen = module_name, 0, {}  # type: str, int, dict[int, int]

    def _contents(self, value: Any, depth: int) -> Any:
        contents = _contents_of(value)
        return None if contents is None else tuple(self.value(item, depth) for item in contents)

    def pairs(self, items: list[tuple[Any, Any]], depth: int) -> Any:
        """A mapping's items, keys walked too, in an order that does not depend on insertion."""
        walked = [(self.value(k, depth), self.value(v, depth)) for k, v in items]
        return tuple(sorted(walked, key=repr))

    def value(self, value: Any, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > _FINGERPRINT_NODES:
            raise _TooMuch
        kind = type(value)
        if value is None or kind in (bool, int, str, bytes, complex, float):
            return _number(value)
        key = id(value)
        if key in self.seen:
            return ("again", self.seen[key])
        self.seen[key] = len(self.seen)
        if depth > 12:
            raise _TooMuch  # deeper than this is not read: taken as not readable
        inner = depth + 1
        if kind in (list, tuple):
            return (kind.__name__, key, tuple(self.value(item, inner) for item in list(value)))
        if kind in (set, frozenset):
            return (kind.__name__, key, tuple(sorted((self.value(item, inner) for item in list(value)), key=repr)))
        if kind is bytearray:
            return ("bytearray", key, bytes(value))
        if kind is dict:
            return ("dict", key, self.pairs(list(value.items()), inner))
        if kind is types.MappingProxyType:  # a dataclass Field's metadata, a class's namespace
            return ("mappingproxy", key, self.pairs(list(value.items()), inner))
        if kind is types.ModuleType or issubclass(kind, types.ModuleType):
            import sys

            named = object.__getattribute__(value, "__dict__").get("__name__")
            if type(named) is str and sys.modules.get(named) is value:
                return ("module", key)  # a library: its own names are its own (not looked into)
            return ("made module", key, self.pairs(list(object.__getattribute__(value, "__dict__").items()), inner))
        if kind is types.FunctionType:
            return ("function", key, self.value(value.__defaults__, inner), self.value(value.__kwdefaults__, inner),
                    self.value(_own_dict(value), inner), self.value(value.__name__, inner),
                    self.value(value.__qualname__, inner), self.value(value.__doc__, inner),
                    self.value(value.__annotations__, inner), self.value(value.__code__.co_code, inner),
                    tuple(self.value(_cell(c), inner) for c in (value.__closure__ or ())))
        if kind is types.MethodType:
            return ("method", key, self.value(value.__func__, inner), self.value(value.__self__, inner))
        if kind in (types.BuiltinMethodType, types.MethodWrapperType):  # [].append: the list is state
            return ("bound builtin", key, self.value(value.__self__, inner))
        if kind in (staticmethod, classmethod, property):
            parts = (value.fget, value.fset, value.fdel) if kind is property else (value.__func__,)
            return (kind.__name__, key, tuple(self.value(part, inner) for part in parts),
                    self.value(_own_dict(value), inner))
        if issubclass(kind, type):
            mapping = _CLASS_DICT(value)  # type's own descriptor: never a metaclass's code
            items = [(k, v) for k, v in list(mapping.items()) if k not in ("__dict__", "__weakref__")]
            if mapping.get("__module__") != self.module_name:
                # a library's class the file names (Optimizer): its attributes, one level (a
                # counter kept as Optimizer.steps is state too)
                return ("foreign class", key, tuple(sorted(((str(k), _shallow(v)) for k, v in items), key=repr)))
            return ("class", key, self.pairs(items, inner))
        array = self._array(value, inner)
        if array is not None:
            return ("array", key, array)
        tensor = self._tensor(value, inner)
        if tensor is not None:
            return ("tensor", key, tensor)
        if _python_made(kind):  # a Python class's instance: all in its dict, its slots, its contents
            return ("object", key, self.value(kind, inner), self.value(_own_dict(value), inner),
                    self._contents(value, inner), tuple(self.value(slot, inner) for slot in _slot_values(value)))
        if kind in _STATELESS or _immutable_torch(value) or _CLASS_DICT(kind).get("__module__") in _TYPING_MODULES:
            return ("stateless", key, id(kind))
        raise _Opaque(kind.__name__)  # a C object whose state cannot be read (lru_cache, a Generator)

    def _array(self, value: Any, depth: int) -> Any:
        """A plain numpy array: its bytes (a digest past 64 kB), or its objects when it holds them."""
        import hashlib
        import sys

        numpy = sys.modules.get("numpy")
        if numpy is None or type(value) is not numpy.ndarray:
            return None
        if value.dtype.hasobject:
            return ("objects", self.value(numpy.ndarray.tolist(value), depth))
        raw = numpy.ndarray.tobytes(value)
        return raw if len(raw) <= 65536 else hashlib.sha256(raw).digest()

    def _tensor(self, value: Any, depth: int) -> Any:
        """A torch tensor (read through torch's own class): its version counter, which an
        in-place change moves, its values when small (``.data`` changes move no version), its
        gradient (which accumulates) and its own dict."""
        import sys

        torch = sys.modules.get("torch")
        tensor = getattr(torch, "Tensor", None) if torch is not None else None
        if torch is None or tensor is None or not issubclass(type(value), tensor):
            return None
        base = torch._C.TensorBase
        version = int(base._version.__get__(value))
        numel = int(base.numel(value))
        values = tuple(base.tolist(base.detach(value).flatten())) if numel <= 4096 else None
        grad = base.grad.__get__(value)
        return (version, numel, values, self.value(grad, depth) if grad is not None else None,
                self.value(_own_dict(value), depth))


def _contents_of(value: Any) -> list[Any] | None:
    """What an instance of a Python subclass of dict, list or set holds, read through the base
    type's own C methods (never the subclass's): a Counter at module level keeps state there."""
    kind = type(value)
    if issubclass(kind, dict):
        return [item for pair in dict.items(value) for item in pair]
    if issubclass(kind, list):
        return list(list.__iter__(value))
    if issubclass(kind, (set, frozenset)):
        return sorted(repr(item) for item in set.__iter__(set(value)) if type(item) in (int, str, float, bool))
    return None


_MISSING = ("unset slot",)


def _slot_values(value: Any) -> list[Any]:
    """The values in an object's ``__slots__`` (a dataclass's Field keeps its own there), read
    through the classes' member descriptors, which are C and run none of the object's code."""
    found = []
    for cls in _TYPE_GET["__mro__"](type(value)):
        for attribute in list(_CLASS_DICT(cls).values()):
            if type(attribute) is types.MemberDescriptorType:
                try:
                    found.append(attribute.__get__(value, type(value)))
                except AttributeError:
                    found.append(_MISSING)
    return found


def _own_dict(value: Any) -> dict[str, Any] | None:
    """An object's instance dict, through the ``__dict__`` getset its class inherits from C
    (a class that names a property ``__dict__`` does not get it run)."""
    for cls in _TYPE_GET["__mro__"](type(value)):
        descriptor = _CLASS_DICT(cls).get("__dict__")
        if type(descriptor) is types.GetSetDescriptorType:
            try:
                own = descriptor.__get__(value, type(value))
            except (AttributeError, TypeError):
                return None
            return own if type(own) is dict else None
    return None


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


# --- The timeout's stack dump -------------------------------------------------------------------


def _arm_dump(run: Any) -> None:
    """In the fork: a dump of every stack at the deadline, into the same file, so a timeout in its
    cases shows its line. Not faulthandler's watchdog: that is a thread, which a fork lacks, and
    re-arming it there waits forever for the missing thread; a timer's SIGALRM, with
    faulthandler's own C handler registered for it, dumps from wherever the fork is."""
    import faulthandler
    import signal
    import time

    if run.timeout_dump is not None:
        dump, deadline = run.timeout_dump
        faulthandler.register(signal.SIGALRM, file=dump, all_threads=True)
        signal.setitimer(signal.ITIMER_REAL, max(deadline - time.monotonic(), 0.05))


def _quiet_dump(run: Any) -> None:
    """In the parent, once only waiting for the fork: its own dump would show only the wait."""
    import faulthandler

    if run.timeout_dump is not None:
        faulthandler.cancel_dump_traceback_later()


def _rearm_dump(run: Any) -> None:
    """In the parent, after the wait: its watchdog again, for the cases it may still run."""
    import faulthandler
    import time

    if run.timeout_dump is not None:
        dump, deadline = run.timeout_dump
        faulthandler.dump_traceback_later(max(deadline - time.monotonic(), 0.05), file=dump)


# --- The two processes' places, and the fork's report -------------------------------------------


class _Places:
    """Which instance each of the two processes is in, in a page both share. grind reads the last
    "case" line on the control pipe as the case a timeout interrupted; during the split every
    such line names the earliest case (in run order) either process is in, so a timeout names
    the case one process running every case in order would have stopped at, not whichever was
    started last. A process that ends its part says the other's case once more. The forbidden
    calls each process saw are kept with the instance they came in, so that the first one named
    is the one an unshared run meets first. (The learner's code can write this page, as it can
    the control pipe: it only misnames its own timeout.)"""

    def __init__(self, run: Any, subject_id: str) -> None:
        import mmap

        self.run, self.subject_id, self.names = run, subject_id, [i["name"] for i in run.instances]
        self.page = mmap.mmap(-1, 8)
        self.page[:] = struct.pack("<ii", -1, -1)
        self.say = run.say  # the control pipe's own, which earliest() stands in for meanwhile
        self.hits_at: list[tuple[int, dict[str, Any]]] = []  # (instance index, hit) seen here

    def watching(self, observe: Callable[[dict[str, Any]], Any], me: int) -> Callable[[dict[str, Any]], Any]:
        index = {name: i for i, name in enumerate(self.names)}

        def observed(instance: dict[str, Any]) -> Any:
            at = index.get(instance["name"], -1)
            struct.pack_into("<i", self.page, 4 * me, at)
            hits = self.run.guards.hits if self.run.guards is not None else None
            count = len(hits) if hits is not None else 0
            try:
                return observe(instance)
            finally:
                if hits is not None:
                    self.hits_at.extend((at, dict(hit)) for hit in hits[count:])

        return observed

    def earliest(self, line: str) -> None:
        if line.startswith("case "):
            running = [at for at in struct.unpack("<ii", self.page) if 0 <= at < len(self.names)]
            if running:
                line = f"case {self.subject_id} {self.names[min(running)]}"
        self.say(line)

    def done(self, me: int) -> None:
        struct.pack_into("<i", self.page, 4 * me, -1)
        other = struct.unpack_from("<i", self.page, 4 * (1 - me))[0]
        if 0 <= other < len(self.names):
            self.say(f"case {self.subject_id} {self.names[other]}")


def _report(run: Any, theirs: list[dict[str, Any]], observe: Callable[[dict[str, Any]], Any],
            before: set[str], carried: Callable[[], bool] | bool, places: _Places) -> bytes:
    """Run the fork's instances; their records, seconds, forbidden calls and observations, and
    whether the learner's state moved, as bytes."""
    import time

    from safetensors.numpy import save

    cases, seconds = {}, {}
    for instance in theirs:
        started = time.perf_counter()
        cases[instance["name"]] = observe(instance).to_json()
        seconds[instance["name"]] = time.perf_counter() - started
    hits = [{"api": str(h["api"]), "line": h["line"], "at": at} for at, h in places.hits_at]
    moved = carried() if callable(carried) else carried
    head = ENCODE({"cases": cases, "case_s": seconds, "hits": hits, "carried_state": bool(moved)}).encode()
    body = save({key: value for key, value in run.observed.items() if key not in before})
    return _HEADER.pack(len(head), len(body)) + head + body


def _read_all(fd: int) -> bytes:
    chunks, size = [], 0
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while size <= _CAP:
            chunk = pipe.read(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    return b"".join(chunks) if size <= _CAP else b""


def _merge(run: Any, record: Any, raw: bytes, names: set[str], places: _Places | None = None) -> bool:
    """The fork's report into ``record`` and ``run.observed``; whether it says the learner's state
    moved (True also when there is no report to say otherwise). A report that does not parse, or
    names an instance the fork was not given, is dropped whole (its instances then run here)."""
    import json

    from safetensors.numpy import load

    if len(raw) < _HEADER.size:
        return True
    head_n, body_n = _HEADER.unpack_from(raw)
    if _HEADER.size + head_n + body_n != len(raw):
        return True
    try:
        head = json.loads(raw[_HEADER.size:_HEADER.size + head_n])
        observed = load(raw[_HEADER.size + head_n:])
        cases = {name: _protocol.CaseRecord.parse(value, f"case {name}")
                 for name, value in _protocol._dict(head.get("cases"), "cases").items()}
        seconds = {str(name): _protocol._float(s, "case_s")
                   for name, s in _protocol._dict(head.get("case_s"), "case_s").items()}
        hits = [(_protocol.ForbiddenHit.parse(h, "hits"), h.get("at") if type(h.get("at")) is int else -1)
                for h in _protocol._list(head.get("hits"), "hits")]
        carried = head.get("carried_state") is not False
    except Exception:  # noqa: BLE001 - anything malformed (safetensors' own error included): not a report
        return True
    if not set(cases) <= names or any(_protocol.split_obs_name(key) is None for key in observed):
        return True
    run.observed.update(observed)
    record.cases.update(cases)
    record.case_s.update({name: s for name, s in seconds.items() if name in cases})
    for hit, at in hits:
        found = {"api": hit.api, "line": hit.line}
        if places is not None:
            places.hits_at.append((at, found))
        elif run.guards is not None and found not in run.guards.hits:
            run.guards.hits.append(found)
    return carried
