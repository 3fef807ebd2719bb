"""Process exit codes, one per kind of outcome, so scripts and CI can branch on them."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """What `grind` returns to the shell.

    Kept distinct so a course script can tell "the learner's answer is wrong" (1) from
    "the learner's code did not even run" (3) from "grind itself is broken" (4).
    """

    PASSED = 0
    FAILED = 1  # the submission ran and at least one check failed (or it used a forbidden API)
    USAGE = 2  # bad command line, unknown exercise, missing file (click's own convention is 2 too)
    LEARNER_ERROR = 3  # the submission could not be graded: syntax/import error, crash, timeout
    JUDGE_ERROR = 4  # a bug or broken exercise on grind's side
    ENVIRONMENT = 5  # this Python lacks what grading needs (torch): install it, then run again


# A verdict's exit code, by its status (judge.models.Status's values): the full CLI and the fast
# `grind run` (judge/entry.py) both answer with it, so they cannot disagree.
_VERDICT_EXIT = {
    "passed": ExitStatus.PASSED,
    "failed": ExitStatus.FAILED,
    "forbidden": ExitStatus.FAILED,
    "error": ExitStatus.LEARNER_ERROR,
    "timeout": ExitStatus.LEARNER_ERROR,
    "crashed": ExitStatus.LEARNER_ERROR,
}


def verdict_exit(status: str) -> ExitStatus:
    """The exit code of a verdict whose status is ``status`` (a ``Status`` or its value)."""
    return _VERDICT_EXIT[str(getattr(status, "value", status))]
