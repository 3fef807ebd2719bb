"""The warm server: torch imported once, each job run in a fork made before it arrives (a spare),
supervised to its wall clock, reaped to its last process, and answered with one JSON line
(``protocol.Reply``).
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
import traceback
from typing import Any

from .. import heap as _heap
from .. import landlock as _landlock
from .. import protocol as _protocol
from .. import witness as _witness
from ..process import become_subreaper, die_with_parent, empty_cgroup, kill_cgroup, reap_children, set_dumpable
from .control import confine, shield_parent
from .job import execute
from .sources import note_modules, precompile


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
    _take_grinds_pipes()
    config = json.loads(sys.stdin.readline())
    become_subreaper()
    confine(config.get("confine"))
    import numpy  # noqa: F401 - imported once here, inherited by every fork
    import safetensors.numpy  # noqa: F401
    import torch

    torch.set_num_threads(1)
    # Jobs confine themselves with Landlock exactly when the server does (WarmWorker sends both
    # or neither); from ABI 6 that layer also keeps them from signalling the server.
    scoped = bool(config.get("confine")) and min(_landlock.abi(), _landlock.KNOWN_ABI) >= 6
    _heap.freeze_functions()  # torch's heap, indexed before the first job rather than during it
    note_modules()
    server = _Server(sys.stdout, config.get("cgroup"), scoped)
    print(json.dumps({"ready": True}), file=server.out, flush=True)
    while True:
        if server.spare is None:
            server.spare = _Spare(server.cgroup, scoped)
        line = sys.stdin.readline()
        if not line:
            break
        if line.strip() and not server.answer(line):
            break
    if server.spare is not None:
        server.spare.finish()
    reap_children()
    os._exit(0)


def _take_grinds_pipes() -> None:
    """grind's pipes, passed as fds of their own (see sandbox.WarmWorker._start), made our stdin
    and stdout: fd 0 is still the one watched for the hang-up."""
    passed = os.environ.pop("GRIND_SERVE_FDS", "")
    if passed:
        requests, replies = (int(fd) for fd in passed.split(","))
        os.dup2(requests, 0)
        os.dup2(replies, 1)
        os.close(requests)
        os.close(replies)


class _Server:
    """The warm server's state between jobs: its reply stream, its cgroup, the spare waiting for
    the next job, and whether torch._dynamo is imported yet."""

    def __init__(self, out: Any, cgroup: str | None, scoped: bool) -> None:
        self.out, self.cgroup, self.scoped = out, cgroup, scoped
        self.spare: _Spare | None = None
        self.optimizers_ready = False

    def answer(self, line: str) -> bool:
        """Run the job of one request line in the spare and answer it; False when grind is gone."""
        request = json.loads(line)
        job = request["job"]
        spare = self._spare_for(job, line)
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
            self.spare = None
            set_dumpable(True)  # nothing of the job is left; our own /proc/self/io is read next
            # What the job printed counts among its writes here: grind, which reads the job's
            # stdout and stderr (the server never does), takes it off (sandbox.WarmWorker.run_job).
            reply["witness"] = _witness.since(before)
        try:
            print(json.dumps(reply), file=self.out, flush=True)
        except BrokenPipeError:
            return False
        if self.spare is not None:
            self.spare.finish()  # the verdict is on its way; the next job waits for this one to be gone
        self.spare = None
        set_dumpable(True)  # every process of the job is gone (finish reaped them)
        precompile(job)
        return True

    def _spare_for(self, job: dict[str, Any], line: str) -> _Spare:
        """The spare, handed this job's line; a fresh one when the spare cannot run it as forked."""
        assert self.spare is not None
        fresh = False
        if not self.optimizers_ready and (uses_torch_optim(job) or job.get("marked")):
            # The first torch optimizer built in a process imports torch._dynamo, which costs
            # about as much as importing torch, and every forked job paid it again: lr-schedule
            # graded at 1.0 submission/s against clipping's 8.1. Imported here once, in the
            # server, before this job's fork (the job's clock has not started), every later job
            # inherits it; an exercise whose checks never name torch.optim does not pay for it.
            # Only the import: building an optimizer here would also patch its class (torch
            # wraps Optimizer.step in a profiling hook on first use), which changed what the
            # forbidden-API guard saw of torch.optim.SGD.step in every later job.
            import torch._dynamo  # noqa: F401
            self.optimizers_ready = fresh = True  # the spare was forked without it
        if self.spare.scoped and not job.get("confine"):
            fresh = True  # a job without its own Landlock layer runs behind the shielding fork
        if fresh or not self.spare.send(line):  # (send fails when the spare died waiting)
            self.spare.finish()
            self.spare = _Spare(self.cgroup, self.scoped and bool(job.get("confine")))
            self.spare.send(line)
        return self.spare


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
        _heap.freeze_functions()  # what this server made is indexed once, not walked by every job
        note_modules()  # and what seal_imports reads (its modules), likewise
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
    # (typeshed marks sys.__stdin__ and friends Final: replacing them here is the point.)
    sys.stdin = sys.__stdin__ = open(os.devnull)  # type: ignore[misc]
    sys.stdout = sys.__stdout__ = os.fdopen(  # type: ignore[misc]
        1, "w", encoding=sys.stdout.encoding, errors=sys.stdout.errors, closefd=False)
    sys.stderr = sys.__stderr__ = os.fdopen(  # type: ignore[misc]
        2, "w", buffering=1, encoding=sys.stderr.encoding, errors=sys.stderr.errors, closefd=False)


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
    import signal

    control = _ControlPipe(fds)
    status, timed_out, orphaned = _wait(pid, control, wall_s, startup_s, hangup_fd)
    try:
        os.killpg(pid, signal.SIGKILL)  # the job's session, then anything that left it
    except (ProcessLookupError, PermissionError):
        pass
    if orphaned:  # grind died mid-job: take the job and everything it started down, then go
        if job_cgroup:
            empty_cgroup(job_cgroup)
        reap_children()
        os._exit(0)
    if control.done:
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
        while control.open() and time.monotonic() < end:
            control.drain(0.01)
    control.close()
    return {"exit": os.waitstatus_to_exitcode(status), "timed_out": timed_out, "ready": control.ready_at is not None,
            "last_case": control.last_case}


def _wait(pid: int, control: _ControlPipe, wall_s: float, startup_s: float,
          hangup_fd: int | None) -> tuple[int | None, bool, bool]:
    """Drain the control pipe until the job ends, says "done", runs out of time or grind hangs
    up: (its wait status or None, timed out, grind gone)."""
    import select

    started = time.monotonic()
    # Registered with no events: poll() then reports only POLLHUP/POLLERR, which a pipe's read
    # end gets once every write end is closed. It never reads, so the server's buffered stdin
    # (the next job's line) is left alone.
    hangup = None
    if hangup_fd is not None:
        hangup = select.poll()
        hangup.register(hangup_fd, 0)
    while not control.done:
        if hangup is not None and hangup.poll(0):
            return None, False, True
        reaped, code = os.waitpid(pid, os.WNOHANG)
        if reaped:
            return code, False, False
        now = time.monotonic()
        deadline = control.ready_at + wall_s if control.ready_at is not None else started + startup_s
        if now >= deadline:
            return None, True, False
        control.drain(min(0.02, max(deadline - now, 0.001)) if control.open() else 0)
        if not control.open():
            time.sleep(0.005)
    return None, False, False


class _ControlPipe:
    """The job's control pipe, read in small pieces: only "ready", "case NAME" and "done" are kept."""

    def __init__(self, fds: list[int]) -> None:
        import selectors

        self.ready_at: float | None = None
        self.last_case: str | None = None
        self.done = False
        self._partial = b""
        self._selector = selectors.DefaultSelector()
        for fd in fds:
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ)

    def open(self) -> bool:
        return bool(self._selector.get_map())

    def drain(self, timeout: float) -> None:
        for key, _ in self._selector.select(timeout):
            try:
                chunk = os.read(key.fd, 4096)
            except BlockingIOError:
                continue
            if not chunk:
                self._selector.unregister(key.fd)
                continue
            *lines, partial = (self._partial + chunk).split(b"\n")
            self._partial = partial[-512:]
            for raw in lines:
                self._line(raw)

    def _line(self, raw: bytes) -> None:
        if raw.startswith(b"ready") and self.ready_at is None:
            self.ready_at = time.monotonic()
        elif raw.startswith(b"case "):
            self.last_case = raw[5:].strip()[:200].decode("utf-8", "replace")
        elif raw == b"done" and self.ready_at is not None:
            self.done = True

    def close(self) -> None:
        self._selector.close()
