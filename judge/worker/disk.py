"""The total disk one run may write, at every isolation level.

RLIMIT_FSIZE bounds each file, not their number: a submission writing 64 MB files in a loop (or
keeping them open after unlinking them) fills the disk grind and the learner share. Two layers:

- **A size-limited tmpfs on the run's folder**, where grind may mount one (it runs as root, at
  the ``bubblewrap`` and ``landlock`` levels alike). The kernel then refuses the byte past the
  cap (ENOSPC), files unlinked while open included, since tmpfs frees their pages only when the
  last descriptor closes. A warm server's folder gets one tmpfs: its jobs run one at a time and
  each job's folder is removed before the next one starts, so the cap holds per job.
- **A watch from grind's side** (:class:`DiskWatch`), everywhere: every few tenths of a second
  it adds up the blocks the run's folder holds (a walk that follows no link) and the blocks of
  files that the run's processes hold open after unlinking them (``/proc/PID/fd``, where the
  kernel lets grind read it: same user and a dumpable process, or root). Past the cap it kills
  the run, and the verdict says "disk limit". On a tmpfs the file system's own count is read
  instead (statvfs: exact, unlinked files included).

Nothing here imports torch; every path the run left is hostile (no link is followed).
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys
import threading
from typing import Callable

MS_NOSUID, MS_NODEV = 2, 4
MNT_DETACH = 2
POLL_S = 0.2
WALK_CAP = 200_000  # entries looked at per poll: a folder of millions of files is over by itself
_MOUNTED: set[str] = set()  # the tmpfs mounts this process made (see unmount)
_LOCK = threading.Lock()


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def mount_tmpfs(path: str, cap_bytes: int, uid: int | None) -> bool:
    """Mount a tmpfs of ``cap_bytes`` on ``path`` (an empty folder grind just made), owned by the
    run's user, mode 0700. False where it cannot be done (not Linux, not root, a container that
    refuses mounts): the watch alone then holds the cap."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    libc = _libc()
    if libc is None:
        return False
    owner = os.geteuid() if uid is None else uid
    options = f"size={max(cap_bytes, 1 << 20)},nr_inodes=65536,mode=0700,uid={owner},gid={owner}"
    if libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()) != 0:
        return False
    with _LOCK:
        _MOUNTED.add(path)
    return True


def unmount(path: str) -> None:
    """Detach a tmpfs mounted on a run's folder (its contents go with it), if one is there: ours,
    or one left by a grind that was killed (the sweep of grind-warm-* folders comes here too)."""
    with _LOCK:
        ours = path in _MOUNTED
        _MOUNTED.discard(path)
    if not ours and not (os.geteuid() == 0 and os.path.ismount(path)):
        return
    libc = _libc()
    if libc is not None:
        libc.umount2(path.encode(), MNT_DETACH)


def is_tmpfs_cap(path: str) -> bool:
    with _LOCK:
        return path in _MOUNTED


def folder_bytes(path: str, cap: int | None = None) -> int:
    """Bytes on disk under ``path`` (allocated blocks, so a sparse file counts what it holds),
    walking folders one open descriptor at a time, following no link. Stops early past ``cap``."""
    total, seen, stack = 0, 0, [path]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += info.st_blocks * 512
                    if stat.S_ISDIR(info.st_mode):
                        stack.append(entry.path)
                    if (cap is not None and total > cap) or seen > WALK_CAP:
                        return total
        except OSError:
            continue
    return total


def unlinked_open_bytes(pids: list[int]) -> int:
    """Bytes of regular files that ``pids`` hold open after unlinking them (invisible to a walk).
    A process grind may not inspect (another user, or one that made itself non-dumpable) counts
    nothing: the README says so."""
    total, counted = 0, set()
    for pid in pids:
        base = f"/proc/{pid}/fd"
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            try:
                if not os.readlink(f"{base}/{name}").endswith(" (deleted)"):
                    continue
                info = os.stat(f"{base}/{name}")
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in counted:
                counted.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def descendants(root: int) -> list[int]:
    """``root`` and every process below it, from one pass over /proc (the run's processes)."""
    below: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            below.setdefault(int(fields[1]), []).append(int(name))
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(below.get(pid, []))
    return found


def used_bytes(path: str, pids: list[int], cap: int) -> int:
    """What the run holds on disk now: the tmpfs's own count where grind mounted one (exact),
    else the walk plus the unlinked files its processes keep open."""
    if is_tmpfs_cap(path):
        try:
            info = os.statvfs(path)
            return (info.f_blocks - info.f_bfree) * info.f_frsize
        except OSError:
            return 0
    used = folder_bytes(path, cap)
    return used if used > cap else used + unlinked_open_bytes(pids)


def limit_message(cap_bytes: int) -> str:
    return (f"the disk limit of {cap_bytes >> 20} MB was reached: the run wrote more than that in all "
            "(every file it wrote counts, and every file it still held open after deleting it)")


class DiskWatch(threading.Thread):
    """Polls a run's disk use from grind's side and calls ``kill`` once it is past ``cap_bytes``.

    ``pids`` names the run's processes on each poll (for files unlinked while open). The watch
    only ever stops a run: a verdict is never made better by it."""

    def __init__(self, path: str, cap_bytes: int, kill: Callable[[], None],
                 pids: Callable[[], list[int]] = list) -> None:
        super().__init__(daemon=True, name="grind-disk-watch")
        self.path, self.cap, self.kill, self.pids = path, cap_bytes, kill, pids
        self.exceeded = False
        self.peak = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(POLL_S) and os.path.isdir(self.path):  # gone: the run is over
            self.check()

    def check(self) -> bool:
        """One look (also called once more when the run ends, so a short burst is not missed)."""
        if self.exceeded:
            return True
        try:
            used = used_bytes(self.path, self.pids() if not is_tmpfs_cap(self.path) else [], self.cap)
        except Exception:  # noqa: BLE001 - a watch that fails must not become grind's error
            return False
        self.peak = max(self.peak, used)
        # On a tmpfs of exactly the cap, "full" is the kernel refusing the next write.
        full = used >= self.cap - (1 << 20) if is_tmpfs_cap(self.path) else used > self.cap
        if full:
            self.exceeded = True
            try:
                self.kill()
            except Exception:  # noqa: BLE001
                pass
        return self.exceeded

    def stop(self) -> bool:
        """Stop watching; True if the run went over the cap. One last look is taken after the
        run's end, so a burst written between two polls is not missed."""
        self._halt.set()
        if self.is_alive():
            self.join(timeout=5)
        return self.check()
