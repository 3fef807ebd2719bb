"""Counters the kernel keeps about a run, read by a process that runs no learner code.

Why this exists: some mistakes leave the numbers right and show only in *how* the code ran. An
answer that all-reduces every microbatch gets the same gradients as one that all-reduces once;
a checkpoint written by every rank holds the same bytes as one written by rank 0. Counting such
things inside the learner's process (a comm hook, a wrapped ``torch.save``) gives a number that
the learner's code can rewrite (``sys._getframe``, ``gc``, ``ctypes``): a wrong answer did, and
passed. The kernel's own counters cannot be lowered from inside a run:

- **traffic**: bytes sent on the loopback interface of the run's own network namespace
  (``/proc/self/net/dev``). Every gloo collective between ranks crosses it; a fresh namespace
  starts at zero and nothing outside the run shares it (bubblewrap's, or the private one the
  run makes where bubblewrap is absent).
- **writes**: bytes the run's processes passed to ``write(2)`` and kin (``wchar`` in
  ``/proc/<pid>/io``). A process that exits is folded into the one that reaps it, so a reaper
  that outlives the run holds the whole run's figure.

A submission can only make either figure larger (send more, write more), never smaller, so a
figure at most the reference's is honest and a larger one is the submission's own doing. Who
reads them: the waiter in front of a cold run (it reaps the whole run, then reports on a pipe
only it holds) and the warm server for its jobs; both run the judge's code only, outside the
learner's Landlock domain. A trusted job (the reference, the pitfalls) measures its subjects
itself: no learner code runs there.

Standard library only; the child loads this file by path, like its siblings.
"""

from __future__ import annotations

import os


def loopback_bytes() -> int | None:
    """Bytes sent on ``lo`` in this process's network namespace, or None where unreadable."""
    try:
        with open("/proc/self/net/dev", "rb") as handle:
            for line in handle:
                name, sep, rest = line.partition(b":")
                if sep and name.strip() == b"lo":
                    return int(rest.split()[8])  # 8 receive fields, then transmitted bytes
    except (OSError, ValueError, IndexError):
        pass
    return None


def written_bytes(pid: int | str = "self") -> int | None:
    """``wchar`` of a process: what it and every child it has reaped passed to write(2)."""
    try:
        with open(f"/proc/{pid}/io", "rb") as handle:
            for line in handle:
                if line.startswith(b"wchar:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def sample() -> dict[str, int | None]:
    """Both counters of this process, as the witness reports them."""
    return {"traffic": loopback_bytes(), "writes": written_bytes()}


def since(before: dict[str, int | None]) -> dict[str, int | None]:
    """What happened between ``before`` and now (never negative; None where unreadable). What a
    run printed is among its writes here: grind, which drained it, takes it off (up to an
    allowance: see sandbox.less_printed)."""
    now = sample()
    out: dict[str, int | None] = {}
    for key, value in now.items():
        start = before.get(key)
        out[key] = None if value is None or start is None else max(value - start, 0)
    return out


def report(fd: int, figures: dict[str, int | None]) -> None:
    """Write the figures as one JSON line on the witness pipe, and close it."""
    import json

    try:
        os.write(fd, (json.dumps(figures) + "\n").encode())
    except OSError:
        pass
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
