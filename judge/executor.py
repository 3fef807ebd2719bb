"""Where a submission is graded: the interface every way of grading implements.

Grading a submission that passed the static checks is one question, "what is its verdict?",
asked of an executor. The front of grading (``judge.grade.grade``) picks one and asks it; it
knows none of them by their insides:

- the cold path: the learner's child a process of its own (``judge.pipeline.ColdExecutor``);
- the warm server: the child a fork of a server that imported torch once
  (``judge.pipeline.WarmExecutor`` over a ``judge.worker.sandbox.WarmWorker``);
- the per-user daemon: the whole verdict graded in the daemon's own warm executor
  (``judge.daemon.DaemonExecutor``); it may decline (``None``), and the front then grades cold;
- Dask: a class fanned out to a cluster (``judge.cluster.DaskExecutor``, a ``ClassExecutor``),
  where each Dask worker grades with a warm executor of its own.

The local executors run jobs through a ``JobRunner`` (the cold runner or a warm server). This
module is a leaf: interfaces and one request type, on the standard library, so that the daemon's
client (every ``grind run``) and the pipeline can both depend on it and on nothing of each other.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from judge.models import Exercise, Verdict
    from judge.worker.protocol import Job, Worker
    from judge.worker.sandbox import Limits, RunOutcome


@dataclass(frozen=True)
class Submission:
    """A submission that passed the static checks: all an executor needs to grade it.

    ``key`` is the exercise's cache key, hashed once by the front; ``speed`` also times a passing
    submission on the checks' SPEED case; ``marked`` adds the marks integrity checks (grade,
    the Gradescope bundle, a Dask worker)."""

    exercise: Exercise
    key: str
    source: str
    filename: str
    limits: Limits | None = None
    speed: bool = False
    marked: bool = False


class Executor(ABC):
    """Grades a checked submission. Subclassed (not matched by shape): the front tells an
    executor from a ``JobRunner`` by what it is, never by which attributes it happens to have."""

    @abstractmethod
    def verdict(self, submission: Submission) -> Verdict | None:
        """The submission's verdict, or None when this executor cannot grade it now (the daemon
        gone, busy or of another version): the front then grades it cold, exactly as without it."""


# One job for the child (judge.trusted.job_for builds it) and what runs it: the typed parent/child
# boundary's own names, so that a cold runner, a warm server and the child agree on one shape.
# Looked up on first use at run time (``__getattr__``): a daemon-served `grind run` imports this
# module before it sends its job and never needs worker/protocol.py (a few ms of dataclasses).
if TYPE_CHECKING:
    JobSpec = Job
    JobRunner = Worker


def __getattr__(name: str) -> Any:
    if name in ("JobSpec", "JobRunner"):
        from judge.worker import protocol

        return protocol.Job if name == "JobSpec" else protocol.Worker
    raise AttributeError(f"module 'judge.executor' has no attribute {name!r}")


# A class of submissions graded on some machines: ``judge.batch.local_executor`` (warm workers
# here) or ``judge.cluster.DaskExecutor``. ``on_done`` gets each verdict, as JSON, as it lands.
class ClassExecutor(Protocol):
    def __call__(self, exercise: Exercise, paths: list[Path], *, limits: Limits | None,
                 on_done: Callable[[Path, dict[str, Any]], None], hidden: tuple[Path, ...] = ()) -> None:
        """Grade every file of ``paths``; raise only for grind's side (the cluster, not a student)."""


class ColdRunner:
    """The cold path's ``JobRunner``: every job a process of its own, which imports torch itself.

    ``hidden``: the folders a learner's job must not read (judge.paths.hidden_from_learners); a
    trusted job (the reference, the pitfalls) hides nothing. ``judge.worker.sandbox`` is looked up
    on each job, not at import: this module is loaded by every ``grind run``, daemon-served ones
    included, which never start a child here."""

    shut = False  # nothing to close: each job's process is gone when it returns

    def __init__(self, hidden: list[Path] | None = None) -> None:
        self.hidden = hidden

    def run_job(self, job: JobSpec, limits: Limits) -> RunOutcome:
        from judge.worker import sandbox

        return sandbox.run_job(job, limits, self.hidden)


def learner_limits(exercise: Exercise) -> Limits:
    """The limits a learner's job runs under when the caller sets none: the exercise's own."""
    from judge.worker.protocol import Limits

    return Limits(wall_s=exercise.time_limit, memory_mb=exercise.memory_mb)


def prestart_learner(exercise: Exercise, meanwhile: Callable[[], None] | None = None) -> None:
    """Start the cold child of a learner's job on ``exercise`` now, before the job is built
    (judge.worker.sandbox.prestart): a cold ``grind run`` knows the exercise tens of milliseconds
    in, and builds the job for about a hundred more. The child, the ``ColdRunner`` of the grade's
    own, takes it when its hidden folders and limits are the job's. ``meanwhile`` runs while grind
    waits for that child."""
    from judge.paths import hidden_from_learners
    from judge.worker import sandbox

    sandbox.prestart(hidden_from_learners(exercise), learner_limits(exercise), witnessed=bool(exercise.witness),
                     meanwhile=meanwhile)


def drop_prestarted() -> None:
    """The prestarted child no job took, if any, killed and its folder removed (see prestart_learner)."""
    from judge.worker import sandbox

    sandbox.drop_prestarted()

