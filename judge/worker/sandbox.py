"""The parent side of the worker: start an isolated child, enforce limits, read back data.

Nothing here imports torch, and nothing the child wrote is executed or unpickled: the result is
JSON, the observations are safetensors, and both are validated before anyone looks at them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from judge.worker.runner import empty_cgroup  # noqa: E402 - stdlib-only at import, no torch

RUNNER = Path(__file__).with_name("runner.py")
STARTUP_LIMIT_S = 90.0  # importing torch on a loaded machine; learner code has not run yet
_PASSTHROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LD_LIBRARY_PATH", "SYSTEMROOT")


@dataclass(frozen=True)
class Limits:
    """Resource limits for one child. The wall clock starts when the child has imported torch,
    so a slow import never eats into the learner's time."""

    wall_s: float = 10.0
    memory_mb: int = 4096
    cpu_s: float | None = None  # default: derived from wall_s
    file_mb: int = 64
    open_files: int = 256
    output_bytes: int = 64 * 1024
    processes: int = 128  # processes + threads of this run (a pids cgroup where possible)

    @property
    def cpu_limit(self) -> int:
        """CPU seconds: generous by default (torch's import counts too), explicit when set."""
        return int(self.cpu_s if self.cpu_s is not None else self.wall_s * 2 + 30)


@dataclass
class RunOutcome:
    """What happened to one child, as data. ``status`` is one of ok, timeout, crashed."""

    status: str
    message: str = ""
    result: dict[str, Any] | None = None
    observations: dict[str, np.ndarray] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    returncode: int | None = None
    duration_s: float = 0.0
    last_case: str | None = None
    timeout_trace: str = ""


def scrubbed_env(home: str) -> dict[str, str]:
    """Only what Python and torch need; no tokens, no proxies, no PYTHON* hooks."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    for key in _PASSTHROUGH_ENV:
        if key in os.environ:
            env[key] = os.environ[key]
    return env


NOBODY = 65534


@dataclass(frozen=True)
class Isolation:
    """What this machine lets us add on top of rlimits, decided once per process.

    - ``drop_to``: when grind runs as root, the child runs as ``nobody``: it cannot touch the
      learner's files or the solutions, and RLIMIT_NPROC (ignored for root) bounds fork bombs.
    - ``bwrap``: with bubblewrap installed, the child also gets a read-only view of the file
      system, no network, its own PID namespace, and empty folders over the solutions and the
      cache, so even reading the reference is impossible.
    """

    drop_to: int | None
    bwrap: str | None

    @property
    def level(self) -> str:
        """The strongest layer in force: bubblewrap, landlock, macos-sandbox or limits-only."""
        if self.bwrap:
            return "bubblewrap"
        return "limits-only"

    def describe(self) -> str:
        parts = ["rlimits"]
        if self.drop_to is not None:
            parts.append("unprivileged user")
        if self.bwrap:
            parts.append("bubblewrap")
        return " + ".join(parts)


def _world_readable(paths: list[Path]) -> bool:
    """Can ``nobody`` reach these? Every ancestor needs o+x, the paths themselves o+r."""
    for path in paths:
        path = path.resolve()
        for folder in path.parents:
            if not folder.stat().st_mode & 0o001:
                return False
        if not path.stat().st_mode & 0o004:
            return False
    return True


def _needed_paths() -> list[Path]:
    import numpy
    import safetensors

    paths = [Path(sys.executable), RUNNER, Path(numpy.__file__), Path(safetensors.__file__)]
    try:
        from importlib.util import find_spec

        spec = find_spec("torch")
        if spec and spec.origin:
            paths.append(Path(spec.origin))
    except (ImportError, ValueError):
        pass
    return paths


@functools.lru_cache(maxsize=1)
def isolation() -> Isolation:
    if os.environ.get("GRIND_SANDBOX") == "rlimits":
        return Isolation(None, None)
    drop = None
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        try:
            drop = NOBODY if _world_readable(_needed_paths()) else None
        except OSError:
            drop = None
    bwrap = shutil.which("bwrap")
    if bwrap:
        probe = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all",
                 "--die-with-parent", "true"]
        try:
            ok = subprocess.run(probe, capture_output=True, timeout=10,
                                preexec_fn=(lambda: _drop(drop)) if drop is not None else None).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        bwrap = bwrap if ok else None
    return Isolation(drop, bwrap)


class PidsCgroup:
    """A pids cgroup per run, where the platform lets us make one (root on cgroup v1 or v2).

    RLIMIT_NPROC is ignored for root and counts a whole user otherwise; a cgroup bounds the
    processes and threads of exactly this run, and lets us find and kill every one of them
    afterwards, even those that left the process group.
    """

    BASES = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, limit: int) -> PidsCgroup | None:
        if os.environ.get("GRIND_SANDBOX") == "rlimits":
            return None
        for base in cls.BASES:
            if not (base / "cgroup.procs").exists():
                continue
            path = base / f"grind-{secrets.token_hex(6)}"
            try:
                path.mkdir()
            except OSError:
                continue
            try:
                (path / "pids.max").write_text(str(limit))
                return cls(path)
            except OSError:
                path.rmdir()
        return None

    def join(self, pid: int = 0) -> None:
        """Move ``pid`` (0: the calling process, in the child before exec) into this cgroup."""
        with open(self.path / "cgroup.procs", "w") as handle:
            handle.write(str(pid))

    def destroy(self) -> None:
        """Kill every process left in the cgroup, then remove it (the same code the warm server
        uses inside its namespace, kept in the stdlib-only runner)."""
        empty_cgroup(str(self.path))


@functools.lru_cache(maxsize=1)
def can_bound_processes() -> bool:
    """Can a run's process count be bounded here (a pids cgroup, or RLIMIT_NPROC for the
    unprivileged user)? Without either, only the wall clock stops a fork bomb."""
    if isolation().drop_to is not None:
        return True
    probe = PidsCgroup.create(1)
    if probe is None:
        return False
    probe.destroy()
    return True


def _drop(uid: int) -> None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def rlimit_table(limits: Limits, per_user_nproc: bool) -> list[tuple[str, tuple[int, int]]]:
    """The rlimits of one run, by name, so the warm worker's forks can apply the same ones.

    CPU: SIGXCPU at the soft limit (reported as a CPU timeout), SIGKILL 5 s later at the hard one.
    RLIMIT_NPROC counts a whole user, so it is only used for the dedicated unprivileged user."""
    cpu = limits.cpu_limit
    table = [
        ("RLIMIT_CPU", (cpu, cpu + 5)),
        ("RLIMIT_AS", (limits.memory_mb << 20,) * 2),
        ("RLIMIT_FSIZE", (limits.file_mb << 20,) * 2),
        ("RLIMIT_NOFILE", (limits.open_files,) * 2),
        ("RLIMIT_CORE", (0, 0)),
    ]
    if per_user_nproc:
        table.append(("RLIMIT_NPROC", (limits.processes,) * 2))
    return table


def _limit_child(limits: Limits, drop_to: int | None, cgroup: PidsCgroup | None) -> None:
    """Runs in the child between fork and exec: the cgroup and the limits first (root may set
    any), then the unprivileged user."""
    if cgroup is not None:
        cgroup.join()
    for name, value in rlimit_table(limits, per_user_nproc=drop_to is not None):
        try:
            resource.setrlimit(getattr(resource, name), value)
        except (ValueError, OSError):  # pragma: no cover - platform without that limit
            pass
    if drop_to is not None:
        _drop(drop_to)


def _command(iso: Isolation, workdir: str, hidden: list[Path], serve: bool = False,
             writable: tuple[str, ...] = ()) -> list[str]:
    python = [sys.executable, "-I", "-X", "faulthandler", str(RUNNER), *(["--serve"] if serve else [])]
    if not iso.bwrap:
        return python
    command = [iso.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
               "--bind", workdir, workdir, "--unshare-all", "--die-with-parent", "--chdir", workdir]
    for path in writable:
        command += ["--bind", path, path]
    for folder in hidden:
        if folder.is_dir() and not str(RUNNER).startswith(str(folder.resolve()) + os.sep):
            command += ["--tmpfs", str(folder.resolve())]
    return command + ["--", *python]


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


class _ProgressReader(threading.Thread):
    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.ready_at: float | None = None
        self.last_case: str | None = None

    def run(self) -> None:
        """Reads in bounded chunks and keeps at most one short partial line: the child can write
        to this pipe too, and a newline-free flood must not grow the parent's memory."""
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


def run_job(job: dict[str, Any], limits: Limits, hidden: list[Path] | None = None) -> RunOutcome:
    """Run one job in a fresh, limited child and return what it observed.

    ``hidden`` folders (the solutions, the cache) are made empty for the child where bubblewrap
    is available. The temp directory (the child's cwd and HOME) is removed whatever happens.
    """
    iso = isolation()
    workdir = tempfile.mkdtemp(prefix="grind-run-")
    os.chmod(workdir, 0o700)
    if iso.drop_to is not None:
        os.chown(workdir, iso.drop_to, iso.drop_to)
    token = secrets.token_hex(16)
    progress_r, progress_w = os.pipe()
    # Inside bubblewrap's PID namespace the child's parent is the namespace's init, which it
    # cannot kill; the extra waiter process that shields grind is only needed without it.
    job = dict(job, token=token, out_dir=workdir, progress_fd=progress_w, time_limit=limits.wall_s,
               shield=not iso.bwrap)
    started = time.monotonic()
    cgroup = PidsCgroup.create(limits.processes)
    try:
        try:
            proc = subprocess.Popen(
                _command(iso, workdir, hidden or []),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workdir,
                env=scrubbed_env(workdir),
                start_new_session=True,
                pass_fds=(progress_w,),
                preexec_fn=lambda: _limit_child(limits, iso.drop_to, cgroup),
            )
        finally:
            os.close(progress_w)
        out, err = _CappedReader(proc.stdout, limits.output_bytes), _CappedReader(proc.stderr, limits.output_bytes)
        progress = _ProgressReader(progress_r)
        for reader in (out, err, progress):
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
            if progress.ready_at is None:
                deadline = started + STARTUP_LIMIT_S
            else:
                deadline = progress.ready_at + limits.wall_s
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
        for reader in (out, err, progress):
            reader.join(timeout=2)
        outcome = RunOutcome(
            status="ok",
            stdout=out.text(),
            stderr=err.text(),
            returncode=proc.returncode,
            duration_s=time.monotonic() - started,
            last_case=progress.last_case,
        )
        if iso.bwrap and outcome.returncode is not None and outcome.returncode > 128:
            outcome.returncode = 128 - outcome.returncode  # bwrap reports a signal as 128 + N
        return _conclude(outcome, workdir, token, limits, timed_out)
    finally:
        if cgroup is not None:
            cgroup.destroy()
        shutil.rmtree(workdir, ignore_errors=True)


def _conclude(outcome: RunOutcome, workdir: str, token: str, limits: Limits, timed_out: bool) -> RunOutcome:
    """Shared by cold and warm runs: the timeout trace, a timeout verdict, or the checked result."""
    trace_path = Path(workdir, "timeout_trace.txt")
    if trace_path.is_file():
        outcome.timeout_trace = trace_path.read_text(errors="replace")[:20000]
    cpu_killed = outcome.returncode == -signal.SIGXCPU and not timed_out
    if timed_out or cpu_killed:
        outcome.status = "timeout"
        outcome.message = (f"the CPU-time limit of {limits.cpu_limit} s was exceeded" if cpu_killed
                           else f"the time limit of {limits.wall_s:g} s was exceeded")
        return outcome
    _read_result(outcome, workdir, token)
    return outcome


def _read_result(outcome: RunOutcome, workdir: str, token: str) -> None:
    """Accept the child's result only if it is one well-formed document carrying this run's
    token and the hash of the observations file it claims."""
    code = outcome.returncode
    result_path = Path(workdir, "result.json")
    obs_path = Path(workdir, "observations.safetensors")

    def crashed(message: str) -> None:
        outcome.status = "crashed"
        outcome.message = message

    if code is not None and code < 0:
        name = _signal_name(code)
        detail = {"SIGSEGV": "a segmentation fault", "SIGABRT": "an abort", "SIGXFSZ": "the file-size limit",
                  "SIGKILL": "a kill: did the submission signal its own process?", "SIGBUS": "a bus error"}
        return crashed(f"the worker was killed by {name} ({detail.get(name, 'a signal')}) before finishing")
    if not result_path.is_file():
        if "MemoryError" in outcome.stderr:
            return crashed("the submission ran out of memory")
        return crashed(f"the worker exited (code {code}) without producing a result: did the submission call exit?")
    try:
        if result_path.stat().st_size > 32 << 20:
            raise ValueError("result too large")
        result = json.loads(result_path.read_text(encoding="utf-8"))
        if not isinstance(result, dict) or not secrets.compare_digest(str(result.get("token", "")), token):
            raise ValueError("token mismatch")
        digest = hashlib.sha256(obs_path.read_bytes()).hexdigest()
        if result.get("observations_sha256") != digest:
            raise ValueError("observations do not match their hash")
        from safetensors.numpy import load_file

        outcome.observations = load_file(str(obs_path))
    except (ValueError, OSError, TypeError, RecursionError) as exc:
        return crashed(f"the worker's result was malformed or forged ({exc}); it is not trusted")
    if code != 0:
        return crashed(f"the worker exited with code {code} after writing its result")
    outcome.result = result


def _capped_file(path: Path, cap: int) -> str:
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            body = handle.read(cap).decode("utf-8", "replace")
    except OSError:
        return ""
    if size > cap:
        body += f"\n[... output truncated: {size - cap} more bytes not shown]"
    return body


class WarmWorker:
    """A forkserver: one process that has imported torch, forking a fresh child per job.

    The server runs under the same bubblewrap view as cold runs, in its own PID namespace, so
    a job can neither see nor signal grind; the server therefore enforces each job's wall clock
    itself and empties the job's pids cgroup afterwards. Every job still gets its own temp dir,
    rlimits, cgroup, process-group kill and token. grind keeps a backstop: a server that does not
    answer in time is killed with its whole namespace. Re-grading then costs the case work, not
    a torch import.
    """

    def __init__(self, hidden: list[Path] | None = None) -> None:
        self.hidden = hidden or []
        self.proc: subprocess.Popen[bytes] | None = None
        self.root: str | None = None
        self.lines: Any = None
        self.cgroup: PidsCgroup | None = None

    def _start(self, limits: Limits) -> None:
        import queue

        iso = isolation()
        for folder in self.hidden:  # bubblewrap can only hide a folder that exists when it starts
            folder.mkdir(parents=True, exist_ok=True)
        self.root = tempfile.mkdtemp(prefix="grind-warm-")
        os.chmod(self.root, 0o700)
        if iso.drop_to is not None:
            os.chown(self.root, iso.drop_to, iso.drop_to)
        # One cgroup for the server and its jobs; the server makes a sub-cgroup per job in it.
        self.cgroup = PidsCgroup.create(limits.processes + 32)
        writable = (str(self.cgroup.path),) if self.cgroup is not None and iso.bwrap else ()
        cgroup = self.cgroup
        self.proc = subprocess.Popen(
            _command(iso, self.root, self.hidden, serve=True, writable=writable),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=self.root, env=scrubbed_env(self.root), start_new_session=True,
            preexec_fn=lambda: _server_preexec(cgroup, iso.drop_to),
        )
        self.lines = queue.Queue()
        stdout = self.proc.stdout

        def pump() -> None:
            assert stdout is not None
            for raw in stdout:
                self.lines.put(raw)
            self.lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        if self._receive(STARTUP_LIMIT_S).get("ready") is not True:
            self.close()
            raise RuntimeError("the warm worker did not start")

    def _receive(self, timeout: float) -> dict[str, Any]:
        import queue

        try:
            raw = self.lines.get(timeout=timeout)
        except queue.Empty:
            return {}
        if raw is None:
            return {}
        try:
            message = json.loads(raw)
        except ValueError:
            return {}
        return message if isinstance(message, dict) else {}

    def _send(self, text: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        if self.proc is not None:
            _kill_group(self.proc.pid)
            self.proc.wait()
            self.proc = None
        if self.cgroup is not None:
            self.cgroup.destroy()
            self.cgroup = None
        if self.root:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def __enter__(self) -> WarmWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_job(self, job: dict[str, Any], limits: Limits) -> RunOutcome:
        if not self.alive():
            self.close()
            self._start(limits)
        assert self.root is not None
        iso = isolation()
        workdir = tempfile.mkdtemp(prefix="job-", dir=self.root)
        if iso.drop_to is not None:
            os.chown(workdir, iso.drop_to, iso.drop_to)
        token = secrets.token_hex(16)
        job = dict(job, token=token, out_dir=workdir, time_limit=limits.wall_s)
        started = time.monotonic()
        try:
            self._send(json.dumps({
                "job": job, "rlimits": rlimit_table(limits, iso.drop_to is not None),
                "wall_s": limits.wall_s, "startup_s": STARTUP_LIMIT_S, "processes": limits.processes,
                "cgroup": str(self.cgroup.path) if self.cgroup is not None else None,
            }))
            # The server enforces the deadline; this is only a backstop for a stuck server.
            answer = self._receive(STARTUP_LIMIT_S + limits.wall_s + 30)
            if not isinstance(answer.get("exit"), int):
                self.close()
                outcome = RunOutcome(status="crashed", message="the warm worker stopped answering; it was restarted")
                outcome.duration_s = time.monotonic() - started
                return outcome
            progress = Path(workdir, "progress.txt")
            last_case = None
            if progress.is_file():
                cases = [line[5:].strip() for line in progress.read_text(errors="replace").splitlines()
                         if line.startswith("case ")]
                last_case = cases[-1][:200] if cases else None
            outcome = RunOutcome(
                status="ok",
                stdout=_capped_file(Path(workdir, "stdout.txt"), limits.output_bytes),
                stderr=_capped_file(Path(workdir, "stderr.txt"), limits.output_bytes),
                returncode=answer["exit"],
                duration_s=time.monotonic() - started,
                last_case=last_case,
            )
            return _conclude(outcome, workdir, token, limits, bool(answer.get("timed_out")))
        except (BrokenPipeError, OSError):
            self.close()
            return RunOutcome(status="crashed", message="the warm worker died; it was restarted")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


def _server_preexec(cgroup: PidsCgroup | None, drop_to: int | None) -> None:
    if cgroup is not None:
        cgroup.join()
    if drop_to is not None:
        _drop(drop_to)
