"""Grade one submission: the core's main entry point, and the one place an executor is picked.

read the file -> static checks (parent, no torch) -> an executor's verdict (judge.executor):
the per-user daemon's when it answers, else this process's own, cold or on a warm server.

The rooms behind it, each depending one way:

- judge.static_checks: what the source alone shows (empty, syntax, a forbidden API);
- judge.pipeline: grading here (the learner's child, compare, diagnose), the local executors;
- judge.trusted and judge.subjects: the reference's observations, computed and cached;
- judge.judging: one subject's observations against the reference's, as checks and a diagnosis;
- judge.paths: the folders hidden from a learner's child.

This module loads none of the pipeline at import: a daemon-served ``grind run`` never needs it
(no sandbox, no numpy), and imports it only when a submission must be graded in this process.
A learner's failure, whatever its kind, comes back as a Verdict. Only problems on grind's side
(a broken exercise, a reference that fails its own cases) raise JudgeError.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from judge import cache
from judge.environment import require_torch
from judge.executor import Executor, Submission
from judge.models import Exercise, Status, Verdict
from judge.paths import hidden_from_learners
from judge.static_checks import error_verdict, static_verdict

if TYPE_CHECKING:
    from judge.executor import JobRunner
    from judge.worker.sandbox import Limits

# Known to callers as judge.grade's (the CLI, watch, batch grading, the corpus, tests, bench).
__all__ = ["grade", "hidden_from_learners", "pick_executor", "static_verdict"]

# Names that lived here before grading was split into rooms (issue 35): still importable from
# judge.grade for code written before the split, loaded from their room on first use so that
# importing judge.grade stays light. New code imports them from the room itself.
_MOVED = {
    **dict.fromkeys(("reference_for", "reference_problem", "compute_reference", "reference_with_oracle",
                     "with_oracle", "case_count", "case_names", "pair_source", "PairSource"), "judge.trusted"),
    **dict.fromkeys(("LEARNER", "REFERENCE", "ORACLE", "Reference", "SubjectRun"), "judge.subjects"),
    **dict.fromkeys(("judge_subject", "tolerance_of", "PAIR_SUSPECTS"), "judge.judging"),
    **dict.fromkeys(("run_learner", "verdict_from_outcome", "source_of"), "judge.pipeline"),
    "forbidden_uses": "judge.static_checks",
}


def __getattr__(name: str) -> Any:
    room = _MOVED.get(name)
    if room is None:
        raise AttributeError(f"module 'judge.grade' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(room), name)


# What a caller may hand ``grade``: an executor (the daemon's client), a warm server, or nothing.
Worker = Union[Executor, "JobRunner", None]  # JobRunner by name: worker/protocol.py loads on first use


def pick_executor(worker: Worker) -> Executor:
    """The executor for ``worker``: itself when it is one, else this process's own (a warm
    server's, or the cold path's). The pipeline is imported only here, on first use."""
    if isinstance(worker, Executor):
        return worker
    from judge.pipeline import local_executor

    return local_executor(worker)


def grade(exercise: Exercise, path: Path, *, source: str | None = None, limits: Limits | None = None,
          worker: Worker = None, speed: bool = False, data: bytes | None = None, marked: bool = False) -> Verdict:
    """Grade the submission at ``path`` (or ``source``, reported as ``path``; or its bytes
    ``data``, read elsewhere: a Dask worker grades a file that lives on the instructor's machine).

    With a warm ``worker`` (watch mode, batch grading) the learner's child is a fork of a
    process that already imported torch; without one, a fresh process starts; with the per-user
    daemon's executor (``grind run``), the daemon grades and this process only asks. ``speed`` also
    times a passing submission on the exercise's larger SPEED case, against the reference's time
    kept with its observations (`grind run` and practice: advice, never a verdict). ``marked``
    (`grind grade`, the Gradescope bundle, a Dask worker): a submission whose source reaches into
    the judge's frames or objects is refused before it runs (judge/introspection.py)."""
    require_torch()  # before anything runs: a missing torch is not the learner's failure
    started = time.monotonic()
    filename = str(path.resolve())
    read = _read(exercise, path, source, data)
    if isinstance(read, Verdict):
        read.submission, read.duration_s = str(path), time.monotonic() - started
        return read
    source, notes = read
    verdict = _early_verdict(exercise, source, filename, marked)
    if verdict is None:
        submission = Submission(exercise, cache.exercise_key(exercise), source, filename, limits, speed, marked)
        verdict = pick_executor(worker).verdict(submission)
        if verdict is None:  # the executor declined (the daemon could not answer): graded cold,
            # exactly as without it
            verdict = pick_executor(None).verdict(submission)
            assert verdict is not None  # a local executor never declines
    verdict.submission, verdict.duration_s = str(path), time.monotonic() - started
    verdict.notices[:0] = notes
    return verdict


def _read(exercise: Exercise, path: Path, source: str | None, data: bytes | None) -> tuple[str, list[str]] | Verdict:
    """The submission's text and the notes on how it was read, or a verdict saying why it cannot be."""
    if source is not None:
        return source, []
    if path.suffix == ".ipynb":
        # A notebook: the cells that make the answer (judge/notebooks.py), the same for a class,
        # a Dask worker, grind run --file and the notebook front end's check(NAME, Path(...)).
        from judge.notebooks import notebook_source

        extracted = notebook_source(path.read_bytes() if data is None else data, path.name, exercise.entry)
        if extracted.problem is not None:
            return Verdict(exercise=exercise.slug, status=Status.ERROR, message=extracted.problem,
                           notices=extracted.notes)
        return extracted.source, extracted.notes
    from judge.text import decode_source, read_source

    text, unreadable = read_source(path) if data is None else decode_source(data, path.name)
    if unreadable is not None:  # one line about the encoding, not a SyntaxError at U+FFFD
        return Verdict(exercise=exercise.slug, status=Status.ERROR, message=unreadable)
    return text, []


def _early_verdict(exercise: Exercise, source: str, filename: str, marked: bool) -> Verdict | None:
    """The static checks' verdict, and with ``marked`` the refusal of a source that reaches into
    the judge (judge/introspection.py), or None: then the submission must run."""
    early = static_verdict(exercise, source, filename)
    if early is None and marked:
        from judge import introspection

        refused = introspection.refusal(source, exercise.scanned_strictly, tuple(exercise.forbidden),
                                        tuple(exercise.entry))
        if refused is not None:
            early = error_verdict(exercise, Status.FORBIDDEN, *refused)
    return early
