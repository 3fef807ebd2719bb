"""Process control shared by grind and its child: children from /proc, reaping, pids cgroups,
and the prctl switches (subreaper, parent-death signal, dumpable).

Stdlib only, and nothing of the judge: grind imports it as ``judge.worker.process`` (its orphan
sweep, a run's cgroup) and the child loads it with the rest of its package, by path
(``judge/worker/runner.py``), so neither side reaches into the other for it.
"""

from __future__ import annotations

import os
import sys
import time


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (a run's session: the child and what it forked)."""
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def default_sigchld() -> bool:
    """Take SIGCHLD's default disposition back if it came in ignored. A shell or a supervisor can
    pass an ignored SIGCHLD on through ``exec``, and every process inherits it: the kernel then
    reaps children itself, so their exit statuses are lost (grind's probes, a run's status) and
    bubblewrap waits forever for its own. A review's runs lost the Landlock level this way, and a
    trusted run counted none of its ranks' writes into the reference cache. Called from the main
    thread of grind's entry points (the console script, the daemon) and of the child's runner; a
    thread cannot change a disposition, so elsewhere it does nothing. True when SIGCHLD is still
    ignored afterwards (a thread's call)."""
    import signal

    try:
        if signal.getsignal(signal.SIGCHLD) != signal.SIG_IGN:
            return False
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        return False
    except (ValueError, OSError):  # not the main thread: it stays ignored
        return True
    except AttributeError:  # no SIGCHLD here
        return False


def die_with_parent() -> None:
    """SIGKILL this process when its parent dies (PR_SET_PDEATHSIG), so a run never outlives
    grind (Ctrl-C, a crash): the warm server dies with grind, each job with the server, the
    worker with its waiter. Without bubblewrap's --die-with-parent this is what holds."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        parent = os.getppid()
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # the parent died before the line above took effect
            os._exit(70)


def set_dumpable(dumpable: bool) -> None:
    """PR_SET_DUMPABLE: a process that is not dumpable has its /proc/<pid> files (fd/, mem,
    environ) closed to every process without CAP_SYS_PTRACE, same user included. The warm server
    is not dumpable while a job runs: under bubblewrap on a kernel without Landlock (no scoping),
    a job reopened the server's pipes to grind through /proc/<server>/fd/1 and wrote reply lines
    of its own, which grind took for its classmates' (red team 2, warm_reply_forge.py). It is
    dumpable again between jobs because it reads its own /proc/self/io for the witness, and a
    non-dumpable process's /proc files belong to root (mode 0400: unreadable to ``nobody``)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(4, int(dumpable), 0, 0, 0)  # PR_SET_DUMPABLE
        except (OSError, AttributeError):
            pass


def become_subreaper() -> bool:
    """PR_SET_CHILD_SUBREAPER: orphans of this process's descendants are re-parented to it, not
    to init, so it can find and kill them. True when the kernel agreed (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        return bool(ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def children_of(pid: int | None = None) -> list[int]:
    """The processes whose parent is ``pid`` (default: this one), from /proc. Shared with grind's
    own orphan sweep (judge.worker.isolation), which imports this stdlib-only file."""
    parent, found = os.getpid() if pid is None else pid, []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    if int(handle.read().rsplit(b")", 1)[1].split()[1]) == parent:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


def reap_children() -> None:
    """SIGKILL every child (orphans re-parented to this subreaper included) until none is left."""
    import signal

    while True:
        for pid in children_of():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def kill_cgroup(path: str) -> None:
    """SIGKILL every process in a pids cgroup, once, without waiting (see empty_cgroup)."""
    import signal

    try:
        with open(os.path.join(path, "cgroup.procs")) as handle:
            pids = [int(p) for p in handle.read().split()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def empty_cgroup(path: str) -> None:
    """SIGKILL every process in a pids cgroup and in the cgroups below it (a warm server's jobs,
    its waiting spare's among them) until it is empty, then remove it, the ones below first."""
    try:
        below = [entry.path for entry in os.scandir(path) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        below = []
    for child in below:
        empty_cgroup(child)
    for _ in range(200):
        if not os.path.isdir(path):
            return
        kill_cgroup(path)
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.01)
