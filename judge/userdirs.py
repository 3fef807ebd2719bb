"""This user's folders for grind (cache, state, the daemon's runtime folder), as platformdirs
names them, without importing platformdirs where the rule is plain.

platformdirs loads its whole platform table and tempfile (with shutil, random, bz2 and lzma):
about 5 ms of every ``grind run`` and ``grind --help``, and 20 ms under a profiler, for folders
that on Linux are ``$XDG_CACHE_HOME/grind`` or ``~/.cache/grind`` (and the same for state). That
rule is written out here for the plain case: Linux (not Android, where platformdirs looks up the
app's own folder), an absolute ``HOME``, and the XDG variable unset, blank or absolute. Anything
else (a relative XDG path, which recent platformdirs ignore and older ones used; no usable
``HOME``; another system) is platformdirs' to answer. Standard library ``os`` and ``sys`` only:
``judge.entry`` (every command's first module) uses it too. tests/test_daemon.py holds each
answer against platformdirs' own.
"""

from __future__ import annotations

import os
import stat
import sys


def _plain(variable: str, under_home: str) -> str | None:
    """``$variable/grind``, or ``~/under_home/grind`` when it is unset or blank; None when the case
    is not plain."""
    android = os.environ.get("ANDROID_DATA") == "/data" and os.environ.get("ANDROID_ROOT") == "/system"
    if not sys.platform.startswith("linux") or android:
        return None
    value = os.environ.get(variable, "")
    if value.strip():
        return os.path.join(value, "grind") if os.path.isabs(value) else None
    if not os.path.isabs(os.environ.get("HOME", "")):
        return None
    return os.path.join(os.path.expanduser(f"~/{under_home}"), "grind")


def user_cache_dir() -> str:
    """``platformdirs.user_cache_dir("grind", appauthor=False)``."""
    return _plain("XDG_CACHE_HOME", ".cache") or _platformdirs("user_cache_dir")


def user_state_dir() -> str:
    """``platformdirs.user_state_dir("grind", appauthor=False)``."""
    return _plain("XDG_STATE_HOME", ".local/state") or _platformdirs("user_state_dir")


def _platformdirs(kind: str) -> str:
    import platformdirs

    return str(getattr(platformdirs, kind)("grind", appauthor=False))


def user_runtime_dir(xdg: str) -> str:
    """The daemon's folder under ``$XDG_RUNTIME_DIR`` (``xdg``): ``xdg/grind`` when ``xdg`` is plainly
    the user's own, as platformdirs gives it then. That is on Linux, with ``xdg`` absolute, a
    folder (not a link) of this user's with mode 0700, under parents no other user can replace
    (each a real folder owned by root or this user, writable by nobody else unless sticky, as
    ``/tmp`` is). Otherwise platformdirs answers, and recent versions then fall back to
    ``/run/user/<uid>``. Whatever comes back, the caller checks that it is private before it
    puts a socket there."""
    if sys.platform.startswith("linux") and os.path.isabs(xdg) and _owned_plainly(xdg):
        return os.path.join(xdg, "grind")
    return _platformdirs("user_runtime_dir")


def _owned_plainly(folder: str) -> bool:
    """``folder`` is this user's 0700 folder, and no other user can replace it or any parent.
    A path with ``.`` or ``..`` in it is not plain: a link before a ``..`` would make the folder
    checked another than the one used."""
    if any(part in (".", "..") for part in folder.split("/")):
        return False
    try:
        info = os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) != 0o700:
            return False
        parent = os.path.dirname(os.path.normpath(folder))
        while True:
            info = os.lstat(parent)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid not in (0, os.getuid()):
                return False
            if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
                return False
            if parent == os.path.dirname(parent):
                return True
            parent = os.path.dirname(parent)
    except OSError:
        return False
