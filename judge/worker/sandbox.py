"""The parent side of the worker: start an isolated child, enforce limits, read back data.

Nothing here imports torch, and nothing the child wrote is executed or unpickled. Every byte that
comes back from the child's folder is hostile: files are opened only if they are regular files
(never following a link, never blocking on a FIFO), their size is capped before reading, and
every parse error becomes a ``crashed`` outcome naming what was wrong (see ``protocol``). Control
messages ("ready", "case ...") travel over a pipe, and every deadline runs on grind's clock.

Which isolation layers wrap the child is decided in ``judge.worker.isolation``. The rooms of the
parent's side: ``outputs`` (what comes back, as hostile bytes), ``folders`` (a run's folder),
``warm`` (the fork server); this module is the cold path, and the one name the rest of grind
imports them by.
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import select
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from judge.worker import disk
from judge.worker.folders import (  # noqa: F401 - re-exported: tests and the CLI ask the sandbox
    _make_workdir,
    hold_folder,
    release_folder,
    remove_tree,
    stage_job,
    sweep_warm_folders,
)
from judge.worker.isolation import (  # noqa: F401 - re-exported: tests and the CLI ask the sandbox
    BWRAP_TRIES,
    RUNNER,
    Isolation,
    PidsCgroup,
    bwrap_lost_race,
    can_bound_processes,
    command,
    confinement,
    drop_user,
    forget,
    isolation,
    limit_child,
    rlimit_table,
    scrubbed_env,
    spawn,
    sweep_orphans,
)
from judge.worker.outputs import (  # noqa: F401 - re-exported: tests and the CLI ask the sandbox
    OBSERVATIONS_CAP,
    PRINT_ALLOWANCE,
    RESULT_CAP,
    STARTUP_FAILED,
    _CappedReader,
    _conclude,
    _confine_failed,
    _ControlReader,
    _over_disk,
    _witnessed,
    less_printed,
    load_observations,
    read_regular,
)
from judge.worker.process import kill_group
from judge.worker.protocol import Job, Limits, RunOutcome  # noqa: F401 - Limits, RunOutcome: re-exported
from judge.worker.settings import STARTUP_LIMIT_S  # noqa: F401 - re-exported
from judge.worker.warm import WarmWorker  # noqa: F401 - re-exported

# The one name the rest of grind imports the worker's parent side by (explicit, for mypy --strict).
__all__ = [
    "OBSERVATIONS_CAP", "PRINT_ALLOWANCE", "RESULT_CAP", "RUNNER", "STARTUP_FAILED", "STARTUP_LIMIT_S", "Isolation",
    "Limits", "PidsCgroup", "RunOutcome", "WarmWorker", "can_bound_processes", "command", "confinement",
    "hold_folder", "isolation", "less_printed", "load_observations", "read_regular", "release_folder",
    "remove_tree", "run_job", "scrubbed_env", "spawn", "stage_job", "sweep_orphans", "sweep_warm_folders",
]


def run_job(job: Job, limits: Limits, hidden: list[Path] | None = None) -> RunOutcome:
    """Run one job in a fresh, limited child and return what it observed.

    ``hidden`` folders (the solutions, the cache, a class folder) are out of the child's reach
    where the level allows (bubblewrap hides them, Landlock never grants them). The temp
    directory (the child's cwd and HOME) is removed whatever happens, and every process the run
    started is killed. A sandbox bubblewrap could not set up is set up again (BWRAP_TRIES).
    """
    for _ in range(BWRAP_TRIES):
        outcome, lost_race = _run_once(job, limits, hidden)
        if not lost_race:
            break
    return outcome


def prestart(hidden: list[Path], limits: Limits, witnessed: bool = False,
             meanwhile: Callable[[], None] | None = None) -> None:
    """Start the child of the next job with these ``hidden`` folders and ``limits`` now, before
    the job exists: a cold ``grind run`` calls this as soon as it knows the exercise, and its
    child imports torch (about a second) while grind builds the job (the pipeline's imports, the
    cache key, the staged source), instead of after.

    The child is the one ``run_job`` would start, with the same command, limits, cgroup and
    confinement: a child confines itself and imports torch before it reads its job (runner.py),
    so nothing in it depends on the job. The first ``run_job`` with the same ``hidden``,
    ``limits`` and witness takes it; any other job starts its own. One not taken is killed, and
    its folder removed, when grind exits. A prestart that fails does nothing: the job's own
    start then fails, or not, and says why.

    ``meanwhile`` runs once the job is sent, while grind waits for the child: what grind needs
    after it (the modules that record the attempt and draw the verdict) loads then, not after."""
    global _PRESTARTED
    with _PRESTART_LOCK:
        if _PRESTARTED is not None:
            return
        try:
            _PRESTARTED = _ColdStart.begin(limits, list(hidden), witnessed)
            _PRESTARTED.meanwhile = meanwhile
        except Exception:  # noqa: BLE001 - the job's own start reports any problem, in its own words
            return
        if not _AT_EXIT:
            atexit.register(drop_prestarted)
            _AT_EXIT.append(True)


_PRESTART_LOCK = threading.Lock()
_PRESTARTED: _ColdStart | None = None
_AT_EXIT: list[bool] = []  # drop_prestarted registered with atexit (once per process)


def _take_prestarted(limits: Limits, hidden: list[Path], witnessed: bool) -> _ColdStart | None:
    global _PRESTARTED
    with _PRESTART_LOCK:
        start = _PRESTARTED
        if start is None or start.key != (limits, tuple(hidden), witnessed) or start.child.proc is None \
                or start.child.proc.poll() is not None:
            return None
        _PRESTARTED = None
        return start


def drop_prestarted() -> None:
    """A prestarted child no job took (a static verdict, an error) killed, its folder removed: by
    its caller once its grade is over, and at exit whatever happened."""
    global _PRESTARTED
    with _PRESTART_LOCK:
        start, _PRESTARTED = _PRESTARTED, None
    if start is not None:
        start.close()


def _run_once(job: Job, limits: Limits, hidden: list[Path] | None) -> tuple[RunOutcome, bool]:
    """One try of run_job: the outcome, and whether bubblewrap lost the mount-table race."""
    hidden = hidden or []
    witnessed = bool(job.get("witness"))
    start = _take_prestarted(limits, hidden, witnessed) or _ColdStart.begin(limits, hidden, witnessed)
    try:
        return _observe(start, job, limits)
    finally:
        start.close()


class _ColdStart:
    """A cold child started and confined, waiting for its job: its folder, its pipes, its
    process and cgroup (``child``), and the readers already draining its output.

    The child is told how to confine itself in a first line on its stdin, sent at once; its job
    follows in a second line whenever it is ready (``_observe``). Between the two it imports
    torch: that is what lets ``prestart`` start it before the job exists."""

    def __init__(self, key: tuple[Any, ...], workdir: str, child: _ColdChild, witness_r: int,
                 readers: tuple[_CappedReader, _CappedReader, _ControlReader]) -> None:
        self.key, self.workdir, self.child, self.witness_r = key, workdir, child, witness_r
        self.out, self.err, self.control = readers
        self.closed = False
        self.meanwhile: Callable[[], None] | None = None

    @classmethod
    def begin(cls, limits: Limits, hidden: list[Path], witnessed: bool) -> _ColdStart:
        iso = isolation()
        workdir = _make_workdir(iso, disk_mb=limits.disk_mb)
        control_r, control_w = os.pipe()
        # A witnessed exercise: the waiter in front of the run reports its traffic and writes on a
        # pipe of its own, which the worker closes before any learner code exists (witness.py).
        witness_r, witness_w = os.pipe() if witnessed else (-1, -1)
        macos = confinement(hidden, workdir) if iso.macos and not iso.bwrap else None
        child = _ColdChild(PidsCgroup.create(limits.processes))
        try:
            try:
                cgroup = child.cgroup
                proc = child.proc = spawn(
                    command(iso, workdir, hidden, confine=macos),
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    cwd=workdir, env=scrubbed_env(workdir), start_new_session=True,
                    pass_fds=(control_w,) + ((witness_w,) if witness_w >= 0 else ()),
                    preexec_fn=lambda: limit_child(limits, iso.drop_to, cgroup),
                )
            finally:
                os.close(control_w)
                if witness_w >= 0:
                    os.close(witness_w)
        except BaseException:
            os.close(control_r)
            if witness_r >= 0:
                os.close(witness_r)
            child.end()
            remove_tree(workdir)
            raise
        readers = (_CappedReader(proc.stdout, limits.output_bytes), _CappedReader(proc.stderr, limits.output_bytes),
                   _ControlReader(control_r))
        start = cls((limits, tuple(hidden), witnessed), workdir, child, witness_r, readers)
        try:
            for reader in readers:
                reader.start()
            # Inside bubblewrap's PID namespace the child's parent is the namespace's init, which
            # it cannot kill; the waiter that shields (and reaps for) grind is only needed without it.
            setup = {"control_fd": control_w, "shield": not iso.bwrap,
                     "confine": confinement(hidden, workdir) if iso.confines else None}
            if witness_w >= 0:
                setup["witness_fd"] = witness_w
            start.send(setup)  # a few hundred bytes: the pipe holds it, whatever the child is doing
        except BaseException:
            start.close()
            raise
        return start

    def send(self, message: Mapping[str, Any]) -> bool:
        """One line to the child's stdin; False when it is gone."""
        assert self.child.proc is not None and self.child.proc.stdin is not None
        try:
            self.child.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.child.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def send_last(self, job: Job) -> None:
        """The job, the last line the child reads: its stdin is closed after it."""
        if self.send(job):
            assert self.child.proc is not None and self.child.proc.stdin is not None
            try:
                self.child.proc.stdin.close()
            except OSError:
                pass

    def close(self) -> None:
        """Once: the child's group killed and reaped, its cgroup emptied, its folder removed."""
        if self.closed:
            return
        self.closed = True
        if self.witness_r >= 0:
            os.close(self.witness_r)
        try:
            if self.child.proc is not None and self.child.proc.stdin is not None:
                self.child.proc.stdin.close()
        except OSError:
            pass
        self.child.end()
        sweep_orphans()
        remove_tree(self.workdir)


def _observe(start: _ColdStart, job: Job, limits: Limits) -> tuple[RunOutcome, bool]:
    """Send the job, watch the child to its end on grind's clock, and read what it left (and
    whether bubblewrap failed to start it: bwrap_lost_race)."""
    iso = isolation()
    proc, workdir, control = start.child.proc, start.workdir, start.control
    assert proc is not None
    token = secrets.token_hex(16)
    staged = stage_job(job, workdir, iso)
    staged.update(Job(token=token, out_dir=workdir, time_limit=limits.wall_s))
    dispatched = time.monotonic()
    watch = disk.DiskWatch(workdir, limits.disk_mb << 20, kill=lambda: kill_group(proc.pid),
                           pids=lambda: disk.descendants(proc.pid))
    watch.start()
    # The job's line goes in a thread: a job larger than the pipe would otherwise hold grind here
    # until the child, still importing torch, reads it, and off the clock that ends a stuck one.
    sender = threading.Thread(target=start.send_last, args=(staged,), daemon=True)
    sender.start()
    timed_out = _wait(proc, control, dispatched, limits.wall_s, start.meanwhile)
    start.child.stop()  # the whole group: the child, and anything it forked or left behind
    for reader in (start.out, start.err, control):
        reader.join(timeout=2)
    out, err = start.out, start.err
    lost_race = not timed_out and bwrap_lost_race(iso, proc.returncode, err.text(), control.ready_at is not None)
    outcome = RunOutcome(status="ok", stdout=out.text(), stderr=err.text(), returncode=proc.returncode,
                         duration_s=time.monotonic() - dispatched, last_case=control.last_case,
                         witness=_witnessed(start.witness_r, out.total + err.total))
    if iso.bwrap and outcome.returncode is not None and outcome.returncode > 128:
        outcome.returncode = 128 - outcome.returncode  # bwrap reports a signal as 128 + N
    _confine_failed(outcome)
    return _over_disk(_conclude(outcome, workdir, token, limits, timed_out, started=control.ready_at is not None
                                or not timed_out), watch.stop(), limits), lost_race


def _wait(proc: subprocess.Popen[bytes], control: _ControlReader, dispatched: float, wall_s: float,
          meanwhile: Callable[[], None] | None = None) -> bool:
    """Wait for the child on grind's clock (the startup limit until "ready", then the wall clock);
    True when it ran out of time. ``meanwhile`` runs once, first (see ``prestart``).

    The child's end wakes the wait at once where the kernel gives a process descriptor (Linux
    5.3): ``Popen.wait``'s polling, with sleeps growing to tens of milliseconds, noticed it 5-25
    ms late on every cold run. The deadline is looked at again at least every 50 ms ("ready"
    moves it)."""
    if meanwhile is not None:
        try:
            meanwhile()
        except Exception:  # noqa: BLE001 - a preload that fails is done again, and reported, where it is needed
            pass
    exited = _pidfd(proc.pid)
    try:
        while proc.poll() is None:
            now = time.monotonic()
            deadline = dispatched + STARTUP_LIMIT_S if control.ready_at is None else control.ready_at + wall_s
            if now >= deadline:
                return True
            step = min(0.05, max(deadline - now, 0.001))
            if exited is not None:
                select.select([exited], [], [], step)  # readable once the child has ended
                continue
            try:
                proc.wait(timeout=step)
            except subprocess.TimeoutExpired:
                pass
        return False
    finally:
        if exited is not None:
            os.close(exited)


def _pidfd(pid: int) -> int | None:
    """A process descriptor for ``pid`` (Linux 5.3), or None: then ``Popen.wait`` polls, as before."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:  # an old kernel (ENOSYS), or the child already reaped
        return None


class _ColdChild:
    """A cold run's process and its pids cgroup, each ended exactly once, whatever happens."""

    def __init__(self, cgroup: PidsCgroup | None) -> None:
        self.cgroup = cgroup
        self.proc: subprocess.Popen[bytes] | None = None

    def stop(self) -> None:
        """Kill the run's group, empty its cgroup, and reap the child."""
        assert self.proc is not None
        kill_group(self.proc.pid)
        if self.cgroup is not None:
            self.cgroup.destroy()
            self.cgroup = None
        self.proc.wait()

    def end(self) -> None:
        """Whatever is left (an interrupted run, Ctrl-C: nothing may stay), and grind's record of it."""
        if self.proc is not None and self.proc.returncode is None:
            kill_group(self.proc.pid)
            self.proc.wait()
        if self.cgroup is not None:
            self.cgroup.destroy()
        if self.proc is not None:
            forget(self.proc.pid)
