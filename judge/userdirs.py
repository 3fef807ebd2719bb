"""This user's cache folder for grind, as platformdirs names it, without importing platformdirs
where the rule is plain.

platformdirs loads its whole platform table and tempfile (with shutil and random): about 5 ms of
every ``grind run`` and ``grind --help``, for a folder that on Linux is ``$XDG_CACHE_HOME/grind``
or ``~/.cache/grind``. That rule is written out here for Linux; anywhere else, or on Android
(where platformdirs looks up the app's own folder), platformdirs answers. Standard library
``os`` and ``sys`` only: ``judge.entry`` (every command's first module) uses it too.
"""

from __future__ import annotations

import os
import sys


def user_cache_dir() -> str:
    """``platformdirs.user_cache_dir("grind", appauthor=False)``."""
    android = os.environ.get("ANDROID_DATA") == "/data" and os.environ.get("ANDROID_ROOT") == "/system"
    if sys.platform.startswith("linux") and not android:
        base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache")
        return os.path.join(base, "grind")
    import platformdirs

    return str(platformdirs.user_cache_dir("grind", appauthor=False))
