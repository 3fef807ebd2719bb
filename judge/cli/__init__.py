"""The command line: a thin typer adapter over the core, and the one error boundary.

Each command parses its arguments, calls the core (what a command decides is in
``judge.commands`` for the learner's commands and ``judge.classroom`` for the instructor's),
renders with ``judge.render``, and maps the outcome to an exit code (see ``judge.status``).
``JudgeError`` (and any unexpected exception) becomes one line on stderr; ``--traceback`` shows
the full traceback instead.

``shared`` holds the typer app, ``GrindGroup`` (the boundary) and the helpers every command
shares; the commands live by audience in ``learner``, ``quiz``, ``instructor`` and ``daemon``
(the daemon and cache sub-apps), each imported here so that it registers on ``app``.
typer stays inside this package (tests/test_architecture.py).

Importing this package must not import torch: ``grind --help`` and ``grind list`` stay instant.
"""

from __future__ import annotations

from judge.catalog import unknown_name_message
from judge.cli.shared import GrindGroup, app, console

# The commands, by audience: each module registers its commands on ``app`` (and its sub-apps)
# when imported. The order keeps ``grind --help``'s:
# the learner's commands, then the instructor's, then the groups in the order added here.
from judge.cli import learner  # noqa: F401 - first: its commands lead the help; it imports quiz
from judge.cli import instructor  # then the instructor's
from judge.cli import daemon, quiz  # sub-apps only

app.add_typer(daemon.cache_app, name="cache")
app.add_typer(daemon.daemon_app, name="daemon")
app.add_typer(quiz.quiz_app, name="quiz")
app.add_typer(instructor.autograder_app, name="autograder")


def main() -> None:
    """Console-script entry point."""
    app(prog_name="grind")


__all__ = ["GrindGroup", "app", "console", "main", "unknown_name_message"]
