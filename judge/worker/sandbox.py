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

import json
import os
import secrets
import subprocess
import time
from pathlib import Path

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


def _run_once(job: Job, limits: Limits, hidden: list[Path] | None) -> tuple[RunOutcome, bool]:
    """One try of run_job: the outcome, and whether bubblewrap lost the mount-table race."""
    iso = isolation()
    workdir = _make_workdir(iso, disk_mb=limits.disk_mb)
    token = secrets.token_hex(16)
    control_r, control_w = os.pipe()
    # A witnessed exercise: the waiter in front of the run reports its traffic and writes on a
    # pipe of its own, which the worker closes before any learner code exists (witness.py).
    witness_r, witness_w = os.pipe() if job.get("witness") else (-1, -1)
    job = _cold_job(job, workdir, token, control_w, witness_w, limits, hidden or [])
    macos = confinement(hidden or [], workdir) if iso.macos and not iso.bwrap else None
    child = _ColdChild(PidsCgroup.create(limits.processes))
    try:
        try:
            cgroup = child.cgroup
            proc = child.proc = spawn(
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
        return _observe(child, proc, job, workdir, control_r, witness_r, limits)
    finally:
        if witness_r >= 0:
            os.close(witness_r)
        child.end()
        sweep_orphans()
        remove_tree(workdir)


def _observe(child: _ColdChild, proc: subprocess.Popen[bytes], job: Job, workdir: str, control_r: int,
             witness_r: int, limits: Limits) -> tuple[RunOutcome, bool]:
    """Send the job, watch the child to its end on grind's clock, and read what it left (and
    whether bubblewrap failed to start it: bwrap_lost_race)."""
    iso = isolation()
    token = job["token"]
    dispatched = time.monotonic()
    out, err = _CappedReader(proc.stdout, limits.output_bytes), _CappedReader(proc.stderr, limits.output_bytes)
    control = _ControlReader(control_r)
    watch = disk.DiskWatch(workdir, limits.disk_mb << 20, kill=lambda: kill_group(proc.pid),
                           pids=lambda: disk.descendants(proc.pid))
    for reader in (out, err, control, watch):
        reader.start()
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(job).encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    timed_out = _wait(proc, control, dispatched, limits.wall_s)
    child.stop()  # the whole group: the child, and anything it forked or left behind
    for reader in (out, err, control):
        reader.join(timeout=2)
    lost_race = not timed_out and bwrap_lost_race(iso, proc.returncode, err.text(), control.ready_at is not None)
    outcome = RunOutcome(status="ok", stdout=out.text(), stderr=err.text(), returncode=proc.returncode,
                         duration_s=time.monotonic() - dispatched, last_case=control.last_case,
                         witness=_witnessed(witness_r, out.total + err.total))
    if iso.bwrap and outcome.returncode is not None and outcome.returncode > 128:
        outcome.returncode = 128 - outcome.returncode  # bwrap reports a signal as 128 + N
    _confine_failed(outcome)
    return _over_disk(_conclude(outcome, workdir, token, limits, timed_out, started=control.ready_at is not None
                                or not timed_out), watch.stop(), limits), lost_race


def _cold_job(job: Job, workdir: str, token: str, control_w: int, witness_w: int, limits: Limits,
              hidden: list[Path]) -> Job:
    """The job as a cold child gets it: staged in its folder, with its token, pipes and rules."""
    iso = isolation()
    confine = confinement(hidden, workdir) if iso.confines else None
    # Inside bubblewrap's PID namespace the child's parent is the namespace's init, which it
    # cannot kill; the waiter that shields (and reaps for) grind is only needed without it.
    job = stage_job(job, workdir, iso)
    job.update(Job(token=token, out_dir=workdir, control_fd=control_w, time_limit=limits.wall_s,
                   shield=not iso.bwrap, confine=confine))
    if witness_w >= 0:
        job["witness_fd"] = witness_w
    return job


def _wait(proc: subprocess.Popen[bytes], control: _ControlReader, dispatched: float, wall_s: float) -> bool:
    """Wait for the child on grind's clock (the startup limit until "ready", then the wall clock);
    True when it ran out of time."""
    while proc.poll() is None:
        now = time.monotonic()
        deadline = dispatched + STARTUP_LIMIT_S if control.ready_at is None else control.ready_at + wall_s
        if now >= deadline:
            return True
        try:
            proc.wait(timeout=min(0.05, max(deadline - now, 0.001)))
        except subprocess.TimeoutExpired:
            pass
    return False


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
