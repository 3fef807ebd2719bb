"""What this machine lets grind put between a submission and everything else, decided once.

The layers, strongest first (``level`` names the strongest in force; ``grind doctor`` prints it):

- ``bubblewrap``: a read-only view of the file system with the solutions, the cache and the class
  folder replaced by empty folders, no network but its own loopback, its own PID namespace.
  Landlock is added inside it where the kernel has it.
- ``landlock``: the kernel's unprivileged sandbox (Linux >= 5.13). The child may read only what
  Python needs (the interpreter, site-packages, system libraries) and write only its own temp
  folder; TCP only on a loopback of its own (a private network namespace, where the kernel lets
  a user make one); it cannot signal or ptrace processes outside its sandbox.
- ``macos-sandbox``: ``sandbox-exec`` with a profile of the same shape (not tested in CI).
- ``limits-only``: rlimits, a killed process group, a reaped process tree and a scrubbed
  environment; the submission can read and write whatever your user can.

Under every level: the child runs with ``python -I`` and rlimits; grind and the child's waiter are
child subreapers, so every process a run leaves behind is found and killed; as root the child runs
as ``nobody``; where grind may create cgroups, a pids cgroup bounds and then kills the run.

``GRIND_SANDBOX=landlock`` pretends bubblewrap is absent (a laptop); ``GRIND_SANDBOX=limits-only``
turns every optional layer off. Both exist so tests can prove what each level guarantees.
"""

from __future__ import annotations

import functools
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.worker import kernel, landlock, process
from judge.worker.protocol import Confinement
from judge.worker.process import children_of, empty_cgroup
from judge.worker.settings import PASSTHROUGH_ENV as _PASSTHROUGH_ENV

if TYPE_CHECKING:
    from judge.worker.protocol import Limits

RUNNER = Path(__file__).with_name("runner.py")
WORKER_DIR = RUNNER.parent
NOBODY = 65534
LEVELS = ("bubblewrap", "landlock", "macos-sandbox", "limits-only")
# Readable by root only, but a child may run as root (an interpreter under /root cannot be run
# by nobody): Landlock never grants these.
SYSTEM_SECRETS = tuple(Path(p) for p in ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
                                         "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh", "/etc/ssl/private"))

# What each level guarantees, for `grind doctor` and the README's table (keep them in step).
GUARANTEES: dict[str, list[str]] = {
    "bubblewrap": [
        "reads: a read-only view of the whole file system, with the solutions, the reference cache "
        "and the class folder replaced by empty folders",
        "writes: only the run's temp folder",
        "no network but its own loopback (TCP on lo only, for distributed cases); its own PID namespace: "
        "grind and other runs cannot be seen or signalled",
        "Landlock inside as well, where the kernel has it, and with it the seccomp filter: no unix socket "
        "(tmux's, ssh-agent's, a grind daemon's), no io_uring, no other process's descriptors or memory, no "
        "new namespace",
    ],
    "landlock": [
        "reads: only Python, site-packages, system libraries and the run's folder (not the "
        "solutions, the reference cache, your workspace or a class folder)",
        "writes: only the run's temp folder",
        "TCP and UDP only on a loopback of its own (a private network namespace, where the kernel lets a user "
        "make one; otherwise no IP socket at all); cannot signal or ptrace grind or any process outside the run "
        "(kernel ABI >= 6)",
        "a seccomp filter (x86_64, aarch64): no unix socket, path or abstract (tmux's, ssh-agent's, a grind "
        "daemon's), no io_uring, no other process's descriptors, memory or limits, no new namespace or mount, "
        "no keyring, bpf, perf event or userfaultfd",
    ],
    "macos-sandbox": [
        "reads and writes limited as with landlock, network denied, signals only to its own "
        "children (sandbox-exec profile; not tested in CI)",
    ],
    "limits-only": [
        "time, CPU, memory, file-size and open-file limits; the process group is killed and every "
        "leftover process reaped",
        "NOT guaranteed: the submission can read and write anything your user can, including the "
        "solutions and the reference cache, so a determined submission can fake a pass; and it "
        "can signal your other processes",
    ],
}

# Which layer stops what, for `grind doctor`: a door is named under every layer that shuts it, so
# a reader can see which doors rest on one layer only. Keep in step with the README's security model.
STOPPED_BY = {
    "rlimits": "running too long or too big: time, CPU, memory, file sizes, open files, processes",
    "subreaper": "processes that outlive their run (setsid, double forks): found and killed",
    "unprivileged user": "root's files and capabilities: the child runs as nobody",
    "bubblewrap": "reads of the solutions, the cache and the class folder (empty folders in their place); "
                  "writes outside the run folder; seeing or signalling grind and other runs (own PID "
                  "namespace); every network but the run's own loopback, abstract unix sockets included",
    "landlock": "opening files outside Python, site-packages, system folders and the run folder; writes "
                "outside the run folder; TCP except on a loopback of the run's own; signals to, ptrace of "
                "and /proc reads of processes outside the run, and abstract unix sockets outside it (ABI >= 6)",
    "seccomp": "unix sockets with a path or an abstract name (only a connected stream pair is left), io_uring, "
               "IP sockets where the run has no loopback of its own (UDP to the host's 127.0.0.1), other "
               "processes' descriptors, memory, limits and scheduling (pidfd_getfd, process_vm_*, ptrace, "
               "kcmp, prlimit), new namespaces and mounts, keyrings, bpf, perf events, userfaultfd, fanotify, "
               "file handles, and system calls newer than its table",
    "private network": "the child's own network namespace, whose only interface is its own loopback: the "
                       "host's 127.0.0.1 and every other interface, for TCP and UDP",
    "no private network": "nothing: this kernel does not let a user make a network namespace, so Landlock "
                          "refuses TCP and the seccomp filter every IP socket instead (distributed cases "
                          "cannot run here)",
    "sandbox-exec": "as its profile says: reads and writes outside the allowed folders, the network, signals "
                    "beyond its own children",
}

HOW_TO_STRENGTHEN = {
    "bubblewrap": "",
    "landlock": "install bubblewrap (apt-get install bubblewrap) for a hidden file system and its own PID "
                "namespace",
    "macos-sandbox": "",
    "limits-only": "on Linux, use a kernel with Landlock (5.13+, enabled by most distributions) or install "
                   "bubblewrap (apt-get install bubblewrap); on macOS, sandbox-exec must be present",
}


def how_to_strengthen(level: str) -> str:
    """The advice for ``level``; when GRIND_SANDBOX chose it on purpose, unsetting the variable
    is the fix (installing bubblewrap again is not, and a newcomer was told to)."""
    mode = sandbox_mode()
    if mode == "limits-only" and level == "limits-only":
        return "unset GRIND_SANDBOX (it asks for limits-only, which turns every optional layer off)"
    if mode == "landlock" and level == "landlock" and shutil.which("bwrap"):
        return "unset GRIND_SANDBOX (it asks for landlock, which leaves the installed bubblewrap unused)"
    return HOW_TO_STRENGTHEN.get(level, "see grind doctor")


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


@dataclass(frozen=True)
class Isolation:
    """The layers this machine gives, decided once per process (see the module docstring)."""

    drop_to: int | None  # run the child as this uid (grind runs as root)
    bwrap: str | None  # the bubblewrap binary, if it works here
    landlock_abi: int  # 0: no Landlock
    macos: str | None = None  # sandbox-exec, on macOS
    notes: tuple[str, ...] = field(default=())

    @property
    def level(self) -> str:
        """The strongest layer in force: bubblewrap, landlock, macos-sandbox or limits-only."""
        if self.bwrap:
            return "bubblewrap"
        if self.landlock_abi:
            return "landlock"
        if self.macos:
            return "macos-sandbox"
        return "limits-only"

    @property
    def layers(self) -> list[str]:
        parts = ["rlimits", "subreaper"]
        if self.drop_to is not None:
            parts.append("unprivileged user")
        if self.bwrap:
            parts.append("bubblewrap")
        if self.landlock_abi:
            parts.append(f"landlock (ABI {self.landlock_abi})")
        if self.confines and platform.machine() in kernel._SECCOMP_ARCHES:
            parts.append("seccomp")  # installed by the same confine() step, after Landlock if any
        if self.landlock_abi and not self.bwrap:
            parts.append("private network")
        if self.macos:
            parts.append("sandbox-exec")
        return parts

    @property
    def confines(self) -> bool:
        """Whether the runner confines the child itself (Landlock, the seccomp filter): at both
        sandboxed levels on Linux, bubblewrap on a kernel without Landlock included, since the
        filter's doors (unix sockets by path, io_uring, other processes' descriptors) are ones a
        mount namespace does not shut."""
        return bool(self.landlock_abi or self.bwrap)

    def describe(self) -> str:
        return " + ".join(self.layers)

    @property
    def weak(self) -> bool:
        """A level at which a submission can reach the reference or other students' files."""
        return self.level == "limits-only"


def _private_network_here(drop: int | None) -> bool:
    """Can a child make the network namespace of its own that the landlock level relies on? The
    child's own call (kernel.private_network), tried once in a throwaway interpreter as the
    child's user: whether the kernel allows it depends on the machine and on the user."""
    code = ("import importlib.util as u,sys\n"
            f"s=u.spec_from_file_location('kl',{str(Path(kernel.__file__))!r});m=u.module_from_spec(s)\n"
            "s.loader.exec_module(m);sys.exit(0 if m.private_network() else 3)\n")
    try:
        done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, timeout=20,
                              preexec_fn=(lambda: drop_user(drop)) if drop is not None else None)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def doctor() -> dict[str, Any]:
    """What ``grind doctor`` reports, as data: the level in force, its layers (and what each one
    stops), what each level guarantees, and how to get a stronger one here."""
    iso = isolation()
    layers = iso.layers
    if "private network" in layers and not _private_network_here(iso.drop_to):
        layers[layers.index("private network")] = "no private network"
    return {
        "level": iso.level,
        "layers": layers,
        "stops": [f"{layer}: {STOPPED_BY[layer.split(' (')[0]]}" for layer in layers
                  if layer.split(" (")[0] in STOPPED_BY],
        "landlock_abi": iso.landlock_abi,
        "notes": list(iso.notes),
        "guarantees": {level: GUARANTEES[level] for level in LEVELS},
        "strengthen": how_to_strengthen(iso.level),
        "grading_allowed": not iso.weak,
        "child_user": child_user(iso),
        "python": sys.executable,
    }


def child_user(iso: Isolation) -> str:
    """Who the submission runs as, truthfully: capabilities are dropped only by the runner's
    confine step, which runs only when Landlock or bubblewrap confines the child, so a root child
    at limits-only keeps every capability (it reads and writes anything on the machine)."""
    if iso.drop_to is not None:
        return "nobody"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return "root (no capabilities)" if iso.confines else "root, with every capability and nothing confining it"
    return "your user"


def sandbox_mode() -> str:
    mode = os.environ.get("GRIND_SANDBOX", "auto").strip().lower() or "auto"
    return "limits-only" if mode == "rlimits" else mode


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
    """What a child dropped to ``nobody`` must read. Found, not imported: importing numpy here
    put 0.1 s before a cold run's child started (it was this function's only use of it)."""
    from importlib.util import find_spec

    paths = [Path(sys.executable), RUNNER]
    for name in ("numpy", "safetensors", "torch"):
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            paths.append(Path(spec.origin))
        elif name != "torch":  # as before: numpy and safetensors must be there (torch may be missing)
            raise OSError(f"{name} is not installed")
    return paths


def _probe_landlock() -> int:
    """The ABI, if confining a child really works here (a container's seccomp may refuse it).

    Tried in a fork of this process, not in an interpreter of its own: starting one cost 20-30
    ms of every cold ``grind run``, before its child could start. The fork does only what needs no
    lock another thread could hold: the module and ctypes are loaded here first (``abi``), and
    the fork calls the kernel, opens one file, says how it went and leaves with ``os._exit``.

    Its answer travels on a pipe, not in its exit status: under a SIGCHLD that grind inherited
    ignored, the kernel reaps the fork itself and its status is lost (a review's run then read
    "no Landlock", and graded at limits-only). A fork Python will not make (a warning turned
    into an error) is tried the old way, in an interpreter of its own."""
    abi = landlock.abi()
    if abi < 1:
        return 0
    read_end, write_end = os.pipe()
    try:
        with warnings.catch_warnings():  # 3.12+: a fork beside threads warns; this one calls no lock
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except Exception:  # noqa: BLE001 - no fork here: the interpreter's probe answers instead
        os.close(read_end)
        os.close(write_end)
        return _probe_landlock_in_interpreter(abi)
    if pid == 0:  # the probe: confined to /usr, it must not be able to list / (there on every machine)
        try:
            os.close(read_end)
            landlock.restrict(["/usr"], ["/dev/null"])
            os.listdir("/usr")  # what the rules grant is still there (else the answer is nothing)
            try:
                os.listdir("/")
            except PermissionError:
                os.write(write_end, b"confined")
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        said = _read_within(read_end, 20)
    finally:
        os.close(read_end)
        _reap(pid)
    return abi if said == b"confined" else 0


def _read_within(fd: int, timeout_s: float) -> bytes:
    """What arrives on ``fd`` until its writer closes it, or ``timeout_s`` passes."""
    import select

    deadline = time.monotonic() + timeout_s
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return b""
        chunk = os.read(fd, 64)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _reap(pid: int) -> None:
    """Our probe, ended and reaped (already reaped by the kernel where SIGCHLD is ignored)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except (ChildProcessError, ProcessLookupError):
        pass


def _probe_landlock_in_interpreter(abi: int) -> int:
    """The probe in an interpreter of its own, where this process cannot fork."""
    code = ("import importlib.util as u,sys\n"
            f"s=u.spec_from_file_location('ll',{str(Path(landlock.__file__))!r});m=u.module_from_spec(s)\n"
            "s.loader.exec_module(m);m.restrict(['/usr'],['/dev/null'])\n"
            "import os\nos.listdir('/usr')\ntry:\n os.listdir('/')\nexcept PermissionError:\n print('confined')\n")
    try:
        done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return 0
    return abi if done.stdout.strip() == b"confined" else 0


def _start_bwrap_probe(bwrap: str, drop: int | None) -> subprocess.Popen[bytes] | None:
    """``bwrap ... true``, started (its answer is read by ``_bwrap_works``) so that it runs while
    Landlock is probed."""
    probe = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all",
             "--die-with-parent", "true"]
    def preexec() -> None:
        process.default_sigchld()  # a probe of bubblewrap under an ignored SIGCHLD would hang
        if drop is not None:
            drop_user(drop)

    try:
        return subprocess.Popen(probe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, preexec_fn=preexec)
    except (OSError, subprocess.SubprocessError):
        return None


def _bwrap_works(probe: subprocess.Popen[bytes] | None) -> bool:
    if probe is None:
        return False
    try:
        return probe.wait(timeout=10) == 0
    except subprocess.TimeoutExpired:
        probe.kill()
        probe.wait()
        return False


@functools.lru_cache(maxsize=1)
def isolation() -> Isolation:
    # The entry points did this from their main thread; a library caller's thread cannot.
    ignored = process.default_sigchld()
    mode = sandbox_mode()
    sigchld_note = ("SIGCHLD is ignored in this process and a thread cannot take its default back: children's "
                    "exit statuses are lost (start grind from its command, or reset SIGCHLD first)",) if ignored else ()
    if mode == "limits-only":
        return Isolation(None, None, 0, notes=(*sigchld_note, "GRIND_SANDBOX=limits-only: every optional layer is off"))
    drop = None
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        try:
            drop = NOBODY if _world_readable(_needed_paths()) else None
        except OSError:
            drop = None
    notes: list[str] = []
    bwrap = shutil.which("bwrap") if mode != "landlock" else None
    if mode == "landlock":
        notes.append("GRIND_SANDBOX=landlock: bubblewrap is not used")
    elif mode != "auto":
        notes.append(f"GRIND_SANDBOX={mode[:40]!r} is not a level grind knows (landlock, limits-only): ignored")
    probe = _start_bwrap_probe(bwrap, drop) if bwrap else None
    abi = _probe_landlock() if sys.platform.startswith("linux") else 0
    if sys.platform.startswith("linux") and not abi and landlock.abi() > 0:
        notes.append(f"Landlock is in this kernel (ABI {landlock.abi()}) but a process could not be confined "
                     "with it here (a container's seccomp filter?)")
    if bwrap and not _bwrap_works(probe):
        notes.append("bubblewrap is installed but cannot create namespaces here (no user namespaces?)")
        bwrap = None
    macos = shutil.which("sandbox-exec") if sys.platform == "darwin" else None
    return Isolation(drop, bwrap, abi, macos, (*sigchld_note, *notes))


def confinement(hidden: list[Path], workdir: str) -> Confinement | None:
    """What the child may read and write under Landlock (the job's ``confine``), or None.
    ``landlock`` is False under bubblewrap on a kernel without Landlock: the runner then installs
    only the seccomp filter (and drops capabilities); the rules are not enforced by anything."""
    iso = isolation()
    if not iso.confines and not iso.macos:
        return None
    read, listable = _read_roots(tuple(str(p) for p in [*hidden, *SYSTEM_SECRETS]))
    # TCP: denied, except inside a network namespace whose only interface is the run's own
    # loopback: bubblewrap's, or (without it) one the child makes itself where the kernel lets
    # a user (private_net); distributed cases need it (gloo's ranks talk TCP on 127.0.0.1).
    return Confinement(read=list(read), list=list(listable), write=[workdir, "/dev/null"],
                       loopback_tcp=bool(iso.bwrap), private_net=not iso.bwrap, landlock=bool(iso.landlock_abi))


@functools.lru_cache(maxsize=8)
def _read_roots(hidden: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Walking site-packages around a hidden folder costs a few ms: once per set of hidden
    folders. The worker's own folder is readable (the runner loads its siblings from it); a
    folder split around a hidden one stays listable, or Python could not import from it."""
    extra = [str(WORKER_DIR)]
    return (tuple(landlock.read_roots(list(hidden), extra)), tuple(landlock.listable_roots(list(hidden), extra)))


def drop_user(uid: int) -> None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


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
        if sandbox_mode() == "limits-only":
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
        uses inside its namespace: judge.worker.process, which the child loads too)."""
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


SIGNALS_PENDING = 64  # RLIMIT_SIGPENDING of a run (see rlimit_table)


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
        # Queued signals are counted per user, host-wide: a review's run queued real-time signals
        # to itself until its user's count was full, and every other process of the user got
        # EAGAIN from sigqueue while it lived. This caps what the run queues with sigqueue and
        # timers; kill() is exempt from the limit (the kernel's rule), which the README lists.
        ("RLIMIT_SIGPENDING", (SIGNALS_PENDING,) * 2),
        ("RLIMIT_MSGQUEUE", (0, 0)),  # POSIX message queues' bytes, also the user's: none
    ]
    if per_user_nproc:
        table.append(("RLIMIT_NPROC", (limits.processes,) * 2))
    return table


def limit_child(limits: Limits, drop_to: int | None, cgroup: PidsCgroup | None) -> None:
    """Runs in the child between fork and exec: the cgroup and the limits first (root may set
    any), then the unprivileged user."""
    import resource

    process.default_sigchld()  # bubblewrap waits forever for its child under an ignored SIGCHLD
    if cgroup is not None:
        cgroup.join()
    for name, value in rlimit_table(limits, per_user_nproc=drop_to is not None):
        try:
            resource.setrlimit(getattr(resource, name), value)
        except (ValueError, OSError, AttributeError):  # pragma: no cover - platform without that limit
            pass
    if drop_to is not None:
        drop_user(drop_to)


# How often a sandbox is started again when bubblewrap itself failed to set the sandbox up.
# bubblewrap copies the mount table, then remounts every mount below / read-only one by one; a
# run folder's tmpfs that another grind removes between the two (its run ended) makes that
# remount fail, and bubblewrap exits 1 before anything of the run starts (bubblewrap issue
# #650, seen once in CI's root mode at -n 3). Nothing of the learner's had run, so trying again
# cannot change a verdict.
BWRAP_TRIES = 3


def bwrap_lost_race(iso: Isolation, returncode: int | None, stderr: str, ready: bool) -> bool:
    """bubblewrap failed before the runner started: it exits 1 with its own "bwrap: " message,
    and the runner never said "ready" (which it says before any learner code exists)."""
    return bool(iso.bwrap) and not ready and returncode == 1 and stderr.startswith("bwrap: ")


def command(iso: Isolation, workdir: str, hidden: list[Path], serve: bool = False,
            writable: tuple[str, ...] = (), confine: Confinement | None = None) -> list[str]:
    """The child's command line: the runner, inside bubblewrap or sandbox-exec where present.
    (Landlock needs no wrapper: the runner confines itself before it runs any submission.)"""
    python = [sys.executable, "-I", "-X", "faulthandler", str(RUNNER), *(["--serve"] if serve else [])]
    if iso.macos and not iso.bwrap and confine is not None:
        return [iso.macos, "-p", landlock.macos_profile(confine["read"], confine["write"]), *python]
    if not iso.bwrap:
        return python
    argv = [iso.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--bind", workdir, workdir, "--unshare-all", "--die-with-parent", "--chdir", workdir]
    for path in writable:
        argv += ["--bind", path, path]
    for folder in hidden:
        if folder.is_dir() and not str(RUNNER).startswith(str(folder.resolve()) + os.sep):
            argv += ["--tmpfs", str(folder.resolve())]
    return argv + ["--", *python]


# ---------------------------------------------------------------------------------------------
# Every process a run leaves behind is found and killed, with or without cgroups.
#
# grind makes itself a child subreaper (Linux): a process that escapes its run's process group
# (setsid, a double fork) is re-parented to grind instead of init, so grind can see it and kill
# it. Only children grind did not start itself, in a session other than grind's, are killed:
# every run starts in its own session, and nothing a run starts can join grind's.

_SPAWN_LOCK = threading.Lock()
_KNOWN: set[int] = set()
@functools.lru_cache(maxsize=1)
def become_subreaper() -> bool:
    """grind itself a subreaper, once (the same prctl the child's waiter makes: judge.worker.process)."""
    return process.become_subreaper()


def spawn(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """Popen, registered as one of grind's own children (under the lock the sweep takes)."""
    become_subreaper()
    with _SPAWN_LOCK:
        proc = subprocess.Popen(argv, **kwargs)
        _KNOWN.add(proc.pid)
    return proc


def forget(pid: int) -> None:
    with _SPAWN_LOCK:
        _KNOWN.discard(pid)



def _descendants(roots: list[int]) -> list[int]:
    """``roots`` and every process below them, from one pass over /proc."""
    below: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            below.setdefault(parent, []).append(int(entry))
    found, todo = [], list(roots)
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += below.get(pid, [])
    return found


def sweep_orphans() -> int:
    """Kill and reap re-parented leftovers of runs; returns how many were killed.

    Each stray's whole tree is stopped, then killed: killing only the strays re-parented their
    children to grind one level per pass, and a chain of setsid'ed processes deeper than the
    passes outlived grind (without a pids cgroup nothing else bounds it). Stopped processes
    cannot fork while the tree is walked again."""
    if not become_subreaper():
        return 0
    killed = 0
    me, session = os.getpid(), os.getsid(0)
    for _ in range(1000):
        with _SPAWN_LOCK:
            strays = _strays(me, session)
            killed += _kill_trees(strays)
        for pid in strays:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        if not strays:
            break
    return killed


def _strays(me: int, session: int) -> list[int]:
    """grind's children it did not start itself, in another session than grind's (under the lock)."""
    strays = []
    for pid in children_of(me):
        try:
            if pid not in _KNOWN and os.getsid(pid) != session:
                strays.append(pid)
        except OSError:
            continue
    return strays


def _kill_trees(strays: list[int]) -> int:
    """Stop every process of the strays' trees (three passes: a tree cannot grow while stopped),
    then kill them all; returns how many of the strays themselves were killed."""
    tree: set[int] = set()
    for _ in range(3) if strays else ():
        for pid in _descendants(strays):
            if pid not in tree:
                tree.add(pid)
                try:
                    os.kill(pid, signal.SIGSTOP)
                except OSError:
                    pass
    killed = 0
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += pid in strays
        except OSError:
            pass
    return killed
