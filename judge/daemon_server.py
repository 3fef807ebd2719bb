"""The per-user daemon's process: it accepts ``grind run`` jobs on its socket and grades them
in a warm executor (judge.pipeline.WarmExecutor over one WarmWorker), with the reference kept
loaded. Started detached by the client (judge.daemon.spawn); see judge.daemon for what it is
for and how trust is kept; judge.daemon_wire holds what both ends share.

Everything the socket brings is untrusted until parsed: the secret first, in a frame of its
own; then a request, read as a ``GradeRequest`` field by field. A job that cannot be graded
(a broken exercise, a sandbox that cannot start) is answered with an error, and the client
grades it cold: a daemon can make a verdict faster, never different or missing.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.daemon_wire import (
    BUSY_WAIT_S, REQUEST_CAP, SECRET_CAP, GradeRequest, Unavailable, code_fingerprint, connect, identity, key_of,
    parse_json, read_secret, recv, same_user, secret_path, send)

if TYPE_CHECKING:
    from judge.models import Verdict

IDLE_S = 15 * 60.0
CODE_CHECK_S = 5.0  # how often an idle daemon checks that its own code is still the one on disk


def idle_limit() -> float:
    try:
        return max(0.1, float(os.environ.get("GRIND_DAEMON_IDLE_S", IDLE_S)))
    except ValueError:
        return IDLE_S


class Daemon:
    """Accepts connections (one thread each), grades one job at a time in its WarmWorker, and
    exits after ``idle_s`` without a request or when its socket file is no longer its own."""

    def __init__(self, path: Path, hidden: list[Path], idle_s: float) -> None:
        # The server's own modules load here: a client (every `grind run`) never needs them.
        import secrets
        import threading

        from judge.worker.sandbox import WarmWorker

        self.path, self.idle_s = path, idle_s
        self.ident = identity()
        self.key = key_of(self.ident)
        self.hidden = [str(h) for h in hidden]
        self.worker = WarmWorker([Path(h) for h in hidden])
        self.job_lock = threading.Lock()
        self.last = time.monotonic()
        self.started = time.time()
        self.jobs = 0
        self.stopping = threading.Event()
        self.secret = secrets.token_hex(32)
        self.listener: socket.socket | None = None
        self.inode: tuple[int, int] | None = None
        self._code_checked = time.monotonic()

    def bind(self) -> bool:
        """Listen on the socket path; False when a live daemon already does."""
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is 0600 from birth: no window where others may connect
        try:
            try:
                listener.bind(str(self.path))
            except OSError:
                try:  # is the one there alive?
                    with connect(self.path, 0.5):
                        listener.close()
                        return False
                except (OSError, Unavailable):
                    pass
                try:
                    os.unlink(self.path)
                except OSError:
                    pass
                listener.bind(str(self.path))
        except OSError:
            listener.close()
            return False
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        info = os.lstat(self.path)
        self.inode = (info.st_ino, info.st_dev)
        self._write_secret()  # before listen: a client that can connect finds the secret there
        listener.listen(16)
        listener.settimeout(0.5)
        self.listener = listener
        return True

    def _write_secret(self) -> None:
        """A fresh secret per daemon, written 0600 and renamed into place (never a half file)."""
        target = secret_path(self.path)
        temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(self.secret)
        os.replace(temporary, target)

    def _still_ours(self) -> bool:
        try:
            info = os.lstat(self.path)
        except OSError:
            return False
        return (info.st_ino, info.st_dev) == self.inode

    def warm(self) -> None:
        """Start the warm server now (torch imported once), so the first job finds it ready (a job
        that arrives meanwhile waits for it inside WarmWorker.run_job rather than going cold)."""
        from judge.worker.sandbox import Limits

        try:
            self.worker.start(Limits())
        except Exception:  # noqa: BLE001 - a job will try again, and fall back to cold if it fails
            pass

    def _code_changed(self) -> bool:
        """True once grind's files on disk are no longer the ones this daemon runs (an upgrade, or
        a reinstall that moved the package: its socket name then changes too, so no client would
        ever reach this daemon again to replace it, and it would idle on for 15 minutes)."""
        now = time.monotonic()
        if now - self._code_checked < CODE_CHECK_S:
            return False
        self._code_checked = now
        return bool(code_fingerprint() != self.ident["code"])

    def serve_forever(self) -> None:
        import threading

        assert self.listener is not None
        threading.Thread(target=self.warm, daemon=True).start()
        try:
            while not self.stopping.is_set():
                if not self.job_lock.locked() and time.monotonic() - self.last > self.idle_s:
                    break
                if not self._still_ours():
                    break  # replaced (or removed): a newer daemon answers there now
                if not self.job_lock.locked() and self._code_changed():
                    break
                try:
                    conn, _ = self.listener.accept()
                except socket.timeout:
                    continue
                except OSError:
                    break
                if not same_user(conn):  # SO_PEERCRED: another user reached the socket; say nothing
                    conn.close()
                    continue
                threading.Thread(target=self.handle, args=(conn,), daemon=True).start()
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        self.stopping.set()
        if self.listener is not None:
            self.listener.close()
            if self._still_ours():
                try:
                    os.unlink(self.path)
                except OSError:
                    pass
                if read_secret(self.path) == self.secret:
                    try:
                        os.unlink(secret_path(self.path))
                    except OSError:
                        pass
        self.worker.close()

    def hello(self) -> dict[str, Any]:
        return {"ok": True, "pid": os.getpid(), "key": self.key, "identity": self.ident, "jobs": self.jobs,
                "started": self.started, "idle_s": round(time.monotonic() - self.last, 1),
                "idle_limit_s": self.idle_s, "warm": self.worker.alive(), "busy": self.job_lock.locked()}

    def handle(self, conn: socket.socket) -> None:
        import secrets

        with conn:
            try:
                conn.settimeout(10)
                # The secret first, in a frame of its own and at most SECRET_CAP bytes: a process that
                # cannot read it (a learner's child that found the socket) may neither run, stop
                # nor probe anything, nor make the daemon read a request of REQUEST_CAP bytes.
                if not secrets.compare_digest(recv(conn, SECRET_CAP), self.secret.encode()):
                    send(conn, b'{"ok": false, "unauthorized": true}')
                    return
                message = parse_json(recv(conn, REQUEST_CAP))
                op = message.get("op")
                if op == "hello":
                    send(conn, json.dumps(self.hello()).encode())
                elif op == "stop":
                    send(conn, b'{"ok": true}')
                    self.stopping.set()
                elif op == "grade":
                    self.grade(conn, message)
            except (OSError, ValueError, KeyError, TypeError, struct.error):
                pass

    def grade(self, conn: socket.socket, message: dict[str, Any]) -> None:
        if message.get("key") != self.key:
            send(conn, json.dumps({"ok": False, "mismatch": True}).encode())
            self.stopping.set()  # the client starts the daemon it needs
            return
        self.last = time.monotonic()  # only jobs count as use: a status probe does not keep it alive
        # The lock first, then the hidden folders: a job for other folders that arrives while
        # another terminal's job runs is told "busy" within BUSY_WAIT_S like any other. Waiting
        # for the lock inside _rehide kept it unanswered past the client's patience, and the
        # client then replaced a healthy daemon.
        if not self.job_lock.acquire(timeout=BUSY_WAIT_S):
            send(conn, b'{"ok": false, "busy": true}')
            return
        try:
            if [str(h) for h in message.get("hidden", [])] != self.hidden:
                self._rehide([Path(h) for h in message["hidden"]])
            send(conn, b'{"ok": true, "accepted": true}')
            try:
                verdict = self._verdict(GradeRequest.parse(message))
            except Exception as exc:  # noqa: BLE001 - a broken exercise, a sandbox that cannot start...:
                # the client grades cold, and says what went wrong in grind's own words
                send(conn, json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}).encode())
                return
            if not self.worker.alive():  # the warm server itself failed: not the submission's verdict
                send(conn, json.dumps({"ok": False, "error": "the warm server stopped"}).encode())
                return
            self.jobs += 1
            conn.settimeout(30)
            from judge.models import verdict_to_wire

            send(conn, json.dumps({"ok": True, "verdict": verdict_to_wire(verdict)}).encode())
        finally:
            self.last = time.monotonic()
            self.job_lock.release()
        _release_memory()  # the client has its verdict: this is off its clock

    def _verdict(self, job: GradeRequest) -> Verdict:
        """Grade as the client would cold: its exercise folders and cache, our warm server. An
        exercise whose files no longer hash to the client's key (edited in between) is refused."""
        from judge import cache
        from judge.catalog import load_exercise
        from judge.executor import Submission
        from judge.pipeline import WarmExecutor
        from judge.worker.sandbox import Limits

        exercise = load_exercise(Path(job.exercise_dir), Path(job.solutions_root))
        raw = job.limits
        limits = None if raw is None else Limits(**{f.name: raw[f.name] for f in fields(Limits) if f.name in raw})
        with cache.rooted_at(Path(job.cache_root)):
            if cache.exercise_key(exercise) != job.exercise_key:
                raise ValueError("the exercise's files changed while it was being graded")
            return WarmExecutor(self.worker).verdict(
                Submission(exercise, job.exercise_key, job.source, job.filename, limits, job.speed))

    def _rehide(self, hidden: list[Path]) -> None:
        """Another set of hidden folders (another cache or solutions folder): bubblewrap fixes them
        when the server starts, so the server is restarted with them, never reused without them.
        The caller holds ``job_lock``: no job runs in the server being replaced."""
        from judge.worker.sandbox import WarmWorker

        self.worker.close()
        self.worker = WarmWorker(hidden)
        self.hidden = [str(h) for h in hidden]


def _release_memory() -> None:
    """Give a job's garbage back to the system. A daemon idles far longer than it works, and its
    heap kept the peak of the last job (the learner's result, the comparison's arrays) on top of
    numpy and the references it keeps: glibc's malloc_trim returns the free pages, which an
    idle daemon's memory (bench/bench.py, against `import torch`) is measured by."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim this way
        pass


def _serve(path: Path, hidden: list[Path]) -> None:
    daemon = Daemon(path, hidden, idle_limit())
    if daemon.bind():
        daemon.serve_forever()


def main(argv: list[str]) -> None:
    """``main(["--serve", SOCKET, "--hidden", JSON])``, started by ``spawn`` in a session of its own
    with no terminal: nothing grind or a terminal does reaches it but ``stop``."""
    path = Path(argv[argv.index("--serve") + 1])
    hidden = [Path(h) for h in json.loads(argv[argv.index("--hidden") + 1])] if "--hidden" in argv else []
    os.chdir("/")
    from judge.worker.process import default_sigchld

    default_sigchld()  # a client's ignored SIGCHLD is not the daemon's (see there)
    null = os.open(os.devnull, os.O_RDWR)
    log = os.open(path.with_suffix(".log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(log, 2)  # what went wrong, for `grind daemon status` to point at; truncated on each start
    try:
        _serve(path, hidden)
    except BaseException:  # noqa: BLE001 - the daemon's own failure: logged; clients grade cold
        import traceback

        traceback.print_exc()
    finally:
        os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
