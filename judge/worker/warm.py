"""Warm runs: a fork server that imported torch once, forking a fresh child per job (the
server's side is ``judge/worker/child/server.py``). One of the ``protocol.Worker``s.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from judge.errors import JudgeError
from judge.worker import disk, process, protocol
from judge.worker.folders import _make_workdir, hold_folder, release_folder, remove_tree, stage_job
from judge.worker.isolation import (
    BWRAP_TRIES,
    PidsCgroup,
    command,
    confinement,
    drop_user,
    forget,
    isolation,
    rlimit_table,
    scrubbed_env,
    spawn,
    sweep_orphans,
)
from judge.worker.outputs import REPLY_CAP, _conclude, _confine_failed, _JobStreams, _over_disk, less_printed
from judge.worker.process import kill_group
from judge.worker.protocol import Job, Limits, ProtocolError, RunOutcome
from judge.worker.settings import STARTUP_LIMIT_S


class WarmWorker:
    """A forkserver: one process that has imported torch, forking a fresh child per job.

    The server runs under the same isolation as cold runs (bubblewrap's PID namespace, or a
    Landlock domain of its own), and each job child adds a Landlock layer of its own, so a job
    can neither see, signal nor write anything outside its folder. The server enforces each
    job's wall clock itself (from the "ready" line on the job's control pipe), reaps every
    process the job left, and answers one JSON line per job; the job's stdout and stderr reach
    grind through FIFOs (:class:`_JobStreams`), never through the server's memory. grind keeps a backstop: a server that does not answer in time
    is killed with everything under it.
    """

    def __init__(self, hidden: list[Path] | None = None) -> None:
        self.hidden = hidden or []
        self.proc: subprocess.Popen[bytes] | None = None
        self.root: str | None = None
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.cgroup: PidsCgroup | None = None
        self.shut = False  # closed by its owner: never restarted by a job still in flight
        self.answered: set[str] = set()  # tokens of the jobs this server has answered (see run_job)
        self.requests: Any = None  # grind's end of the server's request pipe
        self._lock = threading.Lock()

    def _start(self, limits: Limits) -> None:
        """Start the server; again where bubblewrap lost the mount-table race (BWRAP_TRIES)."""
        for _ in range(BWRAP_TRIES):
            if self._start_once(limits):
                return
        raise JudgeError("the warm worker did not start (see grind doctor)")

    def _start_once(self, limits: Limits) -> bool:
        """One try; False, with everything stopped, where bubblewrap exited 1 before the server
        said a word (its stderr is not kept: bubblewrap's pid 1 would hold it open)."""
        iso = isolation()
        for folder in self.hidden:  # bubblewrap can only hide a folder that exists when it starts
            folder.mkdir(parents=True, exist_ok=True)
        # One tmpfs for the server's folder where grind may mount it: jobs run one at a time, and
        # each job's folder is gone before the next one starts, so its size is each job's cap.
        self.root = _make_workdir(iso, prefix="grind-warm-", disk_mb=limits.disk_mb)
        hold_folder(self.root)  # in use while grind lives; swept by the next grind once it is not
        # One cgroup for the server and its jobs; the server makes a sub-cgroup per job in it.
        self.cgroup = PidsCgroup.create(limits.processes + 32)
        writable = (str(self.cgroup.path),) if self.cgroup is not None and iso.bwrap else ()
        cgroup = self.cgroup
        confine = confinement(self.hidden, self.root)
        if confine is not None and self.cgroup is not None:
            confine["write"].append(str(self.cgroup.path))
        # The server's requests and replies travel on two pipes passed as fds of their own, not as
        # its stdin and stdout: bubblewrap's pid 1 keeps the stdio it was given for as long as the
        # sandbox lives, and without Landlock's scoping a job reopened them through /proc/1/fd
        # and wrote replies of its own (red team 2). The server moves them to 0 and 1 itself.
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        env = dict(scrubbed_env(self.root), GRIND_SERVE_FDS=f"{requests_r},{replies_w}")
        try:
            self.proc = _spawn_lasting(
                command(iso, self.root, self.hidden, serve=True, writable=writable,
                        confine=confine if iso.macos and not iso.bwrap else None),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(requests_r, replies_w), cwd=self.root, env=env, start_new_session=True,
                preexec_fn=lambda: _server_preexec(cgroup, iso.drop_to),
            )
        except BaseException:
            os.close(requests_w)
            os.close(replies_r)
            raise
        finally:
            os.close(requests_r)
            os.close(replies_w)
        self.requests = os.fdopen(requests_w, "wb")
        self.lines = queue.Queue()
        self.answered = set()
        stdout = os.fdopen(replies_r, "rb")

        def pump() -> None:
            assert stdout is not None
            while True:
                raw = stdout.readline(REPLY_CAP)
                if not raw:
                    break
                self.lines.put(raw)
            self.lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        try:
            self._send(json.dumps({"confine": confine if iso.confines else None,
                                   "cgroup": str(self.cgroup.path) if self.cgroup is not None else None}))
            reply = self._receive(STARTUP_LIMIT_S)
        except BrokenPipeError:  # bubblewrap (or the server) ended before it read its first line
            reply = None
        if reply == b'{"ready": true}\n':
            return True
        lost_race = False
        if reply is None and iso.bwrap:  # the replies pipe closed: the server (or bwrap) has ended
            try:
                lost_race = self.proc.wait(timeout=1) == 1
            except subprocess.TimeoutExpired:
                pass
        self._stop()
        if not lost_race:  # anything else is not worth another try
            raise JudgeError("the warm worker did not start (see grind doctor)")
        return False

    def _receive(self, timeout: float) -> bytes | None:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def _send(self, text: str) -> None:
        assert self.proc is not None and self.requests is not None
        self.requests.write(text.encode() + b"\n")
        self.requests.flush()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, limits: Limits | None = None) -> None:
        """Start the server now rather than on the first job, so that job finds torch imported
        (the per-user daemon warms up this way while the run that started it grades cold)."""
        with self._lock:
            if not self.shut and not self.alive():
                self._stop()
                self._start(limits or Limits())

    def close(self) -> None:
        """Stop for good (Ctrl-C in watch mode ends here while a job may still be running in
        another thread: that job gets a crashed outcome, and nothing starts the server again)."""
        self.shut = True
        self._stop()

    def _stop(self) -> None:
        if self.proc is not None:
            kill_group(self.proc.pid)
            self.proc.wait()
            forget(self.proc.pid)
            self.proc = None
        if self.requests is not None:
            try:
                self.requests.close()
            except OSError:
                pass
            self.requests = None
        if self.cgroup is not None:
            self.cgroup.destroy()
            self.cgroup = None
        sweep_orphans()
        if self.root:
            remove_tree(self.root)
            release_folder(self.root)
            self.root = None

    def __enter__(self) -> WarmWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_job(self, job: Job, limits: Limits) -> RunOutcome:
        with self._lock:
            if self.shut:
                return RunOutcome(status="crashed", message="grading was stopped")
            if not self.alive():
                self._stop()
                self._start(limits)
        assert self.root is not None
        iso = isolation()
        workdir = _make_workdir(iso, self.root, prefix="job-")
        token = secrets.token_hex(16)
        # The job's own Landlock layer: the same reads as the server, writes to its folder only.
        confine = confinement(self.hidden, workdir) if iso.confines else None
        streams = _JobStreams(workdir, iso, limits.output_bytes)  # stdout, stderr: to grind, not the server
        streams.start()
        job = stage_job(job, workdir, iso)
        job.update(Job(token=token, out_dir=workdir, time_limit=limits.wall_s, confine=confine,
                       stdout_fifo=streams.paths[0], stderr_fifo=streams.paths[1]))
        dispatched = time.monotonic()
        watch = self._watch_disk(limits)
        late = False  # a late reply of an earlier job came first: this server is replaced after this job
        try:
            self._send(json.dumps({
                "job": job, "rlimits": rlimit_table(limits, iso.drop_to is not None),
                "wall_s": limits.wall_s, "startup_s": STARTUP_LIMIT_S, "processes": limits.processes,
            }))
            # The server enforces the deadline; this is only a backstop for a stuck server.
            backstop = time.monotonic() + STARTUP_LIMIT_S + limits.wall_s + 30
            while True:
                raw = self._receive(max(backstop - time.monotonic(), 0.0))
                try:
                    reply = protocol.Reply.parse(raw or b"")
                except ProtocolError:
                    self._stop()
                    return _over_disk(RunOutcome(status="crashed", duration_s=time.monotonic() - dispatched,
                                                 message="the warm worker stopped answering; it was restarted",
                                                 isolation=iso.level), watch.stop(), limits)
                if secrets.compare_digest(reply.token.encode("utf-8", "backslashreplace"), token.encode()):
                    break
                if reply.token in self.answered:
                    late = True  # an earlier job's: the line grind took for it was not the server's
                    continue
                # Not this job's reply, nor a late one of an earlier job: a process of a job wrote
                # it into the server's pipe to grind. Taken as this job's reply (as before replies
                # carried the job's token), it shifted every later reply onto the wrong classmate.
                self._stop()
                return _over_disk(RunOutcome(
                    status="crashed", duration_s=time.monotonic() - dispatched, isolation=iso.level,
                    message="the warm worker's reply was forged (a line that is not this job's reached grind "
                            "through the worker's pipe); the worker was restarted"), watch.stop(), limits)
            if len(self.answered) >= 4096:  # a daemon's server lives long: bounded, a late line is rare
                self.answered.clear()
            self.answered.add(token)
            over = watch.stop()
            stdout, stderr = streams.texts()
            witness = less_printed(reply.witness if job.get("witness") else None, sum(streams.totals))
            outcome = RunOutcome(status="ok", stdout=stdout, stderr=stderr, returncode=reply.exit,
                                 duration_s=time.monotonic() - dispatched, last_case=reply.last_case,
                                 witness=witness)
            _confine_failed(outcome)
            return _over_disk(_conclude(outcome, workdir, token, limits, reply.timed_out,
                                        started=reply.ready or not reply.timed_out), over, limits)
        except (BrokenPipeError, OSError, ValueError):  # ValueError: stdin closed by close() meanwhile
            self._stop()
            return RunOutcome(status="crashed", message="the warm worker died; it was restarted", isolation=iso.level)
        finally:
            watch.stop()
            streams.close()
            remove_tree(workdir)
            if late:
                self._stop()  # the next job gets a fresh server, with no stray line before its reply

    def _watch_disk(self, limits: Limits) -> disk.DiskWatch:
        """The job's disk use, watched from grind's side: the server's folder holds this job's
        folder and nothing else of size. Past the cap, every process of the server is killed
        (grind cannot reach the job alone inside bubblewrap's PID namespace); the job gets the
        disk-limit verdict and the next job a fresh server."""
        server = self.proc.pid if self.proc is not None else None

        def kill() -> None:
            if server is not None:
                for pid in reversed(disk.descendants(server)):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass

        watch = disk.DiskWatch(self.root or "", limits.disk_mb << 20, kill=kill,
                               pids=lambda: disk.descendants(server) if server is not None else [])
        watch.start()
        return watch


_SPAWNER: queue.Queue[Any] | None = None
_SPAWNER_LOCK = threading.Lock()


def _spawn_lasting(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start a long-lived child from a thread that lives as long as grind.

    Bubblewrap's --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that started the
    child ends, not the process: ``grind watch`` grades each save in a thread of its own, so a
    warm server started there would be killed after the first verdict and restarted (a torch
    import) on every save."""
    global _SPAWNER
    with _SPAWNER_LOCK:
        if _SPAWNER is None:
            _SPAWNER = queue.Queue()
            threading.Thread(target=_spawner, args=(_SPAWNER,), daemon=True, name="grind-spawner").start()
        requests = _SPAWNER
    answer: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
    requests.put((argv, kwargs, answer))
    ok, value = answer.get()
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def _spawner(requests: queue.Queue[Any]) -> None:
    while True:
        argv, kwargs, answer = requests.get()
        try:
            answer.put((True, spawn(argv, **kwargs)))
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            answer.put((False, exc))


def _server_preexec(cgroup: PidsCgroup | None, drop_to: int | None) -> None:
    """The server's own limits are its jobs' business (each fork sets them): only the cgroup and
    the user, as limit_child does them."""
    process.default_sigchld()
    if cgroup is not None:
        cgroup.join()
    if drop_to is not None:
        drop_user(drop_to)
