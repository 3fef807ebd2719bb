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

Never for marks (a marked run's integrity record is one process's), a witnessed exercise (grind
counts the whole run's writes from outside), distributed cases (their ranks are forks already),
or a machine that gives this process one core. Each group runs in instance order, and every
instance starts from the same seed (run.reseed), so only code that carries state from one case
to the next (a module-level cache) can see a difference, which its own cases would show anyway.
"""

from __future__ import annotations

import os
import struct
from typing import Any, Callable

from .. import protocol as _protocol
from .values import ENCODE

# Below this many seconds of cases a fork (a few milliseconds) and a merge buy nothing.
WORTH_S = 0.04
# The larger group must be at most this share of the whole, or the split buys too little.
AT_MOST = 0.8
_HEADER = struct.Struct("<QQ")  # the JSON's length, then the observations' length
_CAP = 1 << 30  # more than this back from the fork is not a report: run its part here


def plan(job: dict[str, Any], instances: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(this process's instances, the fork's), each in run order; None when not worth it."""
    costs = job.get("costs")
    if (not isinstance(costs, dict) or not job.get("guard") or job.get("marked") or job.get("witness")
            or len(instances) < 2 or any(i["case"].get("world_size") for i in instances)):
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


def observe_halves(run: Any, subject_id: str, record: Any, mine: list[dict[str, Any]], theirs: list[dict[str, Any]],
                   observe: Callable[[dict[str, Any]], Any], flush: Callable[[], None]) -> None:
    """Fill ``record`` (a SubjectRecord) with every instance of ``mine`` and ``theirs``, the
    latter run in a fork. ``observe(instance)`` runs one and returns its CaseRecord (its
    observations land in ``run.observed``); ``flush`` empties the learner's output buffers, so
    that nothing printed before the fork comes out twice."""
    import time

    flush()
    read_fd, write_fd = os.pipe()
    before = set(run.observed)
    places = _Places(run, subject_id)
    pid = os.fork()
    if pid == 0:  # the fork: run the second group, report it, leave
        os.close(read_fd)
        try:
            data = _report(run, theirs, places.watching(observe, 1), before)
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
    raw = _read_all(read_fd)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    _merge(run, record, raw, {i["name"] for i in theirs})
    for instance in theirs:  # what the fork did not report runs here, as it would have unshared
        if instance["name"] not in record.cases:
            started = time.perf_counter()
            record.cases[instance["name"]] = observe(instance)
            record.case_s[instance["name"]] = time.perf_counter() - started
    order = [i["name"] for i in run.instances]
    record.cases = {name: record.cases[name] for name in order if name in record.cases}


class _Places:
    """Which instance each of the two processes is in, in a page both share, so that a timeout
    names the case still running: grind reads the last "case" line on the control pipe as the
    case a timeout interrupted, and with two processes the last one started may be the one that
    finished. A process that ends its part says the other's case once more. (The learner's code
    can write this page, as it can write the control pipe: it only misnames its own timeout.)"""

    def __init__(self, run: Any, subject_id: str) -> None:
        import mmap

        self.run, self.subject_id, self.names = run, subject_id, [i["name"] for i in run.instances]
        self.page = mmap.mmap(-1, 8)
        self.page[:] = struct.pack("<ii", -1, -1)

    def watching(self, observe: Callable[[dict[str, Any]], Any], me: int) -> Callable[[dict[str, Any]], Any]:
        index = {name: i for i, name in enumerate(self.names)}

        def observed(instance: dict[str, Any]) -> Any:
            struct.pack_into("<i", self.page, 4 * me, index.get(instance["name"], -1))
            return observe(instance)

        return observed

    def done(self, me: int) -> None:
        struct.pack_into("<i", self.page, 4 * me, -1)
        other = struct.unpack_from("<i", self.page, 4 * (1 - me))[0]
        if 0 <= other < len(self.names):
            self.run.say(f"case {self.subject_id} {self.names[other]}")


def _report(run: Any, theirs: list[dict[str, Any]], observe: Callable[[dict[str, Any]], Any],
            before: set[str]) -> bytes:
    """Run the fork's instances; their records, seconds, forbidden calls and observations as bytes."""
    import time

    from safetensors.numpy import save

    cases, seconds = {}, {}
    for instance in theirs:
        started = time.perf_counter()
        cases[instance["name"]] = observe(instance).to_json()
        seconds[instance["name"]] = time.perf_counter() - started
    hits = [{"api": str(h["api"]), "line": h["line"]} for h in (run.guards.hits if run.guards else [])]
    head = ENCODE({"cases": cases, "case_s": seconds, "hits": hits}).encode()
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


def _merge(run: Any, record: Any, raw: bytes, names: set[str]) -> None:
    """The fork's report into ``record`` and ``run.observed``; a report that does not parse, or
    names an instance the fork was not given, is dropped whole (its instances then run here)."""
    import json

    from safetensors.numpy import load

    if len(raw) < _HEADER.size:
        return
    head_n, body_n = _HEADER.unpack_from(raw)
    if _HEADER.size + head_n + body_n != len(raw):
        return
    try:
        head = json.loads(raw[_HEADER.size:_HEADER.size + head_n])
        observed = load(raw[_HEADER.size + head_n:])
        cases = {name: _protocol.CaseRecord.parse(value, f"case {name}")
                 for name, value in _protocol._dict(head.get("cases"), "cases").items()}
        seconds = _protocol._dict(head.get("case_s"), "case_s")
        hits = [_protocol.ForbiddenHit.parse(h, "hits") for h in _protocol._list(head.get("hits"), "hits")]
    except Exception:  # noqa: BLE001 - anything malformed (safetensors' own error included): not a report
        return
    if not set(cases) <= names or any(_protocol.split_obs_name(key) is None for key in observed):
        return
    run.observed.update(observed)
    record.cases.update(cases)
    record.case_s.update({name: float(s) for name, s in seconds.items()
                          if name in cases and type(s) in (int, float)})
    if run.guards is not None:
        for hit in hits:
            found = {"api": hit.api, "line": hit.line}
            if found not in run.guards.hits:
                run.guards.hits.append(found)
