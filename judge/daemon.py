"""The per-user warm daemon: ``grind run`` without a torch start.

A cold ``grind run`` spends most of its time importing torch in the learner's child. The first
``grind run`` therefore starts this daemon, detached, and grades cold as before; every later run
(in any workspace) sends the submission over a unix socket, and the daemon grades it whole: the
learner's job runs in its warm server (``judge.worker.sandbox.WarmWorker``, the same forkserver
that ``grind watch`` and ``grind grade`` use: there is one warm server implementation, and the
daemon only owns one), and the comparison and the diagnosis run in the daemon too, with the
reference kept loaded. The client then neither imports numpy nor reads the reference: it sends
the source, gets the verdict back, records it and renders it.

Trust, in one place:

- the socket lives in a folder of the user's own (mode 0700, checked, never followed through a
  link), is itself 0600, and both ends check the other's uid with SO_PEERCRED: another user can
  neither reach this daemon nor pose as it;
- only JSON crosses the socket, and the verdict is parsed field by field
  (``models.verdict_from_wire``); nothing is ever unpickled. The learner's child reaches the
  daemon's server through the server's own pipes and files, parsed as strictly as a cold run's;
- every job is a fresh fork of the clean warm server, with the same rlimits, cgroup, user and
  sandbox (bubblewrap, Landlock) as a cold run, the same folders hidden; a submission cannot
  change the server, so it cannot influence the next job;
- the daemon is keyed by grind's version (and its code, for editable installs), torch's version,
  the interpreter and the sandbox settings: a daemon with another key is replaced without a word.

Any failure on the daemon's side (none yet, a stale socket, a killed or hung daemon, a mismatch,
a busy one, a garbled reply) makes the client grade cold, exactly as without a daemon: a daemon
can make a verdict faster, never different or missing. ``GRIND_NO_DAEMON=1`` (or ``grind run
--no-daemon``) opts out. The daemon exits after ``GRIND_DAEMON_IDLE_S`` (15 minutes) idle.

The rooms: this module is the client (``DaemonExecutor``, one of grading's executors, see
judge.executor; and ``grind daemon status``/``stop``); judge.daemon_server is the daemon process;
judge.daemon_wire is what the two share (key, socket, framing, the typed messages). The client
loads no part of the grading pipeline: it never imports numpy nor torch. The daemon process
itself is small too; torch lives in its warm server, and a job's child is a fork of that.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from judge.daemon_wire import (  # noqa: F401 - parse_json, secret_path: the wire as tests reach it from the client
    ANSWER_CAP, BUSY_WAIT_S, HEADER_CAP, SUN_PATH_MAX, Answer, GradeRequest, Unavailable, connect, identity, key_of,
    parse_json, read_secret, recv, request, secret_path, send, socket_path as socket_path)
from judge.executor import Executor
from judge.paths import runtime_dir, runtime_problem
from judge.worker.settings import STARTUP_LIMIT_S

if TYPE_CHECKING:
    from judge.executor import Submission
    from judge.models import Verdict


def disabled() -> bool:
    """``GRIND_NO_DAEMON=1``: never start nor use a daemon."""
    return os.environ.get("GRIND_NO_DAEMON", "").strip() not in ("", "0")


def why_no_daemon() -> str | None:
    """None when a daemon can run (or runs) for this user and interpreter; otherwise why not, so
    that ``grind daemon status`` never promises a daemon that the next run cannot start."""
    if disabled():
        return "GRIND_NO_DAEMON is set"
    if not hasattr(socket, "AF_UNIX"):
        return "this platform has no unix sockets"
    folder = runtime_dir()
    if folder is None:
        return runtime_problem()
    path = socket_path(folder)
    if path is not None and len(os.fsencode(path)) > SUN_PATH_MAX:
        return (f"its socket path {path} is {len(os.fsencode(path))} bytes, over the {SUN_PATH_MAX} a unix "
                "socket allows: set GRIND_RUNTIME_DIR to a shorter folder")
    return None


def status() -> dict[str, Any] | None:
    """The running daemon's hello (pid, identity, jobs, idle time...), or None when none answers."""
    path = socket_path()
    if path is None:
        return None
    try:
        info = request(path, {"op": "hello"})
    except (OSError, Unavailable, ValueError):
        return None
    if info.get("unauthorized"):  # a daemon whose secret we cannot read: not one we can use
        return None
    info["socket"] = str(path)
    info["current"] = info.get("key") == key_of(identity())
    return info


def stop(wait_s: float = 10.0) -> bool:
    """Ask the daemon to exit and wait (up to ``wait_s``) until its process is gone, so that
    "stopped" is true when it is said; True when one was running and agreed."""
    path = socket_path()
    if path is None:
        return False
    try:
        pid = request(path, {"op": "hello"}).get("pid")
        agreed = bool(request(path, {"op": "stop"}).get("ok"))
    except (OSError, Unavailable, ValueError):
        return False
    deadline = time.monotonic() + wait_s
    while agreed and isinstance(pid, int) and pid > 0 and _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return agreed


def _alive(pid: int) -> bool:
    """Is ``pid`` still running? A zombie (exited, not yet reaped by its parent) is not."""
    if Path("/proc/self/stat").exists():  # Linux: read the state
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def spawn(hidden: list[Path]) -> None:
    """Start the daemon, detached (it double-forks, so no grind waits for it or reaps it). It
    warms its server for these hidden folders at once, so the next run finds torch imported."""
    path = socket_path()
    if path is None:
        return
    # This very judge package, whatever the folder grind runs in: `python -m judge.daemon_server` put
    # the current folder first on sys.path, so from a clone beside a non-editable install the
    # daemon imported the clone's judge, never matched the client's key, and every run replaced
    # it (and graded cold). The daemon starts in / with this package's parent first on its path.
    package_parent = str(Path(__file__).resolve().parent.parent)  # this file is judge/daemon.py
    argv = [sys.executable, "-c", f"import sys; sys.path.insert(0, {package_parent!r}); "
            "from judge.daemon_server import main; main(sys.argv[1:])",
            "--serve", str(path), "--hidden", json.dumps([str(h) for h in hidden])]
    import subprocess

    from judge.worker.isolation import spawn as spawn_known

    try:  # not waited for: the run that starts the daemon grades cold meanwhile, at full speed
        # Registered as one of grind's own children: grind is a child subreaper, and its sweep
        # after each cold run kills any unknown child in another session (a double fork would
        # not help: the grandchild is re-parented to grind, the nearest subreaper).
        spawn_known(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    start_new_session=True, close_fds=True, cwd="/")
    except OSError:
        pass


def _retire(path: Path, sock_info: os.stat_result | None) -> None:
    """Ask a daemon we will not use (another key, or one that does not answer) to go, and take
    its socket name away so the next run starts a fresh one. Only the socket file we looked at
    is removed: a daemon that replaced it meanwhile keeps its own."""
    try:
        request(path, {"op": "stop"}, timeout=1.0)
    except (OSError, Unavailable, ValueError):
        pass
    try:
        now = os.lstat(path)
        if sock_info is None or (now.st_ino, now.st_dev) == (sock_info.st_ino, sock_info.st_dev):
            os.unlink(path)
    except OSError:
        pass


class DaemonExecutor(Executor):
    """The client's side, one of grading's executors: ``judge.grade.grade`` asks it for the whole
    verdict, and grades cold itself (the very same code as without a daemon) whenever it answers
    None. When there is no usable daemon it starts one for the next run."""

    def __init__(self, hidden: list[Path]) -> None:
        self.hidden = list(hidden)
        self.served = 0  # verdicts the daemon gave (the rest were graded cold)
        self._spawned = False
        # Called once the daemon has accepted a job, before its answer is read: work the caller
        # needs next (grind run loads its renderer) done while the daemon grades, off the clock.
        self.meanwhile: Callable[[], None] | None = None

    def verdict(self, submission: Submission) -> Verdict | None:
        """The daemon's verdict on a submission that passed the static checks, or None: then the
        caller grades cold. The daemon loads the exercise from the same folders, checks that its
        files hash to the client's ``key``, and grades with the client's cache. A ``marked``
        submission is never sent: the marks checks are graded here, cold."""
        from judge.models import verdict_from_wire

        if submission.marked:
            return None
        exercise, limits = submission.exercise, submission.limits
        # The daemon's own limits end the learner's job; the rest (a reference to compute, pairs
        # of mistakes to run for a diagnosis) is trusted code, given room before the client
        # decides the daemon is hung.
        wall = limits.wall_s if limits is not None else exercise.time_limit
        answer = self._ask(submission, STARTUP_LIMIT_S + wall * 10 + 120)
        if answer is None:
            return None
        try:
            verdict = verdict_from_wire(answer.verdict)
        except (KeyError, TypeError, ValueError):
            return None
        self.served += 1
        return verdict

    def absent(self) -> bool:
        """No daemon's socket where this run would ask: it will be graded cold (and start a daemon
        for the next run), as ``_ask`` decides from the same look. A stale socket (a daemon gone)
        is found only by connecting, so it reads as present here."""
        path = socket_path()
        if path is None:
            return True
        try:
            return not stat.S_ISSOCK(os.lstat(path).st_mode)
        except OSError:
            return True

    def _start(self) -> None:
        if not self._spawned:
            self._spawned = True
            spawn(self.hidden)

    def _replace(self, path: Path, sock_info: os.stat_result) -> None:
        """A daemon we cannot use (gone, or another version): take its socket away, start a fresh one."""
        _retire(path, sock_info)
        self._start()

    def _request(self, submission: Submission) -> GradeRequest:
        """The job as the daemon reads it. Built only once a daemon is there to ask: its key
        (``identity``) walks grind's own files."""
        from judge.cache import cache_root

        exercise, limits = submission.exercise, submission.limits
        return GradeRequest(
            exercise_dir=str(exercise.exercise_dir.absolute()),
            solutions_root=str(exercise.solution_dir.parent.absolute()), exercise_key=submission.key,
            cache_root=str(cache_root().absolute()), source=submission.source, filename=submission.filename,
            limits=asdict(limits) if limits is not None else None, speed=submission.speed,
            key=key_of(identity()), hidden=[str(h) for h in self.hidden])

    def _ask(self, submission: Submission, answer_s: float) -> Answer | None:
        """Send one job; the daemon's answer once it says ``ok``, else None (and a daemon that is
        gone, hung or of another version is replaced on the way)."""
        path = socket_path()
        if path is None:
            return None
        try:
            sock_info = os.lstat(path)
        except OSError:
            self._start()
            return None
        if not stat.S_ISSOCK(sock_info.st_mode):
            return None  # not ours to remove
        try:
            sock = connect(path)
        except (ConnectionRefusedError, FileNotFoundError):  # a stale socket: the daemon is gone
            self._replace(path, sock_info)
            return None
        except (OSError, Unavailable):
            return None
        with sock:
            try:
                return self._exchange(sock, path, sock_info, self._request(submission), answer_s)
            except socket.timeout:
                _retire(path, sock_info)  # hung: replace it
                return None
            except ConnectionError:
                # Reset or closed unanswered: the daemon died (or is dying) with our connection
                # queued. A SIGKILLed daemon shows as a zombie while its other threads still hold
                # the listener open, so the connect succeeds and only then is it reset: as stale
                # a socket as a refused connect, and replaced the same way.
                self._replace(path, sock_info)
                return None
            except (OSError, ValueError, KeyError, TypeError, struct.error):
                return None

    def _exchange(self, sock: socket.socket, path: Path, sock_info: os.stat_result, message: GradeRequest,
                  answer_s: float) -> Answer | None:
        """The job's conversation on a connected socket: the answer when ``ok``, else None."""
        # A healthy daemon accepts the job at once (or says it is busy within BUSY_WAIT_S); one
        # that does not is hung, and is replaced rather than waited for.
        sock.settimeout(BUSY_WAIT_S + 10)
        try:
            send(sock, read_secret(path).encode())
            send(sock, message.to_wire())
        except BrokenPipeError:
            # Refused after the secret's frame (a secret read just as a new daemon replaced it)
            # closes the socket before the job is sent: that daemon is alive, so this run is cold
            # and it is left alone. Anything else is a dead daemon (the caller's ConnectionError).
            if Answer.parse(recv(sock, HEADER_CAP)).unauthorized:
                return None
            raise
        head = Answer.parse(recv(sock, HEADER_CAP))
        if head.mismatch:
            sock.close()
            self._replace(path, sock_info)
            return None
        if not head.accepted:
            return None  # busy: cold this time
        if self.meanwhile is not None:
            try:
                self.meanwhile()
            except Exception:  # noqa: BLE001 - only a head start: the caller does it again later
                pass
        sock.settimeout(answer_s)
        answer = Answer.parse(recv(sock, ANSWER_CAP))
        return answer if answer.ok else None  # not ok: it could not grade this one, cold


def worker_for(hidden: Callable[[], list[Path]], opt_out: bool = False) -> DaemonExecutor | None:
    """The executor ``grind run`` grades with: the daemon's, or None (cold) when opted out or when no
    daemon can start. ``hidden`` is called only after ``why_no_daemon`` has made the runtime
    folder, so the folders hidden from the child include it from the first run on."""
    if opt_out or why_no_daemon() is not None:
        return None
    return DaemonExecutor(hidden())
