"""Grading here: the learner's child, then the comparison and the diagnosis, as a Verdict.

The two local executors (judge.executor): ``ColdExecutor`` runs the learner's job in a process
of its own; ``WarmExecutor`` forks it from a warm server (watch, batch grading, a Dask worker,
and the per-user daemon, which grades every daemon-served ``grind run`` with one).

A learner's failure, whatever its kind, comes back as a Verdict. Only problems on grind's side
(a broken exercise, a reference that fails its own cases) raise JudgeError.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from judge import cache, kept, witnessed
from judge.executor import ColdRunner, Executor, Submission, learner_limits
from judge.judging import judge_subject
from judge.models import Exercise, Status, Verdict
from judge.paths import hidden_from_learners
from judge.trusted import job_for, loaded_reference, pair_source, reference_for
from judge.speed import SLOWER, speed_advice
from judge.static_checks import error_verdict
from judge.subjects import LEARNER, REFERENCE, Reference, split_runs
from judge.worker.poison import status_name as poisoned_api
from judge.worker.sandbox import STARTUP_FAILED, Limits, RunOutcome

if TYPE_CHECKING:
    from judge.executor import JobRunner


def _timeout_line(trace: str, filename: str) -> int | None:
    for match in re.finditer(r'File "(.*)", line (\d+)', trace):
        if match.group(1) == filename:
            return int(match.group(2))
    return None


def run_learner(exercise: Exercise, source: str, filename: str, limits: Limits | None = None,
                worker: JobRunner | None = None, speed: bool = False, marked: bool = False,
                reference_s: float | None = None, costs: dict[str, float] | None = None) -> RunOutcome:
    """``marked``: the child also checks, after every case, that the learner's code replaced
    nothing in the libraries the judge's own code uses (judge/worker/integrity.py).
    ``reference_s``: the reference's time on the SPEED case, when already known here; the
    learner's timing then stops at its first call too fast to earn advice (child/job.time_call).
    ``costs``: the reference's seconds per case instance, when already known here; a practice
    job then shares its instances between two processes (child/halves.py)."""
    job = job_for(exercise, [{"id": LEARNER, "kind": "file", "path": filename, "source": source}],
                  guard=True, forbidden=list(exercise.forbidden), time_speed=speed, marked=marked)
    if speed and reference_s is not None and reference_s > 0:
        job["speed_enough_s"] = SLOWER * reference_s
    if costs and not marked:
        job["costs"] = dict(costs)
    limits = limits or learner_limits(exercise)
    outcome = (worker if worker is not None else ColdRunner(hidden_from_learners(exercise))).run_job(job, limits)
    shared = outcome.result.subjects.get(LEARNER) if outcome.result is not None else None
    if "costs" in job and shared is not None and shared.carried_state:
        # Its cases ran in two processes and its code kept state from one case to the next: the
        # verdict is the one of every case in order, in one process (child/halves.py).
        return run_learner(exercise, source, filename, limits, worker, speed, marked, reference_s, None)
    if marked and outcome.result is None and outcome.status == "crashed":
        # Read here, in grind's process, from the exit status alone: the learner's process has
        # no say in it beyond calling the poisoned implementation (judge/worker/poison.py).
        outcome.forbidden_api = poisoned_api(exercise.forbidden, outcome.returncode, outcome.stderr)
    return outcome


def verdict_from_outcome(exercise: Exercise, ref: Reference, outcome: RunOutcome, filename: str,
                         worker: JobRunner | None = None, source: str | None = None) -> Verdict:
    if outcome.forbidden_api is not None:
        verdict = error_verdict(exercise, Status.FORBIDDEN,
                                f"Forbidden API: {outcome.forbidden_api}. This exercise asks you to write it "
                                "yourself; in a graded run its implementation is absent, and calling it ended "
                                "the run.")
    elif outcome.status == "timeout":
        line = _timeout_line(outcome.timeout_trace, filename)
        case = (outcome.last_case or "").split(" ", 1)[-1]
        where = f" while running case '{case}'" if case else ""
        at = f", last seen at line {line}" if line else ""
        verdict = error_verdict(exercise, Status.TIMEOUT,
                                 f"Time limit exceeded: {outcome.message}{where}{at}. Look for a loop that "
                                 f"never ends or work that grows too fast.", line)
    elif outcome.message.startswith(STARTUP_FAILED):
        # Not the learner's doing: the child was still importing torch when its start-up clock ran
        # out (a busy machine). Said as grind's, so nobody goes looking for a bug in their code.
        verdict = error_verdict(exercise, Status.CRASHED, f"grind's worker did not get going: {outcome.message}. "
                                 "The machine may be busy: run it again.")
    elif outcome.status != "ok" or outcome.result is None:
        verdict = error_verdict(exercise, Status.CRASHED, f"The submission crashed the worker: {outcome.message}.")
    else:
        try:
            verdict = _judge_learner(exercise, ref, outcome, filename, worker, source)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
            # protocol.parse_result already refused every malformed shape; whatever still gets
            # here was forged from inside the child, so it is the submission's failure, as data.
            verdict = error_verdict(exercise, Status.CRASHED, "The submission crashed the worker: its result was "
                                     f"malformed ({type(exc).__name__}) and is not trusted.")
    verdict.stdout, verdict.stderr = outcome.stdout, outcome.stderr
    return verdict


def _judge_learner(exercise: Exercise, ref: Reference, outcome: RunOutcome, filename: str,
                   worker: JobRunner | None = None, source: str | None = None) -> Verdict:
    assert outcome.result is not None
    kept.apply(outcome, ref.instances)  # the kept checkpoint's facts, read by grind, not the learner's
    run = split_runs(outcome.result, outcome.observations).get(LEARNER)
    if run is None:
        return error_verdict(exercise, Status.CRASHED, "The worker returned no observations for the submission.")
    not_counted = witnessed.learner(exercise, ref, run, outcome.witness)
    verdict = judge_subject(exercise, ref, run, pairs=pair_source(exercise, worker))
    if not_counted:
        verdict.notices.append(not_counted)
    speed = outcome.result.speed
    if verdict.passed and speed is not None and ref.speed is not None:
        advice = speed_advice(dict(asdict(speed), reference_s=ref.speed.reference_s),
                              source_of(filename) if source is None else source)
        if advice:
            verdict.notices.append(advice)
    return verdict


def source_of(filename: str) -> str:
    from judge.text import read_source

    try:
        return read_source(Path(filename)).text
    except OSError:
        return ""


class LocalExecutor(Executor):
    """Grades in this process's children: the learner's job run by ``worker`` (a warm server) or,
    with None, in a process of its own. Never declines: its verdict is the answer."""

    def __init__(self, worker: JobRunner | None = None) -> None:
        self.worker = worker

    def verdict(self, submission: Submission) -> Verdict:
        """Run the learner, compare, diagnose. The per-user daemon runs this too for ``grind run``
        (a ``WarmExecutor`` over its warm server), so that its client neither loads numpy nor
        reads the reference: it only renders the verdict."""
        exercise, key = submission.exercise, submission.key
        if cache.has(exercise.slug, key):
            # Cached: read it after the learner's child is gone, so the two never share the peak.
            outcome = self._learner(submission)
            ref = reference_for(exercise, key)
        else:
            ref, outcome = self._uncached(submission)
        verdict = verdict_from_outcome(exercise, ref, outcome, submission.filename, self.worker, submission.source)
        verdict.isolation = outcome.isolation
        return verdict

    def _learner(self, submission: Submission) -> RunOutcome:
        # Only what this process already holds (a daemon, watch, a batch): nothing is read here.
        known = loaded_reference(submission.exercise, submission.key)
        reference_s = (known.speed.reference_s if submission.speed and known is not None and known.speed is not None
                       else None)
        own = known.subjects.get(REFERENCE) if known is not None else None
        return run_learner(submission.exercise, submission.source, submission.filename, submission.limits,
                           self.worker, submission.speed, submission.marked, reference_s,
                           own.record.case_s if own is not None else None)

    @abstractmethod
    def _uncached(self, submission: Submission) -> tuple[Reference, RunOutcome]:
        """The reference (computed, then cached) and the learner's outcome, on a cold cache."""


class ColdExecutor(LocalExecutor):
    """The cold path: the learner's child is a process of its own that imports torch."""

    def __init__(self) -> None:
        super().__init__(None)

    def _uncached(self, submission: Submission) -> tuple[Reference, RunOutcome]:
        # The reference's child and the learner's start together, so on a cold cache the two
        # torch imports overlap instead of adding up.
        with ThreadPoolExecutor(max_workers=1) as pool:
            ref_future = pool.submit(reference_for, submission.exercise, submission.key)
            outcome = self._learner(submission)
            return ref_future.result(), outcome


class WarmExecutor(LocalExecutor):
    """The warm server: the learner's child a fork of ``worker``, a process that imported torch once
    (watch, batch grading, the corpus, a Dask worker, the per-user daemon)."""

    def __init__(self, worker: JobRunner) -> None:
        super().__init__(worker)

    def _uncached(self, submission: Submission) -> tuple[Reference, RunOutcome]:
        # The reference is one more fork of the server, before the learner's job (a server runs one
        # job at a time). A fork starts in milliseconds; a process of its own imports torch again,
        # about 3.5 s of CPU on a 2-core laptop.
        ref = reference_for(submission.exercise, submission.key, self.worker)
        return ref, self._learner(submission)


def local_executor(worker: JobRunner | None) -> LocalExecutor:
    """The executor for a warm server, or the cold path when there is none."""
    return ColdExecutor() if worker is None else WarmExecutor(worker)
