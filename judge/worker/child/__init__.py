"""The child side of the worker: the only code that runs next to learner or reference code, and
the only package of grind that imports torch (in its functions, once the limits are in force).

Its rooms are the child's phases and services:

- ``job``: one job, phase by phase (load the checks, list the subjects, observe the cases, write
  the result); ``run`` holds what those phases share;
- ``server``: the warm server (spares forked ahead of their job, supervision, replies);
- ``control``: the shielding waiter and the confinement a run puts itself under (the process
  primitives both sides use are ``judge.worker.process``);
- ``values``: previews and conversions of a subject's values, exceptions as data;
- ``sources`` and ``checks``: code run from text (trusted files, the kit, the learner's file) and
  the exercise's own files as the child checks them;
- ``ranks`` and ``rank_cases``: distributed cases on real gloo ranks.

The child starts as ``python -I judge/worker/runner.py`` and loads this package by path, under a
name of its own (``grind_worker``): nothing here imports ``judge``, only its siblings, relatively.
"""
