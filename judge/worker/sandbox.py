"""The parent side of the worker: start an isolated child, enforce limits, read back data.

Nothing here imports torch, and nothing the child wrote is executed or unpickled: the result is
JSON, the observations are safetensors, and both are validated before anyone looks at them.
"""

from __future__ import annotations

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
from typing import Any

import numpy as np

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


def _limit_child(limits: Limits) -> None:
    """Runs in the child between fork and exec."""
    cpu = int(limits.cpu_s if limits.cpu_s is not None else limits.wall_s * 2 + 30)
    mem = limits.memory_mb << 20
    for what, value in (
        (resource.RLIMIT_AS, mem),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_FSIZE, limits.file_mb << 20),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_CORE, 0),
    ):
        try:
            resource.setrlimit(what, (value, value))
        except (ValueError, OSError):  # pragma: no cover - platform without that limit
            pass


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
        with os.fdopen(self.fd, "r", errors="replace") as stream:
            for line in stream:
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


def run_job(job: dict[str, Any], limits: Limits) -> RunOutcome:
    """Run one job in a fresh, limited child and return what it observed.

    The temp directory (the child's cwd and HOME) is removed whatever happens.
    """
    workdir = tempfile.mkdtemp(prefix="grind-run-")
    os.chmod(workdir, 0o700)
    token = secrets.token_hex(16)
    progress_r, progress_w = os.pipe()
    job = dict(job, token=token, out_dir=workdir, progress_fd=progress_w, time_limit=limits.wall_s)
    started = time.monotonic()
    try:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-X", "faulthandler", str(RUNNER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workdir,
                env=scrubbed_env(workdir),
                start_new_session=True,
                pass_fds=(progress_w,),
                preexec_fn=lambda: _limit_child(limits),
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
        trace_path = Path(workdir, "timeout_trace.txt")
        if trace_path.is_file():
            outcome.timeout_trace = trace_path.read_text(errors="replace")[:20000]
        cpu_killed = proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL) and not timed_out
        if timed_out or cpu_killed:
            outcome.status = "timeout"
            which = "CPU-time" if cpu_killed else "time"
            outcome.message = f"the {which} limit of {limits.wall_s:g} s was exceeded"
            return outcome
        _read_result(outcome, workdir, token)
        return outcome
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


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
        detail = {"SIGSEGV": "a segmentation fault", "SIGABRT": "an abort", "SIGXFSZ": "the file-size limit"}
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
    except (ValueError, OSError, TypeError) as exc:
        return crashed(f"the worker's result was malformed or forged ({exc}); it is not trusted")
    if code != 0:
        return crashed(f"the worker exited with code {code} after writing its result")
    outcome.result = result
