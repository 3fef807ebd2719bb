"""What comes back from a child, read as hostile bytes: its files (opened only if regular, never
following a link, never blocking on a FIFO, capped before reading), its output and control
streams, and the outcome they make. Every parse error becomes a ``crashed`` outcome naming what
was wrong (see ``protocol``); nothing the child wrote is executed or unpickled.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import signal
import stat
import threading
import time
from typing import TYPE_CHECKING, Any

from judge.errors import JudgeError
from judge.worker import disk, protocol
from judge.worker.isolation import Isolation, isolation
from judge.worker.protocol import Limits, ProtocolError, RunOutcome
from judge.worker.settings import STARTUP_LIMIT_S

if TYPE_CHECKING:
    import numpy as np

RESULT_CAP = 32 << 20
OBSERVATIONS_CAP = 512 << 20
TRACE_CAP = 64 << 10
REPLY_CAP = 4 << 20
CONFINE_FAILED = 71  # the runner's exit code when the kernel refused to confine it


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
    outcome.kept = read_kept(dir_fd)


KEPT_FOLDERS = 256  # a trusted job's subjects times its distributed cases is far fewer
KEPT_BYTES = 256 << 20  # every kept checkpoint of one run together (the run's disk cap)


def read_kept(dir_fd: int) -> dict[str, protocol.KeptCase]:
    """Every kept folder of the run (protocol.KEPT), read as hostile bytes: folders named as
    protocol.kept_folder names them, a checkpoint only if it is a regular file under the cap
    (never a link, never a FIFO), with its ctime, which the kernel sets and no process can set
    back. The checkpoint is parsed here, in grind's process,
    by a reader that never unpickles (worker/checkpoint.py). What is missing stays missing:
    judge/kept.py reads that as "not there"."""
    from judge.worker.checkpoint import MOST_BYTES, read_state_dict

    kept: dict[str, protocol.KeptCase] = {}
    try:
        top = os.open(protocol.KEPT, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return kept
    budget = KEPT_BYTES
    try:
        names = sorted(n for n in os.listdir(top) if _KEPT_NAME.fullmatch(n))[:KEPT_FOLDERS]
        for name in names:
            try:
                folder = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=top)
            except OSError:
                continue
            try:
                case = protocol.KeptCase()
                if budget > 0:
                    case.state, case.finished, info = _checkpoint(folder, min(budget, MOST_BYTES), read_state_dict)
                    if info is not None:
                        case.inode, case.ctime_ns, case.size = info.st_ino, info.st_ctime_ns, info.st_size
                        budget -= info.st_size
                kept[name] = case
            finally:
                os.close(folder)
    except OSError:
        pass
    finally:
        os.close(top)
    return kept


_KEPT_NAME = re.compile(r"[0-9a-f]{32}")
CHECKPOINT = protocol.KEPT_CHECKPOINT


def _checkpoint(folder: int, cap: int, parse: Any) -> tuple[Any, bool, os.stat_result | None]:
    """(state_dict or None, ends as a finished zip, its stat) of the kept checkpoint.
    The ctime is taken after the bytes are read: a file that changed while grind read it (nothing
    of the run is alive by then) would only look later, never earlier."""
    try:
        data = read_regular(folder, CHECKPOINT, cap)
        info = os.stat(CHECKPOINT, dir_fd=folder, follow_symlinks=False)
    except (OSError, ProtocolError):
        return None, False, None
    # A completed torch.save ends with the zip's end-of-central-directory record (22 bytes, no comment).
    finished = len(data) >= 22 and data[-22:-18] == b"PK\x05\x06" and data[-2:] == b"\0\0"
    return parse(data), finished, info


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
    a server already running: the job's process opens the writing end (child/server.take_streams) and
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
                    if key.data is not None and not self._read(key.fd, key.data):  # None: answered
                        selector.unregister(key.fd)
                        streams -= 1
        finally:
            selector.close()

    def _read(self, fd: int, index: int) -> bool:
        """One chunk of stream ``index``, kept up to the cap and counted whole; False at its end."""
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        room = self.cap - sum(len(c) for c in self.kept[index])
        if room > 0:
            self.kept[index].append(chunk[:room])
        self.totals[index] += len(chunk)
        return True

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


def _confine_failed(outcome: RunOutcome) -> None:
    if outcome.returncode == CONFINE_FAILED and "grind-confine:" in outcome.stderr:
        why = outcome.stderr.split("grind-confine:", 1)[1].strip().splitlines()[0]
        raise JudgeError(f"the sandbox could not be set up ({why}); set GRIND_SANDBOX=limits-only to run "
                         "without it (see grind doctor)")
