"""grind's author kit: the shared pieces of checks.py and pitfalls.py files.

This folder (``solutions/_kit``) is not an exercise. grind ships its files, as text, to every
child that runs an exercise's cases (trusted runs and learners' runs alike) and serves them
there as the package ``grind_kit``, so that checks and pitfalls write::

    import grind_kit as kit
    from grind_kit import case, lockstep, seeded

It is plain torch code and must stay so: it imports nothing of grind, and it holds no correct
implementation of any exercise, because a learner's file can import it too (``grind validate``
refuses a kit that defines an exercise's entry point). Its files are part of every exercise's
cache key: editing the kit recomputes every reference.

- :mod:`grind_kit.cases`: ``case(...)``, checked as it is written;
- :mod:`grind_kit.optim`: an optimizer run in lockstep over a script of gradients, and seeded
  parameters and gradients;
- :mod:`grind_kit.training`: a small training loop and a recording optimizer;
- :mod:`grind_kit.deltas`: pitfalls as composable deltas of one correct implementation.
"""

from grind_kit.cases import CaseError, case
from grind_kit.deltas import Deltas, camel
from grind_kit.optim import (
    STEPS,
    UsesTorchOptimizer,
    construct,
    entry_name,
    flat,
    lockstep,
    log_scales,
    OptimizerPlumbing,
    make_params,
    param_entries,
    plumbing_pitfalls,
    script,
    seeded,
    sometimes,
)
from grind_kit.training import RecordingSGD, linear_problem, training_inputs, training_loop

__all__ = [
    "STEPS", "CaseError", "Deltas", "OptimizerPlumbing", "RecordingSGD", "UsesTorchOptimizer", "camel", "case", "construct",
    "entry_name", "flat", "linear_problem", "lockstep", "log_scales", "make_params", "param_entries", "plumbing_pitfalls", "script",
    "seeded", "sometimes", "training_inputs", "training_loop",
]
