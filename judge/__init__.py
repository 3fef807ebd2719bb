"""grind: a command-line judge for ML-training interview practice.

The package is split so that the pipeline is visible in its file names:
catalog -> workspace -> grade -> worker (isolated child) -> compare -> diagnose -> views -> render.
Only the ``judge/worker/child`` package (which runs in the child) imports torch; only the ``render``
package and the ``cli`` package import rich; only ``cli`` imports typer.
"""

from typing import Any

from judge.version import __version__

__all__ = ["__version__", "check", "hint", "load_ipython_extension", "show", "solution"]


# The notebook front end (judge/frontends/notebook.py), reachable as `%load_ext judge` and
# `judge.check(...)`. Each loads it on first use: `import judge` stays as cheap as it was for
# every `grind` command, and imports neither IPython nor anything of the notebook's.


def load_ipython_extension(ipython: Any) -> None:  # IPython's hook, IPython's types
    """``%load_ext judge``: the ``%%grind NAME`` cell magic and the ``%grind_*`` line magics."""
    from judge.frontends.notebook import load_ipython_extension as load

    load(ipython)


def check(exercise: str, code: Any) -> Any:
    """Grade ``code`` (a source string, a function, a class or a module) for ``exercise``, as
    ``grind run`` would, and return a verdict a notebook displays."""
    from judge.frontends.notebook import check as run_check

    return run_check(exercise, code)


def hint(exercise: str) -> Any:
    """The next hint for ``exercise`` (counted, as ``grind hint`` counts it)."""
    from judge.frontends.notebook import hint as next_hint

    return next_hint(exercise)


def solution(exercise: str, force: bool = False) -> Any:
    """The reference solution for ``exercise``: after a pass, or with ``force=True``."""
    from judge.frontends.notebook import solution as reveal

    return reveal(exercise, force=force)


def show(exercise: str) -> Any:
    """The statement of ``exercise``."""
    from judge.frontends.notebook import show as statement

    return statement(exercise)
