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
    """``judge.cli.run`` for ``args``: the exit code, or None when the full CLI must run it.

    The job goes to the daemon as soon as the file is known, before the progress database and the
    modules that record an attempt are loaded: those load while the daemon grades (``_early``).
    A problem with the progress found after that still hands the command to the full CLI, which
    grades it again and says what it always said; nothing was recorded."""
    from judge.catalog import Catalog
    from judge.workspace import find_workspace, pick_file, progress_path

    try:  # nothing recorded yet: any problem is the full CLI's to report, in its own words
        exercise = Catalog().get(args.name)
        root = find_workspace()
        path, recording, notices = pick_file(exercise, root, args.file)
    except Exception:  # noqa: BLE001 - handed over, not swallowed: the full CLI runs the command
        return None
    early = _early(args, exercise, path) if path.suffix == ".py" and _note(exercise) is None else None
    try:
        from judge.progress import Progress

        state = Progress(progress_path(root), warn=_warn)
        interview = state.interview(exercise.slug) if recording else None
    except Exception:  # noqa: BLE001 - as above: handed over (the early grade recorded nothing)
        return None
    try:
        return _grade_and_show(args, exercise, state, path, recording, notices, interview, early)
    except BrokenPipeError:
        try:  # as judge.cli: the reader left; nothing more to say to it
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    except Exception as exc:  # noqa: BLE001 - the error boundary of this path, worded as the CLI's
        return _boundary(exc, args.as_json)


class _Early(NamedTuple):
    """A grade begun before the progress was opened: what ``grade_and_record`` gets back from its
    ``grade`` call, or the exception that call raised, re-raised there (judge.outcome)."""

    worker: Any
    source: str | None  # what was graded (None: not UTF-8, and ``grade`` read the file itself)
    started_at: float
    verdict: Any
    error: BaseException | None


def _early(args: RunArgs, exercise: Exercise, path: Path) -> _Early:
    """Grade ``path`` now, as ``grade_and_record`` would (the same arguments): the daemon's job is
    sent first, and the recording's modules and the renderer load while it grades."""
    import time

    from judge.daemon import worker_for
    from judge.grade import grade
    from judge.paths import hidden_from_learners
    from judge.text import read_source

    worker = worker_for(lambda: hidden_from_learners(exercise), opt_out=args.no_daemon)
    if worker is not None:
        worker.meanwhile = _load_recording if args.as_json else _load_all
    started_at = time.time()
    text, unreadable = read_source(path)
    source = None if unreadable else text
    # Cold: opted out, or no daemon yet (the first run of a session starts one and grades cold).
    cold = worker is None or worker.absent()
    prestarted = cold and source is not None and _compiles(source, path)
    if prestarted:
        from judge.executor import prestart_learner

        # Its child imports torch while the rest of grind loads; what records the attempt and
        # draws the verdict loads while the child runs. (numpy waits for the child's end: loaded
        # beside it, it added ten megabytes to the run's peak and no measurable speed.)
        prestart_learner(exercise, meanwhile=_load_recording if args.as_json else _load_all)
    kwargs: dict[str, Any] = {"speed": True}
    if worker is not None:
        kwargs["worker"] = worker
    try:
        return _Early(worker, source, started_at, grade(exercise, path, source=source, **kwargs), None)
    except Exception as exc:  # noqa: BLE001 - raised again where the grade would have raised it
        return _Early(worker, source, started_at, None, exc)
    finally:
        if prestarted:  # not taken (a static verdict): killed now, not left to the next grade
            from judge.executor import drop_prestarted

            drop_prestarted()


def _compiles(source: str, path: Path) -> bool:
    """Whether ``source`` parses: a file with a syntax error gets its verdict from the static
    checks, in a tenth of a second, and must not wait for a prestarted child to be killed."""
    import _ast

    try:
        compile(source, str(path), "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    except Exception:  # noqa: BLE001 - whatever stops the parse, the static checks say it
        return False
    return True


def _load_recording() -> None:
    """What records the attempt (the progress database, the scheduler), loaded while the daemon
    grades, or while a cold run's child runs."""
    import judge.outcome  # noqa: F401 - loaded for later


def _load_all() -> None:
    _load_recording()
    _load_renderer()


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
                    notices: list[str], interview: Any, early: _Early | None) -> int:
    from judge.outcome import grade_and_record
    from judge.practice import Sitting
    from judge.status import verdict_exit

    sitting = Sitting(exercise, path, "run", None, interview=interview)
    if early is None:  # a notebook, or a first grade: graded as the CLI does
        outcome = _grade_now(args, exercise, state, sitting, recording, notices)
    else:
        def replay(exercise_: Exercise, path_: Path, *, source: str | None = None, **kwargs: Any) -> Any:
            """The early grade, if it graded what grade_and_record read; else the grade, again."""
            if source != early.source:  # the file changed in between: grade what is recorded
                from judge.grade import grade

                return grade(exercise_, path_, source=source, **kwargs)
            if early.error is not None:
                raise early.error
            return early.verdict

        outcome = grade_and_record(state, sitting, record=recording, lead=notices, speed=True, worker=early.worker,
                                   grade=replay, started_at=early.started_at)
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


def _grade_now(args: RunArgs, exercise: Exercise, state: Any, sitting: Any, recording: bool,
               notices: list[str]) -> Any:
    """``grade_and_record`` as judge.cli.run calls it: for a notebook, and a first grade that says so."""
    from judge.daemon import worker_for
    from judge.outcome import grade_and_record
    from judge.paths import hidden_from_learners

    note = _note(exercise)
    if note is not None:
        from judge.text import for_terminal

        _echo(for_terminal(f"grind: {note}", sys.stderr), sys.stderr)
    worker = worker_for(lambda: hidden_from_learners(exercise), opt_out=args.no_daemon)
    if worker is not None and not args.as_json:
        worker.meanwhile = _load_renderer
    return grade_and_record(state, sitting, record=recording, lead=notices, speed=True, worker=worker)


def _note(exercise: Exercise) -> str | None:
    """judge.cli._say_reference_note's line (on a terminal, before a first, slow grade), or None.
    With one to say, the grade waits for the progress as the CLI's does (``_grade_now``): the
    progress is opened first, so a command handed over to the full CLI never says it twice."""
    if not sys.stderr.isatty():
        return None
    from judge.cache import reference_note

    return reference_note(exercise)
