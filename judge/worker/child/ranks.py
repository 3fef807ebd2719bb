"""Distributed cases: one case run on R real ``torch.distributed`` ranks inside the child.

A case with ``world_size = R`` is not simulated. The child that already holds the learner's
code forks R rank processes, which join one gloo process group and each run the case's ``call``
(the learner's function on that rank's share of the data, under real collectives and, when the
case wraps the model, real ``DistributedDataParallel``). Why it is built this way:

- **Forks of the loaded child, not new interpreters.** The child has imported torch, loaded the
  checks and the learner's file; a fork costs milliseconds where a fresh interpreter costs
  seconds. The child has one torch thread (``torch.set_num_threads(1)``) and imports
  ``torch.distributed`` and ``torch._dynamo`` before its "ready" line (DDP's constructor imports
  the latter: about 3 s on the first DDP model of each rank otherwise).
- **Inside the same sandbox.** The ranks are ordinary children of the child: same session, same
  pids cgroup, same rlimits, same Landlock domain, reaped by the same subreaper, killed with
  everything else at the deadline. Nothing outside the job's folder is touched: the rendezvous
  is a ``FileStore`` in the job's private temp folder, and gloo's own traffic is TCP on the
  loopback interface of a network namespace of the run's own: bubblewrap's, or, without it, one
  the child makes before it confines itself (kernel.private_network). ``lo`` is the only
  interface there, so Landlock lets TCP through; where no such namespace could be made it keeps
  TCP denied and a distributed case cannot join, which its error says.
- **No limit raised.** Each rank is one process with gloo's few threads (4 tasks per rank,
  measured), so R <= 8 ranks fit the run's default budget of 128 processes and threads; the
  address-space rlimit applies to each process on its own, and a fork shares its pages
  copy-on-write, so the memory cap needs no change either.
- **Observations per rank.** Each rank turns its observations into plain arrays with the
  child's own ``to_array`` and writes them as a safetensors file; the child reads them back and
  records them as ``rank r: key``, so they travel to grind by the one channel every run uses and
  are compared rank by rank with the reference's.
- **Where each rank is.** Every ``torch.distributed`` collective (and ``backward``, where DDP
  runs its gradient all_reduce) is wrapped, before the learner's file is loaded, by a function
  that tells the child over a pipe "rank r entered all_reduce" and "left it". The child watches
  the pipes and the rank processes: when every rank has finished, the case is over; when a rank
  dies, every rank is killed and the case says which rank died and where the others were; when
  a rank has finished while another has waited in a collective for ``GRACE_S`` (asleep, not
  merely short of CPU on a loaded machine: its threads' state in /proc), or two ranks
  wait in different collectives that long, that is a deadlock, said as
  ``deadlock: rank 1 waited in all_reduce while rank 0 returned`` (an error of type "deadlock"). gloo's own timeout
  (``GLOO_TIMEOUT_S``) ends a wait that nothing explains, as an error of that rank.

A learner's failure on any rank is data (the case's record), never an exception of the judge.
Standard library only at import: the child loads this file by path, like its siblings.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import threading
import time
import warnings
from typing import Any, Callable

GRACE_S = 1.5  # a collective still open this long after a peer finished cannot complete
GLOO_TIMEOUT_S = 5.0  # gloo gives up on a collective nothing else explains
COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "broadcast",
               "broadcast_object_list", "reduce", "reduce_scatter", "reduce_scatter_tensor", "all_to_all",
               "all_to_all_single", "barrier", "monitored_barrier", "gather", "gather_object", "scatter",
               "scatter_object_list", "send", "recv", "isend", "irecv", "batch_isend_irecv")
# Point-to-point calls: not met by every rank in the same order, so not counted (see _peers_settled).
POINT_TO_POINT = ("send", "recv", "isend", "irecv", "batch_isend_irecv")
BACKWARD = "backward (where DDP all-reduces the gradients)"
# Not counted: a backward is a collective only under DDP (a local one on rank 0 would put its
# count one ahead); a rank asleep in one waits for the others' gradients.
UNCOUNTED = (*POINT_TO_POINT, BACKWARD)
# Receives: a wait in one is credited only when it may wait for the holder (see _peers_settled).
RECEIVES = ("recv", "irecv")
# Calls that always return a handle to wait on (no async_op argument).
ALWAYS_ASYNC = ("isend", "irecv", "batch_isend_irecv")

_report_fd: int | None = None  # set in a rank: where the wrappers say which collective it is in
# A rank's reports are encoded by an encoder of grind's own, made when this module loads: json's
# shared default encoder is an object the learner's code can reach (``json._default_encoder``)
# and change, and a sixth review emptied every "forbidden" record in the ranks' reports that way.
_ENCODE = json.JSONEncoder().encode
# Every report line is signed (issue 28): the learner's code shares the rank's process and can
# write to the report pipe (its descriptor is a number), so a line it wrote saying "rank 1 waits
# in barrier" would release rank 0's held save early. Each rank gets a key of its own when it is
# forked (never written anywhere; the watcher keeps its copy), numbers its lines and signs number,
# process id and text: a line that is not signed, repeated, or sent by another process (a fork of
# the rank) is not the rank's word, and from then on nothing that rank says about where it waits
# counts. Its record (the "done" line) still counts, so the case ends as it would have.
_key = b""
_sequence = 0
_SAYING = threading.Lock()
_commands: Any = None  # set in a rank: its command pipe, where a held save reads its grant
HOLD_S = 12.0  # the longest the watcher holds a save for its peers (see hold_save)


def _signature(key: bytes, sequence: int, pid: int, text: str) -> str:
    import hashlib
    import hmac

    return hmac.new(key, f"{sequence} {pid} {text}".encode(), hashlib.sha256).hexdigest()


def _say(message: dict[str, Any]) -> None:
    """Write one signed report line. Numbered and written under one lock: a rank's threads (a
    save in a thread while the main thread waits in a barrier) would otherwise write their lines
    out of their numbers' order, and the watcher drops a line numbered below the last it read."""
    global _sequence
    if _report_fd is None:
        return
    text, pid = _ENCODE(message), os.getpid()
    with _SAYING:
        _sequence += 1
        try:
            os.write(_report_fd, f"{_sequence} {pid} {_signature(_key, _sequence, pid, text)} {text}\n".encode())
        except OSError:
            pass


def hold_save() -> bool:
    """Wait, before a save writes, until the watcher (the process that forked the ranks, where
    none of the ranks' calls runs) says this rank may write: every other rank has returned and been looked at,
    waits in a collective that cannot complete before this rank joins it, or waits its own turn
    to save (a lower rank: holds are granted from the highest rank down, so a rank's own held save
    never serves as its barrier). ``HOLD_S`` caps the wait: a rank that waits some other way (a
    sleep) wakes and returns first. rank0-checkpoint's checks call it in their ``torch.save``;
    what was decided (the grant, and when) is the watcher's, so a rank that lies about itself
    cannot release it. False outside a rank's case (nothing to wait for)."""
    if _report_fd is None or _commands is None:
        return False
    _say({"hold": 1})
    try:
        _commands.readline()  # "granted": the watcher writes it, no rank can
    except (OSError, ValueError):
        pass
    return True


_inside = threading.local()  # depth of traced calls on this thread (a ProcessGroup method under one is not traced)
# A ProcessGroup's own methods (``dist.group.WORLD.barrier().wait()``): each returns a handle.
GROUP_METHODS = ("barrier", "allreduce", "broadcast", "allgather", "reduce", "gather", "scatter", "alltoall",
                 "send", "recv")


def _depth() -> int:
    return int(getattr(_inside, "depth", 0))


def _call(function: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    _inside.depth = _depth() + 1
    try:
        return function(*args, **kwargs)
    finally:
        _inside.depth -= 1


def _ended(name: str, function: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """Call ``function`` (a collective, or a handle's wait), then say it is over, and whether it
    ended in an exception: a rank whose collective failed (a timeout, a group that never met)
    did not wait for its peers, whatever its code did with the exception (see _settled)."""
    try:
        result = _call(function, args, kwargs)
    except BaseException as exc:
        _say({"out": name, "raised": f"{type(exc).__name__}: {exc}"[:300], **_aside()})
        raise
    _say({"out": name, **_aside()})
    return result


def _aside() -> dict[str, Any]:
    """Said of a thread other than the rank's main one: its wait is not the rank's (the main
    thread may be doing anything meanwhile)."""
    return {"aside": 1} if threading.current_thread() is not threading.main_thread() else {}


def _source(name: str, args: Any, kwargs: Any) -> dict[str, Any]:
    """The source a receive names (None: any rank, or not known); nothing for other calls."""
    if name not in RECEIVES:
        return {}
    src = kwargs.get("src", args[1] if len(args) > 1 else None)
    return {"src": src if isinstance(src, int) and not isinstance(src, bool) else None}


class _Pending:
    """What a collective issued with ``async_op=True`` returns, wrapped: the rank waits in the
    collective when it calls ``wait()`` (``dist.barrier(async_op=True).wait()`` is a barrier),
    not when it issues it, and the wrapper says so."""

    def __init__(self, work: Any, name: str, source: dict[str, Any] | None = None) -> None:
        self._work, self._name, self._source = work, name, dict(source or {})

    def wait(self, *args: Any, **kwargs: Any) -> Any:
        _say({"wait": self._name, **self._source, **_aside()})
        return _ended(self._name, self._work.wait, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._work, name)


def _traced(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    import functools

    @functools.wraps(function)
    def collective(*args: Any, **kwargs: Any) -> Any:
        if _report_fd is None:
            return function(*args, **kwargs)
        if kwargs.get("async_op") or name in ALWAYS_ASYNC:
            _say({"issued": name})  # counted now, waited in at wait()
            source = _source(name, args, kwargs)
            work = _call(function, args, kwargs)
            if isinstance(work, list):  # batch_isend_irecv: a handle per operation
                return [_Pending(w, name, source) for w in work]
            return _Pending(work, name, source) if work is not None else work
        _say({"in": name, **_source(name, args, kwargs), **_aside()})
        return _ended(name, function, args, kwargs)

    collective.__grind_traced__ = True  # type: ignore[attr-defined]
    return collective


def _traced_method(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """A ProcessGroup method, traced when the learner's code calls it itself (not when a traced
    ``torch.distributed`` function calls it on the learner's behalf): issued now, waited in at
    the handle's ``wait()``."""
    import functools

    @functools.wraps(method)
    def traced(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _report_fd is None or _depth():
            return method(self, *args, **kwargs)
        _say({"issued": name})
        work = _call(method, (self, *args), kwargs)
        return _Pending(work, name) if work is not None else work

    traced.__grind_traced__ = True  # type: ignore[attr-defined]
    return traced


def install_tracer(torch: Any) -> None:  # torch: imported by the runner, the one module that may
    """Wrap the collectives where the learner's file will find them (``torch.distributed.X`` and
    ``torch.distributed.distributed_c10d.X``) and ``torch.autograd.backward``, before that file
    is loaded, so ``from torch.distributed import all_reduce`` gets the wrapper too. Outside a
    rank the wrappers only call through."""
    dist, c10d = torch.distributed, torch.distributed.distributed_c10d
    for name in COLLECTIVES:
        original = getattr(c10d, name, None)
        if original is None or getattr(original, "__grind_traced__", False):
            continue
        wrapped = _traced(name, original)
        for module in (dist, c10d):
            if getattr(module, name, None) is original:
                setattr(module, name, wrapped)
    if not getattr(torch.autograd.backward, "__grind_traced__", False):
        torch.autograd.backward = _traced(BACKWARD, torch.autograd.backward)
    group = getattr(dist, "ProcessGroup", None)
    for name in GROUP_METHODS if group is not None else ():
        method = getattr(group, name, None)
        if method is not None and not getattr(method, "__grind_traced__", False):
            try:
                setattr(group, name, _traced_method(name, method))
            except (AttributeError, TypeError):  # a torch whose ProcessGroup cannot be changed: left untraced
                pass


def _ranks(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def _where(state: dict[str, Any]) -> str:
    if state["phase"] == "in":
        return f"waited in {state['op']}"
    if state["phase"] == "done":
        return "returned" if state["record"]["status"] != "error" else \
            f"raised {state['record']['error']['type']}"
    return "was still running"  # "were", for several ranks: see _group_text


def _group_text(states: dict[int, dict[str, Any]], ranks: list[int]) -> str:
    """'rank 1 waited in all_reduce' / 'ranks 1, 2 returned and rank 3 waited in barrier'."""
    groups: dict[str, list[int]] = {}
    for r in ranks:
        groups.setdefault(_where(states[r]), []).append(r)
    parts = [f"{_ranks(rs)} {what.replace('was ', 'were ') if len(rs) > 1 else what}" for what, rs in groups.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _runnable(pid: int | None) -> bool:
    """Whether any thread of ``pid`` is running or waiting for a CPU (state R in /proc). A rank
    blocked in a collective sleeps; one that only lacks CPU time on a loaded machine is runnable,
    and is given more time instead of being called deadlocked."""
    if pid is None:
        return False
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as handle:
                if handle.read().rsplit(b")", 1)[1].split()[0] == b"R":
                    return True
        except (OSError, IndexError):
            continue
    return False


def _deadlock(states: dict[int, dict[str, Any]], now: float) -> str | None:
    """The deadlock text, or None while the ranks may still make progress."""
    waiting = [r for r, s in states.items() if _stuck(s, now)]
    if not waiting:
        return None
    others = [r for r in states if r not in waiting]
    finished = [r for r in others if states[r]["phase"] == "done"]
    if finished:
        return f"{_group_text(states, waiting)} while {_group_text(states, finished)}"
    return _crossed(states, waiting) if not others else None


def _crossed(states: dict[int, dict[str, Any]], waiting: list[int]) -> str | None:
    """Every rank waiting, in collectives that are not the same one: the ranks can never meet."""
    if len({states[r]["op"] for r in waiting}) < 2:
        return None
    first = [r for r in waiting if states[r]["op"] == states[waiting[0]]["op"]]
    rest = [r for r in waiting if r not in first]
    return f"{_group_text(states, first)} while {_group_text(states, rest)}"


def _stuck(state: dict[str, Any], now: float) -> bool:
    """A rank inside a collective for the grace period, and not running (only waiting)."""
    return state["phase"] == "in" and now - state["since"] >= GRACE_S and not _runnable(state.get("pid"))


def _status_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"was killed by signal {number} ({signal.Signals(number).name})"
        except ValueError:
            return f"was killed by signal {number}"
    return f"exited with code {os.WEXITSTATUS(status)} before returning"


_PARENT_FDS: set[int] = set()  # every live pool's own pipe ends (this one's so far included): a new rank closes them


class RankPool:
    """``world_size`` forked ranks joined in one gloo group (``dist``: ``torch.distributed``),
    kept for every distributed case of one subject: each case is a command the ranks run with
    ``body(rank, command)``, which returns the rank's record as JSON-able data (``{"status":
    "ok"|"error"|"bad_output", ...}``) after writing its observations where the caller reads them.

    Why kept: forking the ranks and joining their group cost about half of a small distributed
    case (a fork of the loaded child, then gloo's rendezvous), paid again for every case. Kept
    ranks run a subject's cases one after another, as the single-process cases run one after
    another in the child; a case starts only when every rank has finished the one before. A
    pool that failed (a rank died, the ranks deadlocked, a rank left the process group) is
    closed, and the next case gets fresh ranks."""

    def __init__(self, dist: Any, world_size: int, store_path: str,
                 body: Callable[[int, dict[str, Any]], dict[str, Any]]) -> None:
        self.store_path = store_path
        self.children: dict[int, int] = {}  # pid -> rank
        self.pipes: dict[int, int] = {}  # report read fd -> rank
        self.commands: dict[int, int] = {}  # rank -> command write fd
        self.buffers: dict[int, bytes] = {}
        self.open_fds: set[int] = set()
        self.keys: dict[int, bytes] = {}  # rank -> the key its report lines are signed with
        self.sequences: dict[int, int] = {}  # rank -> the number of its last report line
        self.closed = False
        global _key
        for rank in range(world_size):
            read_fd, write_fd = os.pipe()
            command_r, command_w = os.pipe()
            self.keys[rank] = _key = os.urandom(32)
            self.sequences[rank] = 0
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "fork() of a multi-threaded process": only the caller forks
                pid = os.fork()
            if pid == 0:
                os.close(read_fd)
                os.close(command_w)
                for fd in _PARENT_FDS:  # this pool's earlier ranks' pipes, and any other pool's
                    os.close(fd)
                _die_with_parent()
                _rank_main(dist, rank, world_size, store_path, write_fd, command_r, body)
            _key = b""
            os.close(write_fd)
            os.close(command_r)
            self.children[pid] = rank
            self.pipes[read_fd] = rank
            self.commands[rank] = command_w
            _PARENT_FDS.update((read_fd, command_w))
            self.buffers[read_fd] = b""
            self.open_fds.add(read_fd)

    def healthy(self) -> bool:
        """Every rank still there, ready for a case (one that exited between cases: closed)."""
        if self.closed:
            return False
        for pid in self.children:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.close()
                return False
        return True

    def run(self, command: dict[str, Any], on_done: Callable[[int], None] | None = None,
            on_grant: Callable[[int], None] | None = None) -> dict[str, Any]:
        """One case on every rank. ``on_done(rank)`` runs in this process the moment a rank's
        record arrives, before anything else is read (rank_cases looks at the kept checkpoint
        then); ``on_grant(rank)`` the moment a held save (hold_save) is let go, before the rank
        hears of it. Returns ``{"ranks": [record per rank]}`` when every rank
        finished, or ``{"failure": {"type", "message"}, "records": {rank: record}}`` (the ranks
        that had finished) when a rank died or the ranks deadlocked; then every rank is killed
        and reaped before this returns."""
        line = (json.dumps(command) + "\n").encode()
        now = time.monotonic()
        states: dict[int, dict[str, Any]] = {rank: {"phase": "running", "since": now, "pid": pid, "count": 0,
                                                    "key": self.keys[rank], "trusted": True}
                                             for pid, rank in self.children.items()}
        for rank, state in states.items():
            state["sequence"] = self.sequences[rank]
        for fd in self.commands.values():
            try:
                os.write(fd, line)
            except OSError:
                pass  # a dead rank: the watch says so
        outcome = _Watch(self, states, on_done, on_grant).until_settled()
        for rank, state in states.items():
            self.sequences[rank] = state["sequence"]
        if "failure" in outcome or not all(record.get("group") for record in outcome["ranks"]):
            self.close()
        return outcome

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        _PARENT_FDS.difference_update([*self.pipes, *self.commands.values()])
        for fd in self.commands.values():
            try:
                os.close(fd)
            except OSError:
                pass
        for pid in self.children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in self.children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        for fd in self.pipes:
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.unlink(self.store_path)
        except OSError:
            pass


def _loopback_only() -> None:
    """The ranks talk over loopback only: name its interface to gloo (``GLOO_SOCKET_IFNAME``)
    before the group starts. Without it gloo resolves the machine's hostname, and where that
    does not resolve (common in containers) every rank warns "Unable to resolve hostname" on
    stderr, which the verdict showed as the learner's own output on every run, passing or not.
    A name already set is kept; a machine without a loopback interface named ``lo*`` is left as is."""
    if os.environ.get("GLOO_SOCKET_IFNAME"):
        return
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return
    loopback = next((name for name in names if name == "lo"), None) or next(
        (name for name in names if name.startswith("lo")), None)
    if loopback is not None:
        os.environ["GLOO_SOCKET_IFNAME"] = loopback


def _rank_main(dist: Any, rank: int, world_size: int, store_path: str, report_fd: int, command_fd: int,
               body: Callable[[int, dict[str, Any]], dict[str, Any]]) -> None:
    """A rank's life: join the group, then run each case it is sent until its command pipe closes.
    Only a case's own code is traced (the wrappers report to ``_report_fd`` only while it runs)."""
    global _report_fd, _commands
    import datetime

    joined: dict[str, Any] | None = None
    _loopback_only()
    try:
        dist.init_process_group("gloo", store=dist.FileStore(store_path, world_size), rank=rank,
                                world_size=world_size, timeout=datetime.timedelta(seconds=GLOO_TIMEOUT_S))
    except BaseException as exc:  # noqa: BLE001 - said as this rank's error, on the first case
        joined = {"status": "error", "error": {"type": type(exc).__name__, "message":
                  f"rank {rank} could not join the process group: {exc}"[:2000], "line": None,
                  "code": "", "traceback": ""}}
    try:
        with os.fdopen(command_fd, "rb") as commands:
            _commands = commands
            for raw in iter(commands.readline, b""):
                try:
                    command = json.loads(raw)
                except ValueError:
                    break
                _report_fd = report_fd
                record: dict[str, Any] = dict(joined) if joined is not None else body(rank, command)
                try:
                    record["group"] = joined is None and bool(dist.is_initialized())
                except Exception:  # noqa: BLE001 - the learner's code broke torch.distributed itself
                    record["group"] = False
                for stream in (sys.stdout, sys.stderr):  # what the learner printed on this rank
                    try:
                        stream.flush()
                    except Exception:  # noqa: BLE001 - a closed or replaced stream
                        pass
                _say({"done": record})
                _report_fd = None
                if joined is not None:
                    break
    finally:
        os._exit(0)


class _Watch:
    """The watcher's side of one case: the ranks' report pipes read as they come, each rank's
    record handed to ``on_done`` the moment it arrives, held saves granted (hold_save), until the
    case is settled (every rank done, a rank died, or the ranks deadlocked)."""

    def __init__(self, pool: RankPool, states: dict[int, dict[str, Any]],
                 on_done: Callable[[int], None] | None, on_grant: Callable[[int], None] | None) -> None:
        self.pool, self.states, self.on_done, self.on_grant = pool, states, on_done, on_grant

    def until_settled(self) -> dict[str, Any]:
        exited: dict[int, int] = {}
        pool = self.pool
        while True:
            holding = any(s.get("holding") for s in self.states.values())
            fds = list(pool.open_fds)
            ready, _, _ = select.select(fds, [], [], 0.002 if holding else 0.05) if fds else ([], [], [])
            if not fds:
                time.sleep(0.05)
            now = time.monotonic()
            self._read(ready, now)
            _reap(pool.children, exited)
            outcome = _settled(self.states, exited, now)
            if outcome is not None:
                return outcome
            if holding:
                self._grant(now)

    def _read(self, ready: list[int], now: float) -> None:
        for fd in ready:
            rank = self.pool.pipes[fd]
            if _read_reports(fd, self.states[rank], self.pool.buffers, self.pool.open_fds, now) and self.on_done:
                self.on_done(rank)

    def _grant(self, now: float) -> None:
        """Let go of one held save whose peers have settled (the highest rank first), or that has
        waited ``HOLD_S``. Nothing here takes a rank's word for more than its signed report
        lines: where a peer waits is checked against the kernel (it must be asleep), and a
        report still in a pipe is read first (a rank that returned must be looked at first)."""
        for rank in sorted((r for r, s in self.states.items() if s.get("holding")), reverse=True):
            if now - self.states[rank]["held_since"] < HOLD_S and not self._peers_settled(rank):
                continue
            pending, _, _ = select.select(list(self.pool.open_fds), [], [], 0)
            if pending:
                return  # read them first: the next turn decides
            if self.on_grant is not None:
                self.on_grant(rank)
            self.states[rank]["holding"] = False
            try:
                os.write(self.pool.commands[rank], b"granted\n")
            except OSError:
                pass  # a dead rank: the watch says so
            return

    def _peers_settled(self, holder: int) -> bool:
        """Whether every rank but ``holder`` has returned (and been looked at), waits its own
        turn to save (a lower rank), or sleeps in a collective that cannot complete before the
        holder joins it: ranks meet in collectives in the same order, so a peer waiting in its
        k-th collective waits for the holder's k-th while the holder has entered fewer than k.
        A point-to-point receive is not met in order (it is not counted): a peer asleep in one
        from the holder (or from any rank) counts as waiting; so does one asleep in a backward
        (DDP's gradients). Only a wait on the rank's main thread counts (_read_reports)."""
        count = self.states[holder]["count"]
        for rank, state in self.states.items():
            if rank == holder or state["phase"] == "done" or (state.get("holding") and rank < holder):
                continue
            if (state["phase"] == "in" and state["trusted"] and not state.get("raised")
                    and (state["count"] > count or state["op"] == BACKWARD
                         or (state["op"] in POINT_TO_POINT and state.get("src") in (None, holder)))
                    and not _runnable(state["pid"])):
                continue
            return False
        return True


def _read_reports(fd: int, state: dict[str, Any], buffers: dict[int, bytes], open_fds: set[int], now: float) -> bool:
    """One rank's report lines so far: where it waits ("in"), that it runs again ("out"), that
    a save of its waits for the watcher ("hold"), its record ("done"); "out" says when the
    collective ended in an exception. True when this read
    brought the record. A line the rank's own code did not sign (see ``_say``) is dropped, and
    the rank's word on where it waits no longer counts."""
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        chunk = b""
    if not chunk:
        open_fds.discard(fd)
        return False
    *lines, buffers[fd] = (buffers[fd] + chunk).split(b"\n")
    buffers[fd] = buffers[fd][-(1 << 20):]
    for raw in lines:
        message = _signed(raw, state)
        if message is None or state["phase"] == "done":
            continue
        aside = bool(message.get("aside"))  # a thread other than the rank's main one
        if "in" in message or "wait" in message:
            op = str(message.get("in", message.get("wait")))[:80]
            if "in" in message and op not in UNCOUNTED:
                state["count"] += 1
            if not aside:
                src = message.get("src")
                state.update(phase="in", op=op, since=now, src=src if isinstance(src, int) else None)
        elif "issued" in message:
            if str(message["issued"]) not in UNCOUNTED:
                state["count"] += 1
        elif "out" in message:
            if not aside:
                state.update(phase="running", since=now)
            if message.get("raised") and not state.get("raised"):
                state["raised"] = f"{str(message['out'])[:80]} ended in {str(message['raised'])[:300]}"
        elif "hold" in message:
            state.update(holding=True, held_since=now)
        elif "done" in message and isinstance(message["done"], dict):
            state.update(phase="done", record=message["done"], since=now)
            return True
    return False


def _signed(raw: bytes, state: dict[str, Any]) -> dict[str, Any] | None:
    """The message of a line the rank signed, numbered past its last one (a line repeated is not
    news), from its own process; None (and the rank no longer trusted on where it waits) for any
    other line, such as one the learner's code wrote to the pipe."""
    import hmac

    try:
        number, pid, signature, text = raw.decode().split(" ", 3)
        sequence = int(number)
        good = (sequence > state["sequence"] and int(pid) == state["pid"]
                and hmac.compare_digest(signature, _signature(state["key"], sequence, int(pid), text)))
        message = json.loads(text) if good else None
    except (UnicodeDecodeError, ValueError):
        message = None
    if not isinstance(message, dict):
        state["trusted"] = False
        return None
    state["sequence"] = sequence
    return message


def _reap(children: dict[int, int], exited: dict[int, int]) -> None:
    """The wait status of every rank that has exited since, by rank."""
    for pid, rank in children.items():
        if rank in exited:
            continue
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        if done:
            exited[rank] = status
            _pass_on_poisoned(status)


def _settled(states: dict[int, dict[str, Any]], exited: dict[int, int], now: float) -> dict[str, Any] | None:
    """The case's outcome once it is known (a rank died before its record, every rank is done,
    or the ranks deadlocked); None while it may still make progress."""
    for rank, status in sorted(exited.items()):
        if states[rank]["phase"] != "done":
            others = [r for r in states if r != rank]
            text = f"rank {rank} {_status_text(status)}"
            if others:
                text += f" while {_group_text(states, others)}"
            return {"failure": {"type": "RankDied", "message": text}, "records": _finished(states)}
    if all(s["phase"] == "done" for s in states.values()):
        caught = [r for r in sorted(states) if states[r].get("raised") and states[r]["record"].get("status") == "ok"]
        if caught:
            return {"failure": {"type": "CollectiveFailed", "message": (
                f"rank {caught[0]}'s {states[caught[0]]['raised']}, which its code caught and went on: "
                "a rank cannot go on past a collective that did not complete")}, "records": _finished(states)}
        return {"ranks": [states[r]["record"] for r in sorted(states)]}
    deadlock = _deadlock(states, now)
    if deadlock:
        return {"failure": {"type": "deadlock", "message": deadlock}, "records": _finished(states)}
    return None


# (first, past the last) exit status of a poisoned call, set by the runner in a marked run
POISONED: tuple[int, int] | None = None


def _pass_on_poisoned(status: int) -> None:
    """A rank that called a forbidden implementation in a marked run ended with the status that
    names it (poison.py): this process ends with the same status, so that grind's own process
    reads it and the verdict names the API (a rank that died otherwise fails its case)."""
    if POISONED is None:
        return
    code = os.waitstatus_to_exitcode(status)
    if POISONED[0] <= code < POISONED[1]:
        os._exit(code)


def _finished(states: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {r: s["record"] for r, s in states.items() if s["phase"] == "done"}


def _die_with_parent() -> None:
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
