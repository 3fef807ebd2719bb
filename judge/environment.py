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
    from importlib import metadata

    try:
        _FOUND.append(metadata.version("torch"))
    except metadata.PackageNotFoundError:
        _FOUND.append("unknown version")
    return _FOUND[0]


def install_advice() -> str:
    return f"install it with: {sys.executable} -m pip install torch"


def require_torch() -> None:
    if torch_version() is None:
        raise EnvironmentProblem(f"torch is not installed in this Python ({sys.executable}), and grading runs "
                                 f"your code and the reference with it; {install_advice()}")
