"""A run's folder: made (a tmpfs where grind may mount one), staged with the job's sources,
held while grind lives, removed whatever the submission left in it, and swept by the next grind
when a grader was killed before it could remove its own.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from typing import Any

from judge.worker import disk, protocol
from judge.worker.isolation import Isolation, isolation
from judge.worker.outputs import _open_dir
from judge.worker.protocol import Job


def remove_tree(path: str) -> None:
    """Delete a run's folder whatever the submission left in it, and never raise.

    The submission owns the folder's contents: it may lock parts of it (``chmod 0`` on a
    subfolder would make a plain rmtree leave it behind for good), nest folders thousands deep
    (os.walk and, before Python 3.12, shutil.rmtree recurse: a RecursionError there was grind's
    internal error, with the run's files left on disk), and, while grind removes the folder, a
    process of the run's user that outlived it may move folders around in it. So the walk is
    iterative, relative to open folders (no path grows past PATH_MAX), and never climbs with
    ``..`` (see _remove_tree_iteratively). There is no ``rm -rf`` fallback any more: what the
    walk cannot remove (an immutable file, a mount point) ``rm`` cannot either, and a second
    walker would be a second thing to keep from escaping."""
    disk.unmount(path)  # a run folder on a tmpfs of its own: its contents go with the mount
    try:
        _remove_tree_iteratively(path)
    except Exception:  # noqa: BLE001 - cleaning up must not turn a verdict into an error
        pass
    release_folder(path)  # a cold run's folder was held until now (see hold_folder)


_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
_CHECKPOINT = 64  # _remove_tree_iteratively keeps one descriptor per this many levels, and one chunk's


def _key(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _open_folder(name: str, parent: int | None, key: tuple[int, int] | None = None) -> int:
    """Open the folder ``name`` (never a link, never another folder than ``key`` when given) and
    make it ours to list and empty: the submission may have locked it (chmod 0, or 0o500 so that
    nothing in it can be removed). A locked folder is unlocked through an O_PATH descriptor of it
    (``/proc/self/fd``): a chmod by name would follow a link swapped in for it meanwhile."""
    try:
        fd = os.open(name, _DIRECTORY, dir_fd=parent)
    except PermissionError:
        pinned = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        try:
            info = os.fstat(pinned)
            if not stat.S_ISDIR(info.st_mode) or (key is not None and _key(info) != key):
                raise FileNotFoundError(name)  # not the folder seen a moment ago
            os.chmod(f"/proc/self/fd/{pinned}", 0o700)
            # Through the descriptor's own magic link (O_NOFOLLOW would refuse it: it is a link),
            # which leads to the pinned folder whatever its name holds now; checked again below.
            fd = os.open(f"/proc/self/fd/{pinned}", _DIRECTORY & ~os.O_NOFOLLOW)
        finally:
            os.close(pinned)
    try:
        info = os.fstat(fd)
        if key is not None and _key(info) != key:
            raise FileNotFoundError(name)  # moved away and replaced meanwhile: not the folder we saw
        os.fchmod(fd, 0o700)
    except FileNotFoundError:
        os.close(fd)
        raise
    except OSError:
        pass
    return fd


def _remove_tree_iteratively(path: str) -> None:
    """Empty and remove ``path`` without ever leaving it.

    The walk used to climb back with ``open("..")``: a folder moved elsewhere while the walk was
    inside it (a race a surviving process of the run's user can run, with the sweep as root) made
    it climb out of the tree and empty the folders above it, files outside every run folder and
    grind's own live run folder among them. Now every level is reached from the one above it by
    name and left by going back to the open descriptor of the one above: no ``..``, no link
    followed (O_NOFOLLOW, dir_fd), no other file system entered (a mount point stays). A folder
    moved away while the walk is in it is emptied wherever it went (what it holds is the mover's
    anyway), never what is above the tree. To stay iterative however deep the tree is without
    one descriptor per level, only every _CHECKPOINT-th level and the current chunk keep theirs;
    a level whose descriptor was closed is re-opened by name from the one above it, each step
    checked against the (st_dev, st_ino) seen on the way down (see _reopen)."""
    try:
        top = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(top.st_mode):
        os.unlink(path)
        return
    root = _open_folder(path, None, _key(top))
    device = top.st_dev
    # one entry per level from ``path`` down: [name, (st_dev, st_ino), descriptor or None]
    levels: list[list[Any]] = [[path, _key(top), root]]
    stuck: set[tuple[int, int]] = set()  # folders that could not be opened or removed: not again
    try:
        while levels:
            below = _empty_files(levels[-1][2], device, stuck)
            if below is not None:
                _descend(levels, below, stuck)
            elif len(levels) == 1:
                break
            else:
                _climb(levels, stuck)
    finally:
        for level in levels:
            if level[2] is not None:
                os.close(level[2])
    os.rmdir(path)


def _empty_files(fd: int, device: int, stuck: set[tuple[int, int]]) -> tuple[str, tuple[int, int]] | None:
    """Unlink what the open folder ``fd`` holds until a folder to go into turns up (one of this
    file system, not stuck): its (name, key), or None once only stuck folders are left."""
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.name, dir_fd=fd)
                    continue
                key = _key(entry.stat(follow_symlinks=False))
                if key not in stuck and key[0] == device:
                    return entry.name, key
            except OSError:
                pass
    return None


def _descend(levels: list[list[Any]], below: tuple[str, tuple[int, int]], stuck: set[tuple[int, int]]) -> None:
    """Go one level down, into ``below``; keep a descriptor only every _CHECKPOINT-th level."""
    try:
        child = _open_folder(below[0], levels[-1][2], below[1])
    except OSError:
        stuck.add(below[1])
        return
    levels.append([below[0], below[1], child])
    old = len(levels) - 1 - _CHECKPOINT
    if old > 0 and old % _CHECKPOINT and levels[old][2] is not None:
        os.close(levels[old][2])  # far above, and no checkpoint: re-opened if needed
        levels[old][2] = None


def _climb(levels: list[list[Any]], stuck: set[tuple[int, int]]) -> None:
    """Leave the emptied level for the open one above it and remove it there, by name, if it
    is still the folder seen on the way down."""
    name, key, fd = levels.pop()
    os.close(fd)
    if levels[-1][2] is None and not _reopen(levels, stuck):
        return
    parent = levels[-1][2]
    try:
        if _key(os.stat(name, dir_fd=parent, follow_symlinks=False)) != key:
            return  # moved away meanwhile: what has its name now is listed anew
        os.rmdir(name, dir_fd=parent)
    except FileNotFoundError:
        pass
    except OSError:
        stuck.add(key)


def _reopen(levels: list[list[Any]], stuck: set[tuple[int, int]]) -> bool:
    """Re-open the levels whose descriptors _remove_tree_iteratively closed, down from the
    nearest one still open, each checked against what was seen on the way down. A level that is
    not where it was (moved by someone else meanwhile) ends its branch: the levels below it are
    dropped and the walk goes on from the level still in place (if the moved folder is still in
    the tree, the walk finds it at its new place; it is not marked stuck, which would leave it)."""
    start = max(i for i, level in enumerate(levels) if level[2] is not None)
    for i in range(start + 1, len(levels)):
        try:
            levels[i][2] = _open_folder(levels[i][0], levels[i - 1][2], levels[i][1])
        except OSError as error:
            if not isinstance(error, (FileNotFoundError, NotADirectoryError)) and error.errno != errno.ELOOP:
                stuck.add(levels[i][1])  # still there but not to be opened
            for level in levels[i + 1:]:
                if level[2] is not None:
                    os.close(level[2])
            del levels[i:]
            return False
    return True


# ---------------------------------------------------------------------------------------------
# A warm server's folder outlives a grader killed with SIGKILL: the next grind run removes it.

LOCK_NAME = ".grind-lock"
STALE_AFTER_S = 10.0  # a folder this young may be a grind that has made it and not locked it yet
_HELD: dict[str, int] = {}  # a warm root -> grind's locked descriptor of its lock file
_SWEPT = False


def hold_folder(folder: str, lock_file: bool = True) -> None:
    """Mark ``folder`` as in use for as long as this process lives: an exclusive flock on a file
    in it (or, with ``lock_file`` False, on the folder itself), released by the kernel however
    grind ends (SIGKILL included). The descriptor is close-on-exec and Popen closes the rest, so
    no child keeps the folder "in use" after grind."""
    import fcntl

    if lock_file:
        fd = os.open(os.path.join(folder, LOCK_NAME), os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o600)
    else:
        fd = _open_dir(folder)
    fcntl.flock(fd, fcntl.LOCK_EX)
    _HELD[folder] = fd


def release_folder(folder: str) -> None:
    fd = _HELD.pop(folder, None)
    if fd is not None:
        os.close(fd)


def sweep_warm_folders(parent: str | None = None) -> list[str]:
    """Remove every ``grind-warm-*`` folder of this user (or of the user its children run as)
    whose grind is gone, and return them.

    ``grind grade`` or watch killed with SIGKILL cannot remove its warm server's folder (with
    the jobs' files in it, a classmate's among them); every grind run looks once for such
    folders and removes them. A folder is gone when nobody holds its lock (hold_folder): the
    lock dies with the process, so a folder in use is never taken, however long its grader runs.
    Folders without a lock file (made by a grind from before the lock) are left alone. A cold
    run's ``grind-run-*`` folder is swept too (a tmpfs as root, a plain folder otherwise): its
    lock is the folder itself, taken as soon as it is made, and a folder younger than
    STALE_AFTER_S is never taken.

    Folders owned by the user the children run as (``nobody`` under a root grind) are taken too:
    a root grind chowns its run folders to that user, so they are grind's. Such a folder, or one
    its owner made to look like grind's, can hold anything that user may move into it, and a
    process of that user may move folders around while it is removed; that is safe only because
    remove_tree never leaves the folder it was given (no ``..``, no link followed, no other file
    system): the worst such a folder can do is have its owner's own files removed."""
    parent = parent or tempfile.gettempdir()
    owners = {os.getuid()}
    drop_to = isolation().drop_to
    if drop_to is not None:
        owners.add(drop_to)
    swept: list[str] = []
    try:
        entries = [entry for entry in os.scandir(parent) if entry.name.startswith(("grind-warm-", "grind-run-"))]
    except OSError:
        return swept
    for entry in entries:
        if _take_if_abandoned(entry, owners):
            swept.append(entry.path)
    return swept


def _take_if_abandoned(entry: os.DirEntry[str], owners: set[int]) -> bool:
    """Remove one run folder if it is grind's and its lock is free (its grind is gone)."""
    import fcntl

    try:
        if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid not in owners:
            return False
        folder_fd = _open_dir(entry.path)
    except OSError:
        return False
    try:
        lock = (os.dup(folder_fd) if entry.name.startswith("grind-run-") else
                os.open(LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder_fd))
    except OSError:
        os.close(folder_fd)
        return False  # no lock file: not ours to judge
    try:
        info = os.fstat(lock)
        if stat.S_ISLNK(info.st_mode) or time.time() - info.st_ctime < STALE_AFTER_S:
            return False
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # held: its grind is alive
    else:
        remove_tree(entry.path)
        return True
    finally:
        os.close(lock)
        os.close(folder_fd)


def _sweep_once() -> None:
    global _SWEPT
    if not _SWEPT:
        _SWEPT = True
        try:
            sweep_warm_folders()
        except Exception:  # noqa: BLE001 - housekeeping must never cost a verdict
            pass


def _make_workdir(iso: Isolation, parent: str | None = None, prefix: str = "grind-run-",
                  disk_mb: int | None = None) -> str:
    if parent is None:
        _sweep_once()  # the first run folder of this grind: what a killed grader left goes first
    workdir = tempfile.mkdtemp(prefix=prefix, dir=parent)
    if disk_mb is not None:
        disk.mount_tmpfs(workdir, disk_mb << 20, iso.drop_to)
    if prefix == "grind-run-" and parent is None:
        # A cold run's folder (on a tmpfs of its own as root, memory until unmounted; a plain
        # folder on a laptop, with whatever the run wrote in it) is held like a warm server's
        # folder, by the folder itself (no lock file in the learner's cwd), so that a run killed
        # with grind is swept by the next one.
        hold_folder(workdir, lock_file=False)
    os.chmod(workdir, 0o700)
    if iso.drop_to is not None:
        os.chown(workdir, iso.drop_to, iso.drop_to)
    return workdir


def _stage_file(workdir: str, name: str, text: str, iso: Isolation) -> str:
    path = os.path.join(workdir, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    if iso.drop_to is not None:
        os.chown(path, iso.drop_to, iso.drop_to)
    return path


def stage_job(job: Job, workdir: str, iso: Isolation) -> Job:
    """The job as the child gets it: every subject's source (the learner's, the reference's, the
    oracle's) travels as a file of the run's folder, read and deleted by the process that runs
    it, never as text in the job.

    Why: a warm server reads each job and forks it, and a fork is a copy of the server's memory,
    freed memory included. With sources in the job, a submission scanning /proc/self/mem found
    the classmate graded before it, or the reference computed in the same server, and passed
    with it. The server now holds paths only. (A learner's job never holds the reference at all:
    its speed is compared with the reference's time kept in the cache; see child/job.time_speed.)"""
    staged = job.copy()
    subjects: list[protocol.SubjectSpec] = []
    for index, spec in enumerate(job.get("subjects", [])):
        text = spec.get("source")
        if spec.get("kind") == "file" and isinstance(text, str):
            spec = spec.copy()
            del spec["source"]
            spec["source_file"] = _stage_file(workdir, f"subject-{index}.py", text, iso)
            spec["builds_optimizer"] = bool(protocol.BUILDS_OPTIMIZER.search(text))
        subjects.append(spec)
    if "subjects" in job:
        staged["subjects"] = subjects
    return staged
