"""The core's exceptions: small and flat.

A learner's failing submission is *not* an exception: it is a Verdict. These are for things
that stop grind from producing a verdict at all. The CLI is the only place they are caught.
"""

from __future__ import annotations

from judge.status import ExitStatus


class JudgeError(Exception):
    """Something went wrong on grind's side (a broken exercise, an unreadable cache...)."""

    exit_status = ExitStatus.JUDGE_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(JudgeError):
    """The user asked for something that cannot be done as asked (unknown name, missing file)."""

    exit_status = ExitStatus.USAGE


class ManifestError(JudgeError):
    """An exercise folder is malformed. The message names the file and the key."""


class EnvironmentProblem(JudgeError):
    """This Python lacks something grading needs (torch): fixed by installing, not by editing."""

    exit_status = ExitStatus.ENVIRONMENT
