"""Folders that belong to no one room: what a learner's child must not read, and where this
user's daemon keeps its socket.

Both the front of grading (``judge.grade``) and the daemon's two ends ask for them, and neither
owns the other: kept here, on the standard library and the cache's root alone, so that asking
for the hidden folders never loads the daemon, nor the daemon the grading pipeline.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from judge import cache

if TYPE_CHECKING:
    from judge.models import Exercise


def _private_dir(path: Path) -> bool:
    """``path`` is a real folder (not a link), owned by this user, reachable by nobody else."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


_TEMP_ROOT: list[str] = []  # _temp_root's answer, found once per process as tempfile's is


def _temp_root() -> str:
    """``tempfile.gettempdir()``'s folder without importing tempfile, which loads shutil and
    random: about 3 ms of every daemon-served ``grind run``, whose socket lives under it when
    ``XDG_RUNTIME_DIR`` is unset. The same candidates in the same order (``TMPDIR``, ``TEMP``,
    ``TMP``, then ``/tmp``, ``/var/tmp``, ``/usr/tmp``), and the same test: the first where a file
    can be made and written (``os.access`` is not enough: root passes it on ``/proc``, where
    nothing can be made). The same answer whatever this process imported before (a client and
    the daemon must agree); only when none qualifies does tempfile decide (its last resort is the
    current folder). Unlike tempfile, a relative ``TMPDIR`` comes back absolute: the daemon works
    from /."""
    if _TEMP_ROOT:
        return _TEMP_ROOT[0]
    names = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")]
    for folder in [*(name for name in names if name), "/tmp", "/var/tmp", "/usr/tmp"]:
        folder = os.path.abspath(folder)
        probe = os.path.join(folder, f".grind-probe-{os.getpid()}-{time.monotonic_ns()}")
        try:
            fd = os.open(probe, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except OSError:
            continue
        try:
            written = os.write(fd, b"blat") == 4  # tempfile writes these four bytes too (a full disk fails here)
        except OSError:
            written = False
        finally:
            os.close(fd)
            try:
                os.unlink(probe)
            except OSError:
                pass
        if written:
            _TEMP_ROOT.append(folder)
            return folder
    import tempfile

    return tempfile.gettempdir()


def _make_private(path: Path, create: bool = True) -> Path | None:
    if create:
        try:
            path.mkdir(mode=0o700, parents=False, exist_ok=True)
        except OSError:
            return None
    return path if _private_dir(path) else None


def runtime_dir(create: bool = True) -> Path | None:
    """The folder of this user's daemon sockets, or None when there is no safe one (with
    ``create`` False, only one that exists already: nothing is made).

    ``GRIND_RUNTIME_DIR`` (tests), else ``$XDG_RUNTIME_DIR/grind`` (platformdirs'
    user_runtime_dir, judge.userdirs), else ``<tmp>/grind-<uid>``, created 0700. A folder that exists but is a
    link, another user's, or open to others is not used (a planted folder could hold a socket
    that poses as the daemon): then there is no daemon, only cold runs."""
    override = os.environ.get("GRIND_RUNTIME_DIR")
    if override:  # created 0700 when missing (its parent must exist), as the default folders are;
        # made absolute here, since the daemon changes to / before it opens anything in it
        return _make_private(Path(override).expanduser().absolute(), create)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and _private_dir(Path(xdg)):
        from judge.userdirs import user_runtime_dir

        found = _make_private(Path(user_runtime_dir(xdg)), create)
        if found is not None:
            return found
    return _make_private(Path(_temp_root()) / f"grind-{os.getuid()}", create)


def runtime_problem() -> str:
    """Why ``runtime_dir()`` found no folder it may use, in the words a learner can act on."""
    override = os.environ.get("GRIND_RUNTIME_DIR")
    candidate = (Path(override).expanduser().absolute() if override
                 else Path(_temp_root()) / f"grind-{os.getuid()}")
    where = f"GRIND_RUNTIME_DIR={override}" if override else str(candidate)
    if not os.path.lexists(candidate):
        return (f"no private folder for its socket: {where} cannot be created"
                + (f" (its parent {candidate.parent} does not exist)" if not candidate.parent.is_dir() else ""))
    info = os.lstat(candidate)
    if stat.S_ISLNK(info.st_mode):
        return f"no private folder for its socket: {where} is a link"
    if not stat.S_ISDIR(info.st_mode):
        return f"no private folder for its socket: {where} is not a folder"
    if info.st_uid != os.getuid():
        return f"no private folder for its socket: {where} belongs to another user"
    return f"no private folder for its socket: {where} is open to other users (it must be mode 0700)"


def hidden_from_learners(exercise: Exercise, *extra: Path) -> list[Path]:
    """Folders a learner's child must not read: the solutions, the reference cache, the folder of
    the per-user daemon's socket and secret, and (when grading a class) the class and output
    folders. Bubblewrap hides them; Landlock never grants them (see judge.worker.isolation for
    what each level guarantees)."""
    daemons = runtime_dir(create=False)  # none yet: no socket to hide (a daemon's client makes it first)
    # Absolute: the list also travels to the per-user daemon, which runs from / (a relative
    # GRIND_CACHE_DIR would have hidden a folder of that name under / instead).
    return [path.absolute() for path in
            (exercise.solution_dir.parent, cache.cache_root(), *([daemons] if daemons else []), *extra)]
