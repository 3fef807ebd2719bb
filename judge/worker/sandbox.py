"""The parent side of the worker: start an isolated child, enforce limits, read back data.

Nothing here imports torch, and nothing the child wrote is executed or unpickled. Every byte that
comes back from the child's folder is hostile: files are opened only if they are regular files
(never following a link, never blocking on a FIFO), their size is capped before reading, and
every parse error becomes a ``crashed`` outcome naming what was wrong (see ``protocol``). Control
messages ("ready", "case ...") travel over a pipe, and every deadline runs on grind's clock.

Which isolation layers wrap the child is decided in ``judge.worker.isolation``.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import queue
import secrets
import signal
import stat
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.errors import JudgeError
from judge.worker import disk, protocol
from judge.worker.isolation import (  # noqa: F401 - re-exported: tests and the CLI ask the sandbox
    RUNNER,
    Isolation,
    PidsCgroup,
    can_bound_processes,
    command,
    drop_user,
    confinement,
    forget,
    isolation,
    limit_child,
    rlimit_table,
    scrubbed_env,
    spawn,
    sweep_orphans,
)
from judge.worker.protocol import ProtocolError
from judge.worker.settings import STARTUP_LIMIT_S  # noqa: F401 - re-exported

if TYPE_CHECKING:
    import numpy as np

RESULT_CAP = 32 << 20
OBSERVATIONS_CAP = 512 << 20
TRACE_CAP = 64 << 10
REPLY_CAP = 4 << 20
CONFINE_FAILED = 71  # the runner's exit code when the kernel refused to confine it


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
    result: protocol.Result | None = None
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


# ---------------------------------------------------------------------------------------------
# Reading what the child left, as hostile bytes


def read_regular(dir_fd: int, name: str, cap: int) -> bytes:
    """The bytes of ``name`` inside the folder ``dir_fd``, only if it is a regular file of at most
    ``cap`` bytes. A symlink (to /dev/zero, say) fails to open, a FIFO opens without blocking and
    is refused, and a file that grows while we read is cut off at the cap."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ProtocolError(f"{name} is not a regular file")
        if info.st_size > cap:
            raise ProtocolError(f"{name} is larger than {cap >> 20} MB")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:
                raise ProtocolError(f"{name} is larger than {cap >> 20} MB")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _open_dir(path: str) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


def load_observations(raw: bytes) -> dict[str, np.ndarray]:
    """safetensors bytes -> numbers, refusing anything else (the parent's numpy import is here,
    after the child has exited, so the two never share the peak memory)."""
    try:
        from safetensors.numpy import load

        arrays = load(raw)
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own error types on garbage
        raise ProtocolError(f"the observations are not valid safetensors ({type(exc).__name__})") from None
    for name, array in arrays.items():
        if array.dtype.kind not in "biuf":
            raise ProtocolError(f"observation {name[:80]!r} holds {array.dtype} data, not numbers")
    return arrays


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# How a run whose child never reached "ready" begins its message: grade() says it as grind's.
STARTUP_FAILED = "the worker did not start within"


def _conclude(outcome: RunOutcome, workdir: str, token: str, limits: Limits, timed_out: bool,
              started: bool = True) -> RunOutcome:
    """Shared by cold and warm runs: the timeout trace, a timeout verdict, or the checked result."""
    outcome.isolation = isolation().level
    try:
        dir_fd = _open_dir(workdir)
    except OSError:
        outcome.status, outcome.message = "crashed", "the run's folder was replaced; nothing in it is trusted"
        return outcome
    try:
        try:
            outcome.timeout_trace = read_regular(dir_fd, "timeout_trace.txt", TRACE_CAP).decode("utf-8", "replace")
        except (OSError, ProtocolError):
            pass
        if not started:
            outcome.status = "crashed"
            outcome.message = (f"{STARTUP_FAILED} {STARTUP_LIMIT_S:g} s (importing torch and "
                               "loading the checks); none of the submission had run yet")
            return outcome
        cpu_killed = outcome.returncode == -signal.SIGXCPU and not timed_out
        if timed_out or cpu_killed:
            outcome.status = "timeout"
            outcome.message = (f"the CPU-time limit of {limits.cpu_limit} s was exceeded" if cpu_killed
                               else f"the time limit of {limits.wall_s:g} s was exceeded")
            return outcome
        _read_result(outcome, dir_fd, token)
        return outcome
    finally:
        os.close(dir_fd)


def _read_result(outcome: RunOutcome, dir_fd: int, token: str) -> None:
    """Accept the child's result only if it is one well-formed document carrying this run's
    token and the hash of the observations file it claims."""
    code = outcome.returncode

    def crashed(message: str) -> None:
        outcome.status = "crashed"
        outcome.message = message

    if code is not None and code < 0:
        name = _signal_name(code)
        detail = {"SIGSEGV": "a segmentation fault", "SIGABRT": "an abort", "SIGXFSZ": "the file-size limit",
                  "SIGKILL": "a kill: did the submission signal its own process?", "SIGBUS": "a bus error"}
        return crashed(f"the worker was killed by {name} ({detail.get(name, 'a signal')}) before finishing")
    try:
        raw = read_regular(dir_fd, "result.json", RESULT_CAP)
    except FileNotFoundError:
        if "MemoryError" in outcome.stderr:
            return crashed("the submission ran out of memory")
        return crashed(f"the worker exited (code {code}) without producing a result: did the submission call exit?")
    except (OSError, ProtocolError) as exc:
        return crashed(f"the worker's result could not be read ({exc}); it is not trusted")
    try:
        result = protocol.parse_result(raw)
        if not secrets.compare_digest(result.token.encode("utf-8", "backslashreplace"), token.encode()):
            raise ProtocolError("it does not carry this run's token")
        obs_raw = read_regular(dir_fd, "observations.safetensors", OBSERVATIONS_CAP)
        if result.observations_sha256 != hashlib.sha256(obs_raw).hexdigest():
            raise ProtocolError("the observations do not match their hash")
        observations = load_observations(obs_raw)
    except (ProtocolError, OSError) as exc:
        return crashed(f"the worker's result was malformed or forged ({exc}); it is not trusted")
    if code != 0:
        return crashed(f"the worker exited with code {code} after writing its result")
    outcome.result, outcome.observations = result, observations


def _over_disk(outcome: RunOutcome, over: bool, limits: Limits) -> RunOutcome:
    """A run that wrote more than its disk cap is that, whatever else it left (it was killed)."""
    if over:
        outcome.status, outcome.message = "crashed", disk.limit_message(limits.disk_mb << 20)
        outcome.result, outcome.observations = None, {}
    return outcome


# ---------------------------------------------------------------------------------------------
# Cold runs: one fresh child per job


class _CappedReader(threading.Thread):
    """Drains a pipe so the child never blocks on it, keeping only the first ``cap`` bytes."""

    def __init__(self, stream: Any, cap: int) -> None:
        super().__init__(daemon=True)
        self.stream, self.cap = stream, cap
        self.chunks: list[bytes] = []
        self.kept = 0
        self.total = 0

    def run(self) -> None:
        while True:
            chunk = self.stream.read1(65536) if hasattr(self.stream, "read1") else self.stream.read(65536)
            if not chunk:
                break
            self.total += len(chunk)
            if self.kept < self.cap:
                piece = chunk[: self.cap - self.kept]
                self.chunks.append(piece)
                self.kept += len(piece)

    def text(self) -> str:
        body = b"".join(self.chunks).decode("utf-8", "replace")
        if self.total > self.kept:
            body += f"\n[... output truncated: {self.total - self.kept} more bytes not shown]"
        return body


class _ControlReader(threading.Thread):
    """The control pipe: "ready" (stamped with grind's clock) and "case ..." lines.

    The runner writes "ready" before any learner code is loaded, so a submission can neither
    suppress nor delay it; it can write lines of its own, so reads are bounded and at most one
    short partial line is kept: a newline-free flood must not grow the parent's memory."""

    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.ready_at: float | None = None
        self.last_case: str | None = None

    def run(self) -> None:
        pending = b""
        with os.fdopen(self.fd, "rb", buffering=0) as stream:
            while True:
                chunk = stream.read(65536)
                if not chunk:
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                pending = pending[-512:]
                for raw in lines:
                    line = raw[:512].decode("utf-8", "replace")
                    if line.startswith("ready") and self.ready_at is None:
                        self.ready_at = time.monotonic()
                    elif line.startswith("case "):
                        self.last_case = line[5:].strip()[:200]


def _witnessed(fd: int, printed: int) -> dict[str, int | None] | None:
    """The waiter's figures from its witness pipe (it wrote them, after reaping the whole run,
    and is gone now), less what grind itself drained as the run's output; None when it said
    nothing (a run killed with its waiter, or none was asked for)."""
    if fd < 0:
        return None
    try:
        os.set_blocking(fd, False)
        raw = os.read(fd, 4096)
    except OSError:
        return None
    return less_printed(protocol.parse_witness(_json_or_none(raw)), printed)


# At most this much of what a run printed is taken off its writes. Printing is not writing a file,
# so a learner's debug output must not look like a second checkpoint; but bytes can reach a pipe
# without write(2) (vmsplice, splice), so an unbounded allowance would let a run print its way
# back under its count. A megabyte is far more than anyone reads, and far less than one checkpoint
# of a witnessed case (rank0-checkpoint's is 4 MB).
PRINT_ALLOWANCE = 1 << 20


def less_printed(figures: dict[str, int | None] | None, printed: int) -> dict[str, int | None] | None:
    """The witness's figures with what the run printed (grind drained it) taken off its writes,
    up to PRINT_ALLOWANCE."""
    if figures is None or figures.get("writes") is None:
        return figures
    return dict(figures, writes=max(int(figures["writes"] or 0) - min(printed, PRINT_ALLOWANCE), 0))


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


class _JobStreams(threading.Thread):
    """A warm job's stdout and stderr, read by grind itself through two FIFOs in the job's folder.

    The warm server used to drain them and send them back in its reply; a fork of the server
    (the next job) then held them in freed memory, where a submission scanning /proc/self/mem
    found a classmate's prints. A FIFO is a pipe with a name, which is how grind hands a pipe to
    a server already running: the job's process opens the writing end (runner.take_streams) and
    the bytes go from it to grind, never through the server. grind holds a writing end of its
    own until the server has answered, so the reader sees no end of file before the job has
    opened its end. The server answers after the job said "done" (its output flushed, so already
    in the FIFOs) or after every process of it is gone: what is left is read without waiting
    for a dying process to close its end.
    The output is capped as in a cold run (the rest is read and dropped)."""

    GRACE_S = 5.0  # after the answer: a bound on reading a flood that is being killed, not a wait

    def __init__(self, workdir: str, iso: Isolation, cap: int) -> None:
        super().__init__(daemon=True, name="grind-job-streams")
        self.paths = [os.path.join(workdir, ".stdout.fifo"), os.path.join(workdir, ".stderr.fifo")]
        self.cap = cap
        self.kept: list[list[bytes]] = [[], []]
        self.totals = [0, 0]
        self.readers: list[int] = []
        self.keepers: list[int] = []
        self.answered = threading.Event()
        # Wakes the reader the moment the server has answered: waiting out a select timeout
        # there instead put up to 50 ms (25 on average) on every warm verdict.
        self._wake_r, self._wake_w = os.pipe()
        for path in self.paths:
            os.mkfifo(path, 0o600)
            if iso.drop_to is not None:
                os.chown(path, iso.drop_to, iso.drop_to)
            self.readers.append(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC))
            self.keepers.append(os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC))

    def run(self) -> None:
        import selectors

        selector = selectors.DefaultSelector()
        for index, fd in enumerate(self.readers):
            selector.register(fd, selectors.EVENT_READ, index)
        selector.register(self._wake_r, selectors.EVENT_READ, None)
        streams = len(self.readers)
        end: float | None = None
        try:
            while streams:
                if end is None and self.answered.is_set():
                    end = time.monotonic() + self.GRACE_S
                    for fd in self.keepers:
                        os.close(fd)
                    self.keepers = []
                    selector.unregister(self._wake_r)
                if end is not None and time.monotonic() >= end:
                    break
                events = selector.select(0.5 if end is None else 0)
                if end is not None and not events:
                    break  # answered, and nothing left in either FIFO
                for key, _ in events:
                    if key.data is None:  # answered: the loop's head closes our writing ends
                        continue
                    try:
                        chunk = os.read(key.fd, 65536)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        selector.unregister(key.fd)
                        streams -= 1
                        continue
                    index = key.data
                    room = self.cap - sum(len(c) for c in self.kept[index])
                    if room > 0:
                        self.kept[index].append(chunk[:room])
                    self.totals[index] += len(chunk)
        finally:
            selector.close()

    def texts(self) -> tuple[str, str]:
        """What the job printed, once the server has answered (a process still writing while it
        is killed cannot stall grind past the grace)."""
        self._answer()
        self.join(self.GRACE_S + 2)
        shown = []
        for index in (0, 1):
            body = b"".join(self.kept[index]).decode("utf-8", "replace")
            if self.totals[index] > self.cap:
                body += f"\n[... output truncated: {self.totals[index] - self.cap} more bytes not shown]"
            shown.append(body)
        return shown[0], shown[1]

    def close(self) -> None:
        """Stop reading and close every end grind holds (the folder, FIFOs included, goes next)."""
        self._answer()
        if self.is_alive():
            self.join(self.GRACE_S + 2)
        for fd in self.keepers + self.readers + [self._wake_r, self._wake_w]:
            try:
                os.close(fd)
            except OSError:
                pass
        self.keepers, self.readers = [], []
        self._wake_r = self._wake_w = -1

    def _answer(self) -> None:
        if not self.answered.is_set():
            self.answered.set()
            try:
                os.write(self._wake_w, b"!")
            except OSError:  # closed already
                pass


def remove_tree(path: str) -> None:
    """Delete a run's folder whatever the submission left in it, and never raise.

    The submission owns the folder's contents: it may lock parts of it (``chmod 0`` on a
    subfolder would make a plain rmtree leave it behind for good), nest folders thousands deep
    (os.walk and, before Python 3.12, shutil.rmtree recurse: a RecursionError there was grind's
    internal error, with the run's files left on disk), and, while grind removes the folder, a
    process of the run's user that outlived it may move folders around in it. So the walk is
    iterative, relative to open folders (no path grows past PATH_MAX), and never climbs with
    ``..`` (see _remove_tree_iteratively). There is no ``rm -rf`` fallback any more: what the
    walk cannot remove (an immutable file, a mount point) ``rm`` cannot either, and a second
    walker would be a second thing to keep from escaping."""
    disk.unmount(path)  # a run folder on a tmpfs of its own: its contents go with the mount
    try:
        _remove_tree_iteratively(path)
    except Exception:  # noqa: BLE001 - cleaning up must not turn a verdict into an error
        pass
    release_folder(path)  # a cold run's folder was held until now (see hold_folder)


_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
_CHECKPOINT = 64  # _remove_tree_iteratively keeps one descriptor per this many levels, and one chunk's


def _key(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _open_folder(name: str, parent: int | None, key: tuple[int, int] | None = None) -> int:
    """Open the folder ``name`` (never a link, never another folder than ``key`` when given) and
    make it ours to list and empty: the submission may have locked it (chmod 0, or 0o500 so that
    nothing in it can be removed). A locked folder is unlocked through an O_PATH descriptor of it
    (``/proc/self/fd``): a chmod by name would follow a link swapped in for it meanwhile."""
    try:
        fd = os.open(name, _DIRECTORY, dir_fd=parent)
    except PermissionError:
        pinned = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        try:
            info = os.fstat(pinned)
            if not stat.S_ISDIR(info.st_mode) or (key is not None and _key(info) != key):
                raise FileNotFoundError(name)  # not the folder seen a moment ago
            os.chmod(f"/proc/self/fd/{pinned}", 0o700)
            # Through the descriptor's own magic link (O_NOFOLLOW would refuse it: it is a link),
            # which leads to the pinned folder whatever its name holds now; checked again below.
            fd = os.open(f"/proc/self/fd/{pinned}", _DIRECTORY & ~os.O_NOFOLLOW)
        finally:
            os.close(pinned)
    try:
        info = os.fstat(fd)
        if key is not None and _key(info) != key:
            raise FileNotFoundError(name)  # moved away and replaced meanwhile: not the folder we saw
        os.fchmod(fd, 0o700)
    except FileNotFoundError:
        os.close(fd)
        raise
    except OSError:
        pass
    return fd


def _remove_tree_iteratively(path: str) -> None:
    """Empty and remove ``path`` without ever leaving it.

    The walk used to climb back with ``open("..")``: a folder moved elsewhere while the walk was
    inside it (a race a surviving process of the run's user can run, with the sweep as root) made
    it climb out of the tree and empty the folders above it, files outside every run folder and
    grind's own live run folder among them. Now every level is reached from the one above it by
    name and left by going back to the open descriptor of the one above: no ``..``, no link
    followed (O_NOFOLLOW, dir_fd), no other file system entered (a mount point stays). A folder
    moved away while the walk is in it is emptied wherever it went (what it holds is the mover's
    anyway), never what is above the tree. To stay iterative however deep the tree is without
    one descriptor per level, only every _CHECKPOINT-th level and the current chunk keep theirs;
    a level whose descriptor was closed is re-opened by name from the one above it, each step
    checked against the (st_dev, st_ino) seen on the way down (see _reopen)."""
    try:
        top = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(top.st_mode):
        os.unlink(path)
        return
    root = _open_folder(path, None, _key(top))
    device = top.st_dev
    # one entry per level from ``path`` down: [name, (st_dev, st_ino), descriptor or None]
    levels: list[list[Any]] = [[path, _key(top), root]]
    stuck: set[tuple[int, int]] = set()  # folders that could not be opened or removed: not again
    try:
        while levels:
            fd = levels[-1][2]
            below = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            key = _key(entry.stat(follow_symlinks=False))
                            if key not in stuck and key[0] == device:
                                below = (entry.name, key)
                                break
                        else:
                            os.unlink(entry.name, dir_fd=fd)
                    except OSError:
                        pass
            if below is not None:
                try:
                    child = _open_folder(below[0], fd, below[1])
                except OSError:
                    stuck.add(below[1])
                    continue
                levels.append([below[0], below[1], child])
                old = len(levels) - 1 - _CHECKPOINT
                if old > 0 and old % _CHECKPOINT and levels[old][2] is not None:
                    os.close(levels[old][2])  # far above, and no checkpoint: re-opened if needed
                    levels[old][2] = None
                continue
            if len(levels) == 1:
                break
            name, key, fd = levels.pop()
            os.close(fd)
            if levels[-1][2] is None and not _reopen(levels, stuck):
                continue
            parent = levels[-1][2]
            try:
                if _key(os.stat(name, dir_fd=parent, follow_symlinks=False)) != key:
                    continue  # moved away meanwhile: what has its name now is listed anew
                os.rmdir(name, dir_fd=parent)
            except FileNotFoundError:
                pass
            except OSError:
                stuck.add(key)
    finally:
        for level in levels:
            if level[2] is not None:
                os.close(level[2])
    os.rmdir(path)


def _reopen(levels: list[list[Any]], stuck: set[tuple[int, int]]) -> bool:
    """Re-open the levels whose descriptors _remove_tree_iteratively closed, down from the
    nearest one still open, each checked against what was seen on the way down. A level that is
    not where it was (moved by someone else meanwhile) ends its branch: the levels below it are
    dropped and the walk goes on from the level still in place (if the moved folder is still in
    the tree, the walk finds it at its new place; it is not marked stuck, which would leave it)."""
    start = max(i for i, level in enumerate(levels) if level[2] is not None)
    for i in range(start + 1, len(levels)):
        try:
            levels[i][2] = _open_folder(levels[i][0], levels[i - 1][2], levels[i][1])
        except OSError as error:
            if not isinstance(error, (FileNotFoundError, NotADirectoryError)) and error.errno != errno.ELOOP:
                stuck.add(levels[i][1])  # still there but not to be opened
            for level in levels[i + 1:]:
                if level[2] is not None:
                    os.close(level[2])
            del levels[i:]
            return False
    return True


# ---------------------------------------------------------------------------------------------
# A warm server's folder outlives a grader killed with SIGKILL: the next grind run removes it.

LOCK_NAME = ".grind-lock"
STALE_AFTER_S = 10.0  # a folder this young may be a grind that has made it and not locked it yet
_HELD: dict[str, int] = {}  # a warm root -> grind's locked descriptor of its lock file
_SWEPT = False


def hold_folder(folder: str, lock_file: bool = True) -> None:
    """Mark ``folder`` as in use for as long as this process lives: an exclusive flock on a file
    in it (or, with ``lock_file`` False, on the folder itself), released by the kernel however
    grind ends (SIGKILL included). The descriptor is close-on-exec and Popen closes the rest, so
    no child keeps the folder "in use" after grind."""
    import fcntl

    if lock_file:
        fd = os.open(os.path.join(folder, LOCK_NAME), os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600)
    else:
        fd = _open_dir(folder)
    fcntl.flock(fd, fcntl.LOCK_EX)
    _HELD[folder] = fd


def release_folder(folder: str) -> None:
    fd = _HELD.pop(folder, None)
    if fd is not None:
        os.close(fd)


def sweep_warm_folders(parent: str | None = None) -> list[str]:
    """Remove every ``grind-warm-*`` folder of this user (or of the user its children run as)
    whose grind is gone, and return them.

    ``grind grade`` or watch killed with SIGKILL cannot remove its warm server's folder (with
    the jobs' files in it, a classmate's among them); every grind run looks once for such
    folders and removes them. A folder is gone when nobody holds its lock (hold_folder): the
    lock dies with the process, so a folder in use is never taken, however long its grader runs.
    Folders without a lock file (made by a grind from before the lock) are left alone. A cold
    run's ``grind-run-*`` folder is swept too (a tmpfs as root, a plain folder otherwise): its
    lock is the folder itself, taken as soon as it is made, and a folder younger than
    STALE_AFTER_S is never taken.

    Folders owned by the user the children run as (``nobody`` under a root grind) are taken too:
    a root grind chowns its run folders to that user, so they are grind's. Such a folder, or one
    its owner made to look like grind's, can hold anything that user may move into it, and a
    process of that user may move folders around while it is removed; that is safe only because
    remove_tree never leaves the folder it was given (no ``..``, no link followed, no other file
    system): the worst such a folder can do is have its owner's own files removed."""
    import fcntl

    parent = parent or tempfile.gettempdir()
    owners = {os.getuid()}
    drop_to = isolation().drop_to
    if drop_to is not None:
        owners.add(drop_to)
    swept = []
    try:
        entries = [entry for entry in os.scandir(parent) if entry.name.startswith(("grind-warm-", "grind-run-"))]
    except OSError:
        return swept
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid not in owners:
                continue
            folder_fd = _open_dir(entry.path)
        except OSError:
            continue
        try:
            lock = (os.dup(folder_fd) if entry.name.startswith("grind-run-") else
                    os.open(LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder_fd))
        except OSError:
            os.close(folder_fd)
            continue  # no lock file: not ours to judge
        try:
            info = os.fstat(lock)
            if stat.S_ISLNK(info.st_mode) or time.time() - info.st_ctime < STALE_AFTER_S:
                continue
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # held: its grind is alive
        else:
            remove_tree(entry.path)
            swept.append(entry.path)
        finally:
            os.close(lock)
            os.close(folder_fd)
    return swept


def _sweep_once() -> None:
    global _SWEPT
    if not _SWEPT:
        _SWEPT = True
        try:
            sweep_warm_folders()
        except Exception:  # noqa: BLE001 - housekeeping must never cost a verdict
            pass


def _make_workdir(iso: Isolation, parent: str | None = None, prefix: str = "grind-run-",
                  disk_mb: int | None = None) -> str:
    if parent is None:
        _sweep_once()  # the first run folder of this grind: what a killed grader left goes first
    workdir = tempfile.mkdtemp(prefix=prefix, dir=parent)
    if disk_mb is not None:
        disk.mount_tmpfs(workdir, disk_mb << 20, iso.drop_to)
    if prefix == "grind-run-" and parent is None:
        # A cold run's folder (on a tmpfs of its own as root, memory until unmounted; a plain
        # folder on a laptop, with whatever the run wrote in it) is held like a warm server's
        # folder, by the folder itself (no lock file in the learner's cwd), so that a run killed
        # with grind is swept by the next one.
        hold_folder(workdir, lock_file=False)
    os.chmod(workdir, 0o700)
    if iso.drop_to is not None:
        os.chown(workdir, iso.drop_to, iso.drop_to)
    return workdir


def _stage_file(workdir: str, name: str, text: str, iso: Isolation) -> str:
    path = os.path.join(workdir, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    if iso.drop_to is not None:
        os.chown(path, iso.drop_to, iso.drop_to)
    return path


def stage_job(job: dict[str, Any], workdir: str, iso: Isolation) -> dict[str, Any]:
    """The job as the child gets it: every subject's source (the learner's, the reference's, the
    oracle's) travels as a file of the run's folder, read and deleted by the process that runs
    it, never as text in the job.

    Why: a warm server reads each job and forks it, and a fork is a copy of the server's memory,
    freed memory included. With sources in the job, a submission scanning /proc/self/mem found
    the classmate graded before it, or the reference computed in the same server, and passed
    with it. The server now holds paths only. (A learner's job never holds the reference at all:
    its speed is compared with the reference's time kept in the cache; see runner.time_speed.)"""
    staged = dict(job)
    subjects = []
    for index, spec in enumerate(job.get("subjects", [])):
        if spec.get("kind") == "file" and isinstance(spec.get("source"), str):
            text = spec["source"]
            spec = {key: value for key, value in spec.items() if key != "source"}
            spec["source_file"] = _stage_file(workdir, f"subject-{index}.py", text, iso)
            spec["builds_optimizer"] = bool(protocol.BUILDS_OPTIMIZER.search(text))
        subjects.append(spec)
    if "subjects" in job:
        staged["subjects"] = subjects
    return staged


def _confine_failed(outcome: RunOutcome) -> None:
    if outcome.returncode == CONFINE_FAILED and "grind-confine:" in outcome.stderr:
        why = outcome.stderr.split("grind-confine:", 1)[1].strip().splitlines()[0]
        raise JudgeError(f"the sandbox could not be set up ({why}); set GRIND_SANDBOX=limits-only to run "
                         "without it (see grind doctor)")


def run_job(job: dict[str, Any], limits: Limits, hidden: list[Path] | None = None) -> RunOutcome:
    """Run one job in a fresh, limited child and return what it observed.

    ``hidden`` folders (the solutions, the cache, a class folder) are out of the child's reach
    where the level allows (bubblewrap hides them, Landlock never grants them). The temp
    directory (the child's cwd and HOME) is removed whatever happens, and every process the run
    started is killed.
    """
    iso = isolation()
    workdir = _make_workdir(iso, disk_mb=limits.disk_mb)
    token = secrets.token_hex(16)
    control_r, control_w = os.pipe()
    # A witnessed exercise: the waiter in front of the run reports its traffic and writes on a
    # pipe of its own, which the worker closes before any learner code exists (witness.py).
    witness_r, witness_w = os.pipe() if job.get("witness") else (-1, -1)
    confine = confinement(hidden or [], workdir) if iso.confines else None
    # Inside bubblewrap's PID namespace the child's parent is the namespace's init, which it
    # cannot kill; the waiter that shields (and reaps for) grind is only needed without it.
    job = dict(stage_job(job, workdir, iso), token=token, out_dir=workdir, control_fd=control_w,
               time_limit=limits.wall_s, shield=not iso.bwrap, confine=confine,
               **({"witness_fd": witness_w} if witness_w >= 0 else {}))
    macos = confinement(hidden or [], workdir) if iso.macos and not iso.bwrap else None
    cgroup = PidsCgroup.create(limits.processes)
    proc = None
    try:
        try:
            proc = spawn(
                command(iso, workdir, hidden or [], confine=macos),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=workdir, env=scrubbed_env(workdir), start_new_session=True,
                pass_fds=(control_w,) + ((witness_w,) if witness_w >= 0 else ()),
                preexec_fn=lambda: limit_child(limits, iso.drop_to, cgroup),
            )
        finally:
            os.close(control_w)
            if witness_w >= 0:
                os.close(witness_w)
        dispatched = time.monotonic()
        out, err = _CappedReader(proc.stdout, limits.output_bytes), _CappedReader(proc.stderr, limits.output_bytes)
        control = _ControlReader(control_r)
        child = proc
        watch = disk.DiskWatch(workdir, limits.disk_mb << 20, kill=lambda: _kill_group(child.pid),
                               pids=lambda: disk.descendants(child.pid))
        for reader in (out, err, control, watch):
            reader.start()
        try:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(job).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass

        timed_out = False
        while proc.poll() is None:
            now = time.monotonic()
            deadline = (dispatched + STARTUP_LIMIT_S if control.ready_at is None
                        else control.ready_at + limits.wall_s)
            if now >= deadline:
                timed_out = True
                break
            try:
                proc.wait(timeout=min(0.05, max(deadline - now, 0.001)))
            except subprocess.TimeoutExpired:
                pass
        # Kill the whole group: the child, and anything it forked or left behind.
        _kill_group(proc.pid)
        if cgroup is not None:
            cgroup.destroy()
            cgroup = None
        proc.wait()
        for reader in (out, err, control):
            reader.join(timeout=2)
        outcome = RunOutcome(status="ok", stdout=out.text(), stderr=err.text(), returncode=proc.returncode,
                             duration_s=time.monotonic() - dispatched, last_case=control.last_case,
                             witness=_witnessed(witness_r, out.total + err.total))
        if iso.bwrap and outcome.returncode is not None and outcome.returncode > 128:
            outcome.returncode = 128 - outcome.returncode  # bwrap reports a signal as 128 + N
        _confine_failed(outcome)
        return _over_disk(_conclude(outcome, workdir, token, limits, timed_out, started=control.ready_at is not None
                                    or not timed_out), watch.stop(), limits)
    finally:
        if witness_r >= 0:
            os.close(witness_r)
        if proc is not None and proc.returncode is None:  # interrupted (Ctrl-C): nothing may stay
            _kill_group(proc.pid)
            proc.wait()
        if cgroup is not None:
            cgroup.destroy()
        if proc is not None:
            forget(proc.pid)
        sweep_orphans()
        remove_tree(workdir)


# ---------------------------------------------------------------------------------------------
# Warm runs: a forkserver that imported torch once


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
        self._send(json.dumps({"confine": confine if iso.confines else None,
                               "cgroup": str(self.cgroup.path) if self.cgroup is not None else None}))
        if self._receive(STARTUP_LIMIT_S) != b'{"ready": true}\n':
            self._stop()
            raise JudgeError("the warm worker did not start (see grind doctor)")

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
            _kill_group(self.proc.pid)
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

    def run_job(self, job: dict[str, Any], limits: Limits) -> RunOutcome:
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
        job = dict(stage_job(job, workdir, iso), token=token, out_dir=workdir, time_limit=limits.wall_s,
                   confine=confine, stdout_fifo=streams.paths[0], stderr_fifo=streams.paths[1])
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
    if cgroup is not None:
        cgroup.join()
    if drop_to is not None:
        drop_user(drop_to)
