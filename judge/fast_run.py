"""``grind run NAME`` answered without typer, rich or numpy (judge/entry.py hands it over).

With the per-user daemon warm, a ``grind run`` is mostly its own start: the job is a few tens of
milliseconds in the daemon, while loading typer, rich and the command modules took several
times that. So the console script (judge/entry.py) sends it here. For the one command a learner repeats all day,
``grind run NAME`` with ``--file``, ``--json`` or ``--no-daemon`` and nothing else, it parses
the command line itself and runs the very steps of ``judge.cli.run`` (the catalog, the
workspace, ``judge.outcome.grade_and_record``, the view model and the plain renderer), drawing
with rich only on a terminal, at the end. Anything else goes to the full typer CLI untouched:
another command, any other flag, ``--help``, shell completion, ``GRIND_TRACEBACK``.

Where a problem shows decides who reports it. Before anything is written (an unknown exercise,
a missing file, a progress database in the way) this path steps aside and the full CLI runs the
command from the start, so that every usage error reads exactly as it always has. From the grade
on, a progress record may exist, so the command is never run twice: a ``JudgeError`` and a bug
are reported here, in the same words and with the same exit codes as the CLI's error boundary
(``judge.cli.GrindGroup``). tests/test_fast_path.py holds the two paths to the same output.

Imports here are the standard library's only: this module is imported by every ``grind run``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple

if TYPE_CHECKING:
    from judge.models import Exercise

# What click's echo strips from a line written to a stream that is not a terminal.
_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


class RunArgs(NamedTuple):
    name: str
    file: Path | None
    as_json: bool
    no_daemon: bool


def parse_run(argv: list[str]) -> RunArgs | None:
    """``grind run``'s arguments when they are the few this path knows, else None.

    Accepted, in any order: one NAME, ``--file PATH`` (``-f PATH``, ``--file=PATH``) at most
    once, ``--json``, ``--no-daemon``. Anything else (``--help``, ``--interview``, ``--``, a
    second name, a value that looks like a flag) is the full CLI's to parse and to explain."""
    if not argv or argv[0] != "run":
        return None
    name: str | None = None
    file: str | None = None
    flags = {"--json": False, "--no-daemon": False}
    rest = iter(argv[1:])
    for token in rest:
        if token in flags:
            flags[token] = True
        elif token in ("--file", "-f") or token.startswith("--file="):
            value = _file_value(token, rest)
            if file is not None or value is None:
                return None
            file = value
        elif token.startswith("-") or name is not None or not token:
            return None
        else:
            name = token
    if name is None:
        return None
    return RunArgs(name, Path(file) if file is not None else None, flags["--json"], flags["--no-daemon"])


def _file_value(token: str, rest: Iterator[str]) -> str | None:
    """The PATH of ``--file=PATH``, or of ``--file PATH`` (taken from ``rest``); None when there is
    none or it looks like a flag."""
    value = token.partition("=")[2] if "=" in token else next(rest, None)
    return value if value and not value.startswith("-") else None


def answer(argv: list[str]) -> int | None:
    """``grind ARGV``'s exit code when this path ran it, or None: the full CLI's to run."""
    args = parse_run(argv)
    if args is None:
        return None
    try:
        return run(args)
    except KeyboardInterrupt:  # before the grade, too: the CLI's line and code, never a traceback
        _echo("grind: interrupted", sys.stderr)
        return 130


def _warn(message: str) -> None:
    """The progress database's warnings, as ``judge.cli._warn`` says them."""
    _echo(f"grind: warning: {message}", sys.stderr)


def _echo(text: str, stream: Any) -> None:
    """``typer.echo``'s output: the line, with ANSI sequences stripped when not on a terminal."""
    isatty = getattr(stream, "isatty", None)
    if not (isatty is not None and isatty()):
        text = _ANSI.sub("", text)
    stream.write(text + "\n")
    stream.flush()


def run(args: RunArgs) -> int | None:
    """``judge.cli.run`` for ``args``: the exit code, or None when the full CLI must run it."""
    from judge.catalog import Catalog
    from judge.outcome import pick_file
    from judge.progress import Progress
    from judge.workspace import find_workspace, progress_path

    try:  # nothing recorded yet: any problem is the full CLI's to report, in its own words
        exercise = Catalog().get(args.name)
        root = find_workspace()
        state = Progress(progress_path(root), warn=_warn)
        path, recording, notices = pick_file(exercise, root, args.file)
        interview = state.interview(exercise.slug) if recording else None
    except Exception:  # noqa: BLE001 - handed over, not swallowed: the full CLI runs the command
        return None
    try:
        return _grade_and_show(args, exercise, state, path, recording, notices, interview)
    except BrokenPipeError:
        try:  # as judge.cli: the reader left; nothing more to say to it
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    except Exception as exc:  # noqa: BLE001 - the error boundary of this path, worded as the CLI's
        return _boundary(exc, args.as_json)


def _boundary(exc: Exception, as_json: bool) -> int:
    from judge.errors import EnvironmentProblem, JudgeError, UsageError
    from judge.status import ExitStatus

    if not isinstance(exc, JudgeError):
        _echo(f"grind: internal error: {type(exc).__name__}: {exc} (rerun with --traceback)", sys.stderr)
        return int(ExitStatus.JUDGE_ERROR)
    kind = "usage" if isinstance(exc, UsageError) else "environment" if isinstance(exc, EnvironmentProblem) else "grind"
    if as_json:
        _echo(json.dumps({"error": {"kind": kind, "message": exc.message, "exit_code": int(exc.exit_status)}},
                         indent=2), sys.stdout)
    else:
        _echo(f"grind: {exc.message}", sys.stderr)
    return int(exc.exit_status)


def _load_renderer() -> None:
    """The verdict's view model and plain renderer, loaded while the daemon grades."""
    import judge.render.direct  # noqa: F401 - loaded for later
    import judge.views.verdict  # noqa: F401


def _grade_and_show(args: RunArgs, exercise: Exercise, state: Any, path: Path, recording: bool,
                    notices: list[str], interview: Any) -> int:
    from judge.daemon import worker_for
    from judge.outcome import grade_and_record
    from judge.practice import Sitting
    from judge.status import verdict_exit
    from judge.paths import hidden_from_learners

    if sys.stderr.isatty():  # as judge.cli._say_reference_note: before a first, slow grade
        from judge.cache import reference_note

        note = reference_note(exercise)
        if note is not None:
            from judge.text import for_terminal

            _echo(for_terminal(f"grind: {note}", sys.stderr), sys.stderr)
    sitting = Sitting(exercise, path, "run", None, interview=interview)
    worker = worker_for(lambda: hidden_from_learners(exercise), opt_out=args.no_daemon)
    if worker is not None and not args.as_json:
        worker.meanwhile = _load_renderer
    outcome = grade_and_record(state, sitting, record=recording, lead=notices, speed=True, worker=worker)
    verdict, lead = outcome.verdict, outcome.lead
    if args.as_json:
        verdict.notices += lead
    verdict.notices += outcome.notices
    if args.as_json:
        _echo(json.dumps(verdict.to_json(), indent=2), sys.stdout)
    else:
        from judge.views.verdict import HintInfo

        running = state.running_interview(exercise.slug)
        hints = None if running else HintInfo(state.hints_shown(exercise.slug), len(exercise.hints))
        from judge.render.direct import draw_verdict

        draw_verdict(verdict, exercise, hints, lead)
        if verdict.learner_line and not verdict.passed and not sys.stdout.isatty():  # as judge.cli._editor_line
            from judge.verify import editor_line

            line = editor_line(verdict, path)
            if line is not None:
                _echo(line, sys.stdout)
    return int(verdict_exit(verdict.status))
