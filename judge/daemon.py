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

This module never imports torch: the daemon process itself is small; torch lives in its warm
server, and a job's child is a fork of that.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import struct
import sys
import time
from dataclasses import asdict, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import judge
from judge.worker.settings import PASSTHROUGH_ENV, STARTUP_LIMIT_S

if TYPE_CHECKING:
    from judge.models import Exercise, Verdict
    from judge.worker.sandbox import Limits

IDLE_S = 15 * 60.0
CONNECT_S = 1.0  # a daemon that does not accept within this is unhealthy
HEADER_CAP = 1 << 20  # a short answer: hello (with the daemon's identity), accepted, busy, a mismatch
REQUEST_CAP = 64 << 20  # a job: the learner's source and where the exercise and the cache are
ANSWER_CAP = 64 << 20  # a verdict: checks, series, the learner's capped stdout and stderr
SECRET_CAP = 256  # the first frame of every request: the secret alone, read before anything bigger
BUSY_WAIT_S = 5.0  # another terminal's job runs: wait this long for it, then the client goes cold
CODE_CHECK_S = 5.0  # how often an idle daemon checks that its own code is still the one on disk
SANDBOX_ENV = ("GRIND_SANDBOX",)  # settings that change a child's isolation: part of the key


class Unavailable(Exception):
    """The daemon cannot grade this job; the caller grades it cold."""


def disabled() -> bool:
    """``GRIND_NO_DAEMON=1``: never start nor use a daemon."""
    return os.environ.get("GRIND_NO_DAEMON", "").strip() not in ("", "0")


def idle_limit() -> float:
    try:
        return max(0.1, float(os.environ.get("GRIND_DAEMON_IDLE_S", IDLE_S)))
    except ValueError:
        return IDLE_S


# ---------------------------------------------------------------------------------------------
# Where the socket lives, and what the daemon is keyed by


def _private_dir(path: Path) -> bool:
    """``path`` is a real folder (not a link), owned by this user, reachable by nobody else."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def _make_private(path: Path, create: bool = True) -> Path | None:
    if create:
        try:
            path.mkdir(mode=0o700, parents=False, exist_ok=True)
        except OSError:
            return None
    return path if _private_dir(path) else None


def runtime_dir(create: bool = True) -> Path | None:
    """The folder of this user's daemon sockets, or None when there is no safe one (with
    ``create`` False, only one that exists already: nothing is made).

    ``GRIND_RUNTIME_DIR`` (tests), else ``$XDG_RUNTIME_DIR/grind`` (platformdirs'
    user_runtime_dir), else ``<tmp>/grind-<uid>``, created 0700. A folder that exists but is a
    link, another user's, or open to others is not used (a planted folder could hold a socket
    that poses as the daemon): then there is no daemon, only cold runs."""
    override = os.environ.get("GRIND_RUNTIME_DIR")
    if override:  # created 0700 when missing (its parent must exist), as the default folders are;
        # made absolute here, since the daemon changes to / before it opens anything in it
        return _make_private(Path(override).expanduser().absolute(), create)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and _private_dir(Path(xdg)):
        import platformdirs

        found = _make_private(Path(platformdirs.user_runtime_dir("grind", appauthor=False)), create)
        if found is not None:
            return found
    import tempfile

    return _make_private(Path(tempfile.gettempdir()) / f"grind-{os.getuid()}", create)


def _code_fingerprint() -> str:
    """The judge package's files by name, size and mtime: an editable install changes its code
    without changing its version, and a daemon running yesterday's code must not grade today's.

    Every daemon-served ``grind run`` computes it (for the key it sends), so the folders are read
    with ``os.scandir`` rather than ``Path.rglob`` (3 ms of pathlib objects per run); the files,
    their order and the digest are rglob's ("*.py" entries, sorted by path parts; folders entered
    unless they are links)."""
    root = os.path.dirname(judge.__file__)
    found: list[tuple[str, ...]] = []

    def walk(folder: str, parts: tuple[str, ...]) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            if entry.name.endswith(".py"):
                found.append((*parts, entry.name))
            try:
                if entry.is_dir() and not entry.is_symlink():
                    walk(entry.path, (*parts, entry.name))
            except OSError:
                continue

    walk(root, ())
    digest = hashlib.sha256()
    for parts in sorted(found):
        try:
            info = os.stat(os.path.join(root, *parts))
        except OSError:
            continue
        digest.update(f"{'/'.join(parts)}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


def _interpreter() -> str:
    """The environment and the binary: ``python`` and ``python3`` of one venv are one interpreter."""
    return f"{sys.prefix}:{os.path.realpath(sys.executable)}"


def identity() -> dict[str, Any]:
    """What the daemon is keyed by. A daemon whose identity differs from the client's is replaced."""
    from judge.environment import torch_version

    return {
        "grind": judge.__version__,
        "code": _code_fingerprint(),
        "torch": torch_version() or "absent",
        "python": _interpreter(),
        "judge": str(Path(judge.__file__).parent),
        "env": {k: os.environ[k] for k in (*SANDBOX_ENV, *PASSTHROUGH_ENV) if k in os.environ},
    }


def key_of(ident: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:32]


# A unix socket's path must fit sun_path: 108 bytes on Linux with its terminating NUL (104 on macOS).
SUN_PATH_MAX = 107 if sys.platform.startswith("linux") else 103


def _runtime_problem() -> str:
    """Why ``runtime_dir()`` found no folder it may use, in the words a learner can act on."""
    import tempfile

    override = os.environ.get("GRIND_RUNTIME_DIR")
    candidate = (Path(override).expanduser().absolute() if override
                 else Path(tempfile.gettempdir()) / f"grind-{os.getuid()}")
    where = f"GRIND_RUNTIME_DIR={override}" if override else str(candidate)
    if not os.path.lexists(candidate):
        return (f"no private folder for its socket: {where} cannot be created"
                + (f" (its parent {candidate.parent} does not exist)" if not candidate.parent.is_dir() else ""))
    info = os.lstat(candidate)
    if stat.S_ISLNK(info.st_mode):
        return f"no private folder for its socket: {where} is a link"
    if not stat.S_ISDIR(info.st_mode):
        return f"no private folder for its socket: {where} is not a folder"
    if info.st_uid != os.getuid():
        return f"no private folder for its socket: {where} belongs to another user"
    return f"no private folder for its socket: {where} is open to other users (it must be mode 0700)"


def why_no_daemon() -> str | None:
    """None when a daemon can run (or runs) for this user and interpreter; otherwise why not, so
    that ``grind daemon status`` never promises a daemon that the next run cannot start."""
    if disabled():
        return "GRIND_NO_DAEMON is set"
    if not hasattr(socket, "AF_UNIX"):
        return "this platform has no unix sockets"
    folder = runtime_dir()
    if folder is None:
        return _runtime_problem()
    path = socket_path(folder)
    if path is not None and len(os.fsencode(path)) > SUN_PATH_MAX:
        return (f"its socket path {path} is {len(os.fsencode(path))} bytes, over the {SUN_PATH_MAX} a unix "
                "socket allows: set GRIND_RUNTIME_DIR to a shorter folder")
    return None


def socket_path(folder: Path | None = None) -> Path | None:
    """One socket per interpreter (two virtual environments keep a daemon each); the versions
    are checked on every request, so an upgrade in the same environment replaces the daemon."""
    folder = folder or runtime_dir()
    if folder is None:
        return None
    name = hashlib.sha256(f"{_interpreter()}\0{Path(judge.__file__).parent}".encode()).hexdigest()[:12]
    return folder / f"daemon-{name}.sock"


# ---------------------------------------------------------------------------------------------
# Framing: a 4-byte length, then JSON (or, for observations, safetensors bytes)


def _send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(struct.pack(">I", len(payload)) + payload)


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks, got = [], 0
    while got < size:
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            raise ConnectionError("the connection closed mid-message")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


class OverCap(ValueError):
    """A message longer than its cap: an answer too big to take (a submission's forged output
    can make one), not a dead daemon; a ValueError, so every caller that drops a garbled answer
    drops this one too, and the client's ConnectionError branch (the daemon is gone) never sees it."""


def _recv(sock: socket.socket, cap: int) -> bytes:
    (size,) = struct.unpack(">I", _recv_exact(sock, 4))
    if size > cap:
        raise OverCap(f"a message of {size} bytes is over the cap of {cap}")
    return _recv_exact(sock, size)


def _json(raw: bytes) -> dict[str, Any]:
    doc = json.loads(raw.decode("utf-8"))
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    return doc


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end (Linux SO_PEERCRED), or None where not known."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", raw)[1]


def peer_pid(sock: socket.socket) -> int | None:
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", raw)[0]


def same_user(sock: socket.socket) -> bool:
    uid = peer_uid(sock)
    return uid is None or uid == os.getuid()


# ---------------------------------------------------------------------------------------------
# Client side


def secret_path(path: Path) -> Path:
    """Where the daemon at ``path`` keeps the secret its clients must present: beside the socket,
    in the user's private runtime folder (0700), which a learner's child cannot read (bubblewrap
    hides the folder; Landlock never grants it)."""
    return path.with_name(path.stem + ".secret")


def _secret(path: Path) -> str:
    """The daemon's secret, or "" when there is none to read (then a request is refused, and the
    run grades cold). Peer uid is not enough: a learner's child may run as this very user (no
    bubblewrap, or root's child kept as root), and Landlock does not stop it connecting to a
    socket it can name; only grind's own processes can read this file."""
    try:
        fd = os.open(secret_path(path), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return ""
    try:
        return os.read(fd, 128).decode("ascii", "replace").strip()
    finally:
        os.close(fd)


def _connect(path: Path, timeout: float = CONNECT_S) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        if not same_user(sock):
            raise Unavailable("the daemon's socket belongs to another user")
    except BaseException:
        sock.close()
        raise
    return sock


def request(path: Path, message: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
    """One request, one JSON answer (hello, stop). Raises OSError, Unavailable or ValueError."""
    with _connect(path) as sock:
        sock.settimeout(timeout)
        _send(sock, _secret(path).encode())
        _send(sock, json.dumps(message).encode())
        return _json(_recv(sock, HEADER_CAP))


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
    # This very judge package, whatever the folder grind runs in: `python -m judge.daemon` put
    # the current folder first on sys.path, so from a clone beside a non-editable install the
    # daemon imported the clone's judge, never matched the client's key, and every run replaced
    # it (and graded cold). The daemon starts in / with this package's parent first on its path.
    package_parent = str(Path(judge.__file__).resolve().parent.parent)
    argv = [sys.executable, "-c", f"import sys; sys.path.insert(0, {package_parent!r}); "
            "from judge.daemon import main; main(sys.argv[1:])",
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


class DaemonWorker:
    """The client's side: ``judge.grade.grade`` asks it for the whole verdict (``verdict``), and
    grades cold itself (the very same code as without a daemon) whenever it answers None. When
    there is no usable daemon it starts one for the next run."""

    def __init__(self, hidden: list[Path]) -> None:
        self.hidden = list(hidden)
        self.served = 0  # verdicts the daemon gave (the rest were graded cold)
        self._spawned = False
        # Called once the daemon has accepted a job, before its answer is read: work the caller
        # needs next (grind run loads its renderer) done while the daemon grades, off the clock.
        self.meanwhile: Callable[[], None] | None = None

    def verdict(self, exercise: Exercise, key: str, source: str, filename: str, limits: Limits | None,
                speed: bool) -> Verdict | None:
        """The daemon's verdict on a submission that passed the static checks, or None: then the
        caller grades cold. The daemon loads the exercise from the same folders, checks that its
        files hash to the client's ``key``, and grades with the client's cache."""
        from judge.cache import cache_root
        from judge.models import verdict_from_wire

        message = {"op": "grade", "exercise_dir": str(exercise.exercise_dir.absolute()),
                   "solutions_root": str(exercise.solution_dir.parent.absolute()), "exercise_key": key,
                   "cache_root": str(cache_root().absolute()), "source": source, "filename": filename,
                   "limits": asdict(limits) if limits is not None else None, "speed": speed}
        # The daemon's own limits end the learner's job; the rest (a reference to compute, pairs
        # of mistakes to run for a diagnosis) is trusted code, given room before the client
        # decides the daemon is hung.
        wall = limits.wall_s if limits is not None else exercise.time_limit
        head = self._ask(message, STARTUP_LIMIT_S + wall * 10 + 120)
        if head is None:
            return None
        try:
            verdict = verdict_from_wire(head["verdict"])
        except (KeyError, TypeError, ValueError):
            return None
        self.served += 1
        return verdict

    def _start(self) -> None:
        if not self._spawned:
            self._spawned = True
            spawn(self.hidden)

    def _replace(self, path: Path, sock_info: os.stat_result) -> None:
        """A daemon we cannot use (gone, or another version): take its socket away, start a fresh one."""
        _retire(path, sock_info)
        self._start()

    def _ask(self, message: dict[str, Any], answer_s: float) -> dict[str, Any] | None:
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
            sock = _connect(path)
        except (ConnectionRefusedError, FileNotFoundError):  # a stale socket: the daemon is gone
            self._replace(path, sock_info)
            return None
        except (OSError, Unavailable):
            return None
        with sock:
            try:
                # A healthy daemon accepts the job at once (or says it is busy within BUSY_WAIT_S);
                # one that does not is hung, and is replaced rather than waited for.
                sock.settimeout(BUSY_WAIT_S + 10)
                try:
                    _send(sock, _secret(path).encode())
                    _send(sock, json.dumps({**message, "key": key_of(identity()),
                                            "hidden": [str(h) for h in self.hidden]}).encode())
                except BrokenPipeError:
                    # Refused after the secret's frame (a secret read just as a new daemon replaced
                    # it) closes the socket before the job is sent: that daemon is alive, so this
                    # run is cold and it is left alone. Anything else is a dead daemon, below.
                    if _json(_recv(sock, HEADER_CAP)).get("unauthorized"):
                        return None
                    raise
                head = _json(_recv(sock, HEADER_CAP))
                if head.get("mismatch"):
                    sock.close()
                    self._replace(path, sock_info)
                    return None
                if not head.get("accepted"):
                    return None  # busy: cold this time
                if self.meanwhile is not None:
                    try:
                        self.meanwhile()
                    except Exception:  # noqa: BLE001 - only a head start: the caller does it again later
                        pass
                sock.settimeout(answer_s)
                head = _json(_recv(sock, ANSWER_CAP))
                return head if head.get("ok") else None  # not ok: it could not grade this one, cold
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


def worker_for(hidden: Callable[[], list[Path]], opt_out: bool = False) -> DaemonWorker | None:
    """The worker ``grind run`` grades in: the daemon's, or None (cold) when opted out or when no
    daemon can start. ``hidden`` is called only after ``why_no_daemon`` has made the runtime
    folder, so the folders hidden from the child include it from the first run on."""
    if opt_out or why_no_daemon() is not None:
        return None
    return DaemonWorker(hidden())


# ---------------------------------------------------------------------------------------------
# Server side


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
                    with _connect(self.path, 0.5):
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
        return _code_fingerprint() != self.ident["code"]

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
                if _secret(self.path) == self.secret:
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
                if not secrets.compare_digest(_recv(conn, SECRET_CAP), self.secret.encode()):
                    _send(conn, b'{"ok": false, "unauthorized": true}')
                    return
                message = _json(_recv(conn, REQUEST_CAP))
                op = message.get("op")
                if op == "hello":
                    _send(conn, json.dumps(self.hello()).encode())
                elif op == "stop":
                    _send(conn, b'{"ok": true}')
                    self.stopping.set()
                elif op == "grade":
                    self.grade(conn, message)
            except (OSError, ValueError, KeyError, TypeError, struct.error):
                pass

    def grade(self, conn: socket.socket, message: dict[str, Any]) -> None:
        if message.get("key") != self.key:
            _send(conn, json.dumps({"ok": False, "mismatch": True}).encode())
            self.stopping.set()  # the client starts the daemon it needs
            return
        self.last = time.monotonic()  # only jobs count as use: a status probe does not keep it alive
        # The lock first, then the hidden folders: a job for other folders that arrives while
        # another terminal's job runs is told "busy" within BUSY_WAIT_S like any other. Waiting
        # for the lock inside _rehide kept it unanswered past the client's patience, and the
        # client then replaced a healthy daemon.
        if not self.job_lock.acquire(timeout=BUSY_WAIT_S):
            _send(conn, b'{"ok": false, "busy": true}')
            return
        try:
            if [str(h) for h in message.get("hidden", [])] != self.hidden:
                self._rehide([Path(h) for h in message["hidden"]])
            _send(conn, b'{"ok": true, "accepted": true}')
            try:
                verdict = self._verdict(message)
            except Exception as exc:  # noqa: BLE001 - a broken exercise, a sandbox that cannot start...:
                # the client grades cold, and says what went wrong in grind's own words
                _send(conn, json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}).encode())
                return
            if not self.worker.alive():  # the warm server itself failed: not the submission's verdict
                _send(conn, json.dumps({"ok": False, "error": "the warm server stopped"}).encode())
                return
            self.jobs += 1
            conn.settimeout(30)
            from judge.models import verdict_to_wire

            _send(conn, json.dumps({"ok": True, "verdict": verdict_to_wire(verdict)}).encode())
        finally:
            self.last = time.monotonic()
            self.job_lock.release()
        _release_memory()  # the client has its verdict: this is off its clock

    def _verdict(self, message: dict[str, Any]) -> Verdict:
        """Grade as the client would cold: its exercise folders and cache, our warm server. An
        exercise whose files no longer hash to the client's key (edited in between) is refused."""
        from judge import cache
        from judge.catalog import load_exercise
        from judge.grade import grade_source
        from judge.worker.sandbox import Limits

        exercise = load_exercise(Path(message["exercise_dir"]), Path(message["solutions_root"]))
        raw = message.get("limits")
        limits = None if raw is None else Limits(**{f.name: raw[f.name] for f in fields(Limits) if f.name in raw})
        source, filename = message["source"], message["filename"]
        if not isinstance(source, str) or not isinstance(filename, str):
            raise ValueError("the source and its file name must be text")
        with cache.rooted_at(Path(message["cache_root"])):
            if cache.exercise_key(exercise) != message["exercise_key"]:
                raise ValueError("the exercise's files changed while it was being graded")
            return grade_source(exercise, message["exercise_key"], source, filename, limits, self.worker,
                                bool(message.get("speed")))

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
