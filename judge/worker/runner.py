"""The child's entry point: ``python -I runner.py`` runs one job (cold), ``--serve`` the warm server.

It is started by path, so nothing of the judge package is imported here and nothing in the judge
can be monkeypatched from the submission in a way that matters. It reads one job as JSON on
stdin, and writes back *observations*, never verdicts:

- ``observations.safetensors``: every observed tensor, as plain numpy data;
- ``result.json``: per subject and case, whether it ran, raised, or returned something that is not
  data, plus the run's token and the hash of the observations file.

The parent decides pass/fail by comparing these observations with the reference's, so nothing
the learner does in this process can turn into a pass without producing the right numbers.

The work itself is the package ``judge/worker/child`` (the job's phases, the warm server, values,
ranks) and the stdlib-only modules beside this file (protocol, guards, integrity, landlock,
process, witness). With ``python -I`` the script's folder is not on sys.path and ``judge`` is
refused in the child, so this file loads the worker folder as a package of its own name,
``grind_worker``, by path; the parent imports the same files as ``judge.worker``. Only the
standard library is imported at module level: numpy, torch and safetensors are imported once the
limits and the confinement are in force (``main``).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import types

PACKAGE = "grind_worker"  # the worker folder's name in the child (judge.worker in the parent)


def _package() -> str:
    """The worker package's name here: ``judge.worker`` when the parent imports this module,
    else ``grind_worker``, loaded from this file's folder by path (once per process)."""
    if __package__:
        return __package__
    if PACKAGE not in sys.modules:
        import importlib.util

        here = os.path.dirname(os.path.abspath(__file__))
        spec = importlib.util.spec_from_file_location(PACKAGE, os.path.join(here, "__init__.py"),
                                                      submodule_search_locations=[here])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = module
        spec.loader.exec_module(module)
    return PACKAGE


_root = _package()
_control = importlib.import_module(f"{_root}.child.control")
_job = importlib.import_module(f"{_root}.child.job")
_process = importlib.import_module(f"{_root}.process")
# What a test that loads this file by path (tests/test_guards.py) reaches through it.
_guards: types.ModuleType = importlib.import_module(f"{_root}.guards")
Guards = _guards.Guards
ForbiddenAPI = _guards.ForbiddenAPI
load_source = _job.load_source


def main() -> None:
    """Cold mode: one job, in this process (after the shielding fork, confined).

    Two lines arrive on stdin. The first, sent as grind starts us, says how to confine this run:
    its Landlock rules, whether to shield grind behind a waiter, the control and witness pipes.
    The second is the job. Between the two, confined, we import numpy, safetensors and torch,
    as a warm server does before its first job: grind may start us before it has built the job
    (sandbox.prestart), so the second it spends on that overlaps torch's import. Confinement
    comes first because Landlock confines only the calling thread, and importing torch starts
    one; no learner code exists until the job is read."""
    _process.die_with_parent()
    _process.default_sigchld()  # the waiter and the ranks reap, and count, their own children
    setup = json.loads(sys.stdin.readline())
    witness_fd = setup.get("witness_fd")
    if isinstance(witness_fd, int):
        # The waiter counts the run's traffic, so it must live in the run's network namespace:
        # made here, before the fork, rather than by the worker as it confines itself.
        _control.private_network(setup.get("confine"))
        _control.shield_parent(witness_fd)
    elif setup.get("shield", True):
        _control.shield_parent()
    _control.confine(setup.get("confine"))
    _job.preload()
    line = sys.stdin.readline()
    if not line:  # grind went away, or dropped a prestarted child no job took
        os._exit(0)
    job = json.loads(line)
    del line  # the job's token is in it: execute takes the token out of the job before any learner code
    control = os.fdopen(setup["control_fd"], "w", buffering=1) if setup.get("control_fd") else None
    _job.execute(job, control)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        _process.default_sigchld()
        importlib.import_module(f"{_root}.child.server").serve()
    else:
        main()
