"""The child's own process control: the shielding waiter in front of a run (a subreaper that
reaps, and reports the run's figures as its witness) and the confinement a run puts itself under
(a private network namespace, Landlock, the seccomp filter) before any submission runs.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .. import kernel as _kernel
from .. import landlock as _landlock
from .. import witness as _witness
from ..process import become_subreaper, die_with_parent, reap_children


def shield_parent(witness_fd: int | None = None) -> None:
    """Fork once, so that the process the submission sees as its parent is this small waiter and
    not the judge: ``os.kill(os.getppid(), SIGKILL)`` then only ends the run (a crash verdict)
    instead of killing grind. The waiter is also a child subreaper: every process the run leaves
    behind (a ``setsid()`` grandchild, a double fork) is re-parented to it and killed when the
    worker ends. Under Landlock the worker confines itself after this fork, so it cannot signal
    the waiter. The waiter mirrors the worker's exit status, signals included.

    With ``witness_fd`` (a pipe to grind that only the waiter keeps: the worker closes it before
    any learner code exists), the waiter is also the run's witness: once it has reaped every
    process of the run, it reports the run's traffic and writes there (see witness.py)."""
    become_subreaper()
    before = _witness.sample() if witness_fd is not None else {}
    _take_the_run_down_with_parent()
    pid = os.fork()
    if pid == 0:
        import signal

        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the waiter's handler is not the worker's
        die_with_parent()
        if witness_fd is not None:
            os.close(witness_fd)
        return
    status = None
    while status is None:
        try:
            done, code = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if done == pid:
            status = code
    reap_children()
    if witness_fd is not None:
        _witness.report(witness_fd, _witness.since(before))
    code = os.waitstatus_to_exitcode(status) if status is not None else 70
    if code < 0:
        import signal

        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def _take_the_run_down_with_parent() -> None:
    """In the waiter: when grind (our parent) dies, kill every process of the run, then go.

    The waiter used to die with SIGKILL (die_with_parent), which the worker followed, but not a
    double-forked ``setsid()`` grandchild of the learner: re-parented to init once its subreaper
    was gone, it kept running with no wall clock and no disk watch, in a run folder the next grind
    sweeps as abandoned (red team 2, sweep_survivor_submission.py; as root bubblewrap's PID
    namespace ended it, not on a laptop). Now the parent-death signal is SIGTERM, caught: the
    waiter, still the subreaper of everything the run left, kills its children until none is left
    (reap_children), then exits. A learner that can signal the waiter (no Landlock scoping) only
    ends its own run this way, as with SIGKILL before. Set before the fork, so that no moment
    exists where learner code runs under a waiter that would die without taking it along."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    def orphaned(signum: int = 0, frame: Any = None) -> None:
        reap_children()
        os._exit(70)

    parent = os.getppid()
    signal.signal(signal.SIGTERM, orphaned)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # grind died before the line above took effect
        orphaned()


_private_net: bool | None = None  # this process tree's own network namespace: None until tried


def private_network(rules: dict[str, Any] | None) -> None:
    """This process tree's own network namespace, where the rules ask for one: made once."""
    global _private_net
    if rules and rules.get("private_net") and _private_net is None:
        _private_net = _kernel.private_network()


def confine(rules: dict[str, Any] | None) -> None:
    """Confine this process (and what it starts) with Landlock before any submission runs. A
    kernel that refuses is not a reason to run unconfined: exit, and grind says why."""
    if not rules:
        return
    try:
        # TCP only where it cannot leave the run: bubblewrap's network namespace, or one of our
        # own (distributed cases need loopback TCP between their ranks; see kernel.py). Made
        # once per process tree: a warm server makes it before its own Landlock layer (which
        # would deny writing a new namespace's uid map), and its jobs, forks run one at a time
        # and killed to the last process after each, share it.
        private_network(rules)
        tcp = bool(rules.get("loopback_tcp")) or (bool(rules.get("private_net")) and bool(_private_net))
        _kernel.drop_capabilities()  # root in a container: a uid, not CAP_SYS_ADMIN (see there)
        if rules.get("landlock", True):  # False: bubblewrap on a kernel without it (the filter still holds)
            _landlock.restrict(rules["read"], rules["write"], list_only=rules.get("list") or [], deny_tcp=not tcp)
        _kernel.seccomp_filter(inet=tcp)  # doors Landlock leaves open (unix sockets, io_uring, UDP, ...)
    except OSError as exc:
        print(f"grind-confine: {exc}", file=sys.stderr, flush=True)
        os._exit(71)
