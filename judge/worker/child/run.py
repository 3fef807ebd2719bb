"""What the steps of one job share (:class:`Run`), and the per-instance reseed that both a
single-process case and every rank of a distributed one start from."""

from __future__ import annotations

from typing import Any

from .. import integrity as _integrity
from .. import protocol as _protocol
from .values import describe_exception


class Run:
    """What the steps of one job share. numpy and torch come in as arguments because this module
    imports neither at load time (they are imported in :func:`execute`, under the limits)."""

    def __init__(self, job: dict[str, Any], control: Any, np: Any, torch: Any) -> None:
        self.job = job
        self.control = control  # the parent's control pipe ("ready", "case ..."), or None
        self.np, self.torch = np, torch
        self.entry: list[str] = job["entry"]
        self.checks: Any = None
        self.instances: list[dict[str, Any]] = []
        self.guards: Any = None  # learner runs only
        self.integrity: Any = None  # marks runs only: integrity.Record
        self.observed: dict[str, Any] = {}  # observation name -> numpy array
        self.result = _protocol.Result(token="", observations_sha256="")
        self.distributed_cases = 0  # numbers each distributed case's rendezvous file
        self.rank_pools: dict[tuple[str, int], Any] = {}  # (subject, world size) -> its kept ranks
        self.timeout_dump: tuple[Any, float] | None = None  # learner runs: the stack dump's file and deadline
        self.threads_before_learner = 0  # learner runs: threads before its file loaded (child/halves.py)

    def say(self, line: str) -> None:
        if self.control:
            self.control.write(line + "\n")

    def hits(self) -> list[Any]:
        """The forbidden calls so far (learner runs), as the protocol records them."""
        if self.guards is None:
            return []
        return [_protocol.ForbiddenHit(str(h["api"]), h["line"]) for h in self.guards.hits]

    def check_transition(self) -> None:
        """Marks runs, each time control comes back from the learner's code: the names written
        meanwhile (judge/worker/integrity.py), cheap enough for every call."""
        if self.integrity is not None and self.guards is not None:
            self._record_breaches(self.integrity.transition())

    def check_integrity(self) -> list[dict[str, Any]]:
        """Marks runs: a library function the judge's code uses that the learner replaced, or a
        learner thread still running (judge/worker/integrity.py), each as a forbidden record,
        also kept with the guards' hits so that the subject's record carries it."""
        if self.integrity is None:
            return []
        return self._record_breaches(self.integrity.breaches())

    def _record_breaches(self, breaches: list[str]) -> list[dict[str, Any]]:
        """Breaches as forbidden records, kept with the guards' hits (once each)."""
        found = [{"api": _integrity.describe(b), "line": None} for b in breaches]
        if self.guards is not None:
            self.guards.hits.extend(h for h in found if h not in self.guards.hits)
        return found


def error_info(exc: BaseException, filename: str) -> Any:
    return _protocol.ErrorInfo(**describe_exception(exc, filename))


def reseed(torch: Any) -> None:
    """What ``torch.manual_seed(0)`` does for this process, at the cost of the CPU generator's
    reset: execute() calls torch.manual_seed(0) once, which also queues the accelerators' seeds
    until one is initialised (torch records the caller's whole stack each time it queues one:
    a few milliseconds, with the guard's profile hook running, per case instance). Each
    instance then resets the CPU generator, and CUDA's too if something initialised it."""
    torch.random.default_generator.manual_seed(0)
    if torch.cuda.is_initialized():
        torch.cuda.manual_seed_all(0)
