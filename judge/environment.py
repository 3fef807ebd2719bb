"""What grading needs from the Python it runs in, checked without importing it.

grind itself installs and lists exercises without torch, but every grade runs the learner's code
and the reference with torch. Missing, it is an environment problem (exit 5) with the command
that fixes it, rather than a reference that "failed" and a verdict that means nothing.
"""

from __future__ import annotations

import importlib.util
import sys

from judge.errors import EnvironmentProblem


_FOUND: list[str] = []  # the version once found: every grade asks (7 ms a read of the metadata)


def torch_version() -> str | None:
    """The installed torch's version, or None when this Python cannot import torch. A version
    found is kept for the process; an absence is not (torch installed while `grind watch` runs
    is noticed on the next save)."""
    if _FOUND:
        return _FOUND[0]
    try:
        if importlib.util.find_spec("torch") is None:
            return None
    except (ImportError, ValueError):
        return None
    found = _dist_info_version("torch")
    if found is None:
        from importlib import metadata

        try:
            found = metadata.version("torch")
        except metadata.PackageNotFoundError:
            found = "unknown version"
    _FOUND.append(found)
    return _FOUND[0]


def _dist_info_version(name: str) -> str | None:
    """``importlib.metadata.version(name)`` for the common case, read directly: the first folder
    on ``sys.path`` holding ``NAME-VERSION.dist-info`` gives its METADATA's Version line. None
    when anything is less plain (an egg, a zip on the path, two candidates in one folder): then
    importlib.metadata answers. Importing importlib.metadata (email, zipfile, csv...) and its
    search cost more than a daemon-served `grind run`'s whole client wants to spend; every run
    needs the version, which keys the daemon and the reference cache."""
    import os

    prefix = name.lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            if entry and os.path.isfile(entry):
                return None  # a zip on the path: importlib.metadata looks inside it
            continue
        hits = [n for n in names if n.lower().startswith((prefix, name.lower() + "."))
                and n.lower().endswith((".dist-info", ".egg-info", ".egg-link"))]
        if not hits:
            continue
        if len(hits) != 1 or not hits[0].endswith(".dist-info"):
            return None
        return _metadata_version(os.path.join(entry or ".", hits[0], "METADATA"))
    return None


def _metadata_version(path: str) -> str | None:
    """The Version header of a dist-info METADATA file, or None (none, or unreadable)."""
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    break  # the end of the headers
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip() or None
    except OSError:
        pass
    return None


def install_advice() -> str:
    return f"install it with: {sys.executable} -m pip install torch"


def require_torch() -> None:
    if torch_version() is None:
        raise EnvironmentProblem(f"torch is not installed in this Python ({sys.executable}), and grading runs "
                                 f"your code and the reference with it; {install_advice()}")
