"""The command line: a thin typer adapter over the core, and the one error boundary.

Each command parses its arguments, calls the core (what a command decides is in
``judge.commands`` for the learner's commands and ``judge.classroom`` for the instructor's),
renders with ``judge.render``, and maps the outcome to an exit code (see ``judge.status``).
``JudgeError`` (and any unexpected exception) becomes one line on stderr; ``--traceback`` shows
the full traceback instead.

Importing this module must not import torch: ``grind --help`` and ``grind list`` stay instant.
"""

# size: ~900 lines, most typer's option declarations; typer stays in this one file (test_architecture, entry.py)
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from typer.core import TyperGroup

from judge import __version__, commands
from judge.catalog import Catalog, unknown_name_message
from judge.errors import EnvironmentProblem, JudgeError, UsageError
from judge.models import Exercise, Status, Verdict
from judge.progress import Progress
from judge.status import ExitStatus, verdict_exit
from judge.text import for_terminal
from judge.workspace import current_exercise, find_workspace, init_workspace, learner_file, progress_path

VERDICT_EXIT = {status: verdict_exit(status) for status in Status}


class GrindGroup(TyperGroup):
    """Adds the single error boundary around every command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # Remember --json before the command's own parsing can fail: its usage errors are JSON too.
        ctx.meta["grind_json"] = "--json" in args
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except JudgeError as exc:
            if _want_traceback(ctx):
                raise
            kind = ("usage" if isinstance(exc, UsageError) else
                    "environment" if isinstance(exc, EnvironmentProblem) else "grind")
            _fail(ctx, exc.message, exc.exit_status, kind)
        except KeyboardInterrupt:
            typer.echo("grind: interrupted", err=True)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # The reader left (`grind grade --help | head`): not a bug, and nothing more to say to
            # it. stdout goes to /dev/null so the interpreter's last flush cannot fail again; the
            # status is a shell's for a process that SIGPIPE ended (128 + 13).
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError):
                pass
            raise typer.Exit(141) from None
        except (typer.Exit, typer.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - the boundary: a bug is one line, not a traceback
            if _is_click_usage_error(exc) and not _want_traceback(ctx):
                _usage_error(ctx, exc)
            if _want_traceback(ctx) or type(exc).__module__.startswith(("click", "typer")):
                raise
            typer.echo(f"grind: internal error: {type(exc).__name__}: {exc} (rerun with --traceback)", err=True)
            raise typer.Exit(int(ExitStatus.JUDGE_ERROR)) from None


def _is_click_usage_error(exc: BaseException) -> bool:
    """click's UsageError family (typer may vendor click, so matched by shape, not by class)."""
    return (type(exc).__module__.startswith(("click", "typer")) and getattr(exc, "exit_code", None) == 2
            and hasattr(exc, "format_message"))


def _usage_error(ctx: Any, exc: Any) -> None:
    """A command's arguments were wrong: one grind line (or JSON), not click's boxed error."""
    sub = getattr(exc, "ctx", None)
    command = f"grind {sub.info_name}" if sub is not None and sub is not ctx else "grind"
    if sub is not None and sub is not ctx and sub.parent is not None and sub.parent is not ctx:
        command = f"grind {sub.parent.info_name} {sub.info_name}"  # a subcommand's: grind quiz answer
    param = getattr(exc, "param", None)
    if type(exc).__name__ == "MissingParameter" and getattr(param, "name", None) == "name":
        message = f"which exercise? '{command} NAME', e.g. '{command} clipping' ('grind list' shows them)"
    else:
        message = f"{exc.format_message()} (see '{command} --help')"
    _fail(ctx, message, ExitStatus.USAGE, "usage")


def _fail(ctx: Any, message: str, status: ExitStatus, kind: str) -> None:
    """One line on stderr, or with --json one JSON object on stdout; then the exit code."""
    if ctx.meta.get("grind_json"):
        typer.echo(json.dumps({"error": {"kind": kind, "message": message, "exit_code": int(status)}}, indent=2))
    else:
        typer.echo(f"grind: {message}", err=True)
    raise typer.Exit(int(status)) from None


def _confirm(question: str, refused: str = "Nothing changed.") -> None:
    """Ask; a no (or no answer: end of input, Ctrl-C) exits with the usage code everywhere."""
    try:
        if typer.confirm(question, default=False):
            return
    except typer.Abort:
        typer.echo("")
    typer.echo(refused)
    raise typer.Exit(int(ExitStatus.USAGE))


def _want_traceback(ctx: Any) -> bool:
    return bool((ctx.obj or {}).get("traceback")) or os.environ.get("GRIND_TRACEBACK") == "1"


app = typer.Typer(
    cls=GrindGroup,
    help="grind: practise ML-training code from memory and get a verdict you can trust.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
cache_app = typer.Typer(help="Manage the cache of reference observations.")
app.add_typer(cache_app, name="cache")
daemon_app = typer.Typer(help="The warm per-user daemon that makes 'grind run' answer without a torch start.")
app.add_typer(daemon_app, name="daemon")


def console(stderr: bool = False) -> Console:
    """A fresh console per command, on whatever sys.stdout is now (CliRunner swaps it).
    rich honours NO_COLOR and drops styling when the stream is not a terminal."""
    return Console(file=sys.stderr if stderr else sys.stdout, highlight=False)


def complete_names(incomplete: str) -> list[str]:
    try:
        return [slug for slug in Catalog().slugs() if slug.startswith(incomplete)]
    except Exception:  # noqa: BLE001 - completion must never print a traceback into the shell
        return []


NAME = typer.Argument(..., help="Exercise name, e.g. clipping.", autocompletion=complete_names, show_default=False)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"grind {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    traceback: bool = typer.Option(False, "--traceback", help="Show full tracebacks for grind's own errors."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    ctx.obj = {"traceback": traceback}


def _state() -> tuple[Path | None, Progress]:
    root = find_workspace()
    return root, Progress(progress_path(root), warn=_warn)


def _warn(message: str) -> None:
    typer.echo(f"grind: warning: {message}", err=True)


OUTSIDE_WORKSPACE = ("No grind workspace here: progress lives in a workspace (its .grind folder); this shows only "
                     "runs made outside one. 'grind init' makes one.")


def _workspace_root() -> Path:
    root = find_workspace()
    if root is None:
        raise UsageError("No grind workspace here (no grind.toml in this folder or above). Run 'grind init'.")
    return root


def _exercise(name: str) -> Exercise:
    return Catalog().get(name)


def _course() -> list[Exercise]:
    """Every loadable exercise; each broken one named in a line on stderr."""
    exercises, problems = Catalog().load_all()
    for problem in problems:
        typer.echo(f"grind: skipped a broken exercise: {problem.message}", err=True)
    return exercises


def _json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2))


@app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help="Print the list as JSON.")) -> None:
    """List the exercises, with title, topic, difficulty and your status."""
    root, state = _state()
    if root is None:
        typer.echo(f"grind: {OUTSIDE_WORKSPACE}", err=True)
    rows = [(exercise, state.status(exercise.slug)) for exercise in _course()]
    if as_json:
        _json([{"slug": e.slug, "title": e.title, "topic": e.topic, "difficulty": e.difficulty, "status": s}
               for e, s in rows])
        return
    from judge.render import render_list

    render_list(console(), rows)


@app.command()
def show(name: str = NAME) -> None:
    """Print an exercise's statement."""
    exercise = _exercise(name)
    from judge.render import render_statement

    render_statement(console(), exercise.title, exercise.statement_path.read_text(encoding="utf-8"))


@app.command()
def run(
    name: Optional[str] = typer.Argument(None, help="Exercise name, e.g. clipping (default: the exercise folder "
                                         "you are in, else the one you ran last).", autocompletion=complete_names,
                                         show_default=False),
    file: Optional[Path] = typer.Option(None, "--file", "-f", help="Grade this file instead of the workspace's."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
    interview: bool = typer.Option(False, "--interview", help="From memory: a blanked file, a countdown, no hints "
                                   "until you pass or the time is up; checks on every save."),
    minutes: Optional[float] = typer.Option(None, "--minutes", min=0.1, help="Interview length (default: the "
                                            "exercise's interview_minutes)."),
    manual: bool = typer.Option(False, "--manual", help="In an interview, check on Enter instead of on save."),
    repro: bool = typer.Option(False, "--repro", help="Also write repro_NAME.py beside your file: the first "
                               "failing check's exact input, a call of your code and the expected values, "
                               "to run and debug in your own tools."),
    no_daemon: bool = typer.Option(False, "--no-daemon", help="Grade in a fresh process, without the warm "
                                   "per-user daemon (as GRIND_NO_DAEMON=1 does)."),
    every: bool = typer.Option(False, "--all", help="Grade every exercise of the workspace in order, with a "
                               "progress bar, up to the first that does not pass (exit 0 only if all pass)."),
) -> None:
    """Grade your submission for an exercise (or sit it as an interview). Without a name: the
    exercise folder you are in, else the exercise you ran last."""
    from judge.outcome import pick_file

    if every:
        commands.refuse_with_all(name, file, as_json, interview, repro, minutes)
        _run_all(no_daemon)
        return
    root, state = _state()
    exercise = _exercise(name or current_exercise(root, state.last_exercise(), Catalog().slugs()))
    commands.check_interview_options(interview, minutes, file, as_json, repro)
    if interview:
        _practice_session(_workspace_root(), state, [exercise], interview=True, minutes=minutes, manual=manual)
        return
    if repro:  # the script holds the exercise's case code, hidden cases included
        commands.refuse_during_interview(state, exercise, "repro script")
    path, recording, notices = pick_file(exercise, root, file)
    _say_reference_note(exercise)
    verdict, lead = commands.run_verdict(state, exercise, path, recording, notices, no_daemon=no_daemon,
                                         as_json=as_json, repro=repro, file_given=file is not None)
    _print_verdict(verdict, exercise, state, as_json, lead=lead)
    _editor_line(verdict, path, as_json)
    raise typer.Exit(int(VERDICT_EXIT[verdict.status]))


def _editor_line(verdict: Verdict, path: Path, as_json: bool) -> None:
    """In plain mode (not a terminal: an editor's task runner, a pipe), one ``file:line: error:
    message`` line a problem matcher reads, when a line of the learner's file is at fault."""
    if as_json or console().is_terminal:
        return
    from judge.verify import editor_line

    line = editor_line(verdict, path)
    if line is not None:
        typer.echo(line)


def _run_all(no_daemon: bool) -> None:
    """``grind run --all``: every exercise in order with a progress bar, stopping at the first that
    does not pass (its verdict is shown); exit 0 only if all pass."""
    from judge.render import grading_progress
    from judge.verify import all_summary, grade_all

    root = _workspace_root()
    _, state = _state()
    exercises = _course()

    def grade_one(exercise: Exercise, path: Path, record: bool) -> Any:
        return commands.grade_one(state, exercise, path, record, no_daemon)

    with grading_progress(console(stderr=True), len(exercises)) as tick:
        result = grade_all(state, root, exercises, grade_one=grade_one,
                           on_graded=lambda slug, status: tick(slug, {"verdict": {"status": status}}, False))
    failing = result.first_failure
    if failing is not None:
        exercise = next(e for e in exercises if e.slug == failing[0])
        _print_verdict(failing[1], exercise, state, False)
        _editor_line(failing[1], learner_file(root, exercise), False)
    _say(all_summary(result))
    raise typer.Exit(int(ExitStatus.PASSED if failing is None else VERDICT_EXIT[failing[1].status]))


def _say_reference_note(exercise: Exercise) -> None:
    """Before a grade that computes the reference first: one line on stderr, said before the wait,
    to a person at a terminal (a script or an editor's task gets the verdict alone, as before)."""
    if not sys.stderr.isatty():
        return
    from judge.cache import reference_note

    note = reference_note(exercise)
    if note is not None:
        typer.echo(for_terminal(f"grind: {note}", sys.stderr), err=True)


def _say(text: str) -> None:
    """A plain line grind prints itself on stdout, wrapped at words on a terminal."""
    typer.echo(for_terminal(text, sys.stdout))


def _print_verdict(verdict: Verdict, exercise: Exercise, state: Progress, as_json: bool,
                   lead: list[str] | None = None) -> None:
    if as_json:
        _json(verdict.to_json())
        return
    from judge.render import render_verdict

    render_verdict(console(), verdict, exercise, commands.hint_info(state, exercise), lead=lead)


@app.command()
def hint(
    name: str = NAME,
    show_all: bool = typer.Option(False, "--all", help="Show again every hint revealed so far."),
) -> None:
    """Reveal the next hint (one per call; grind remembers how many you have seen)."""
    from judge.render import render_text

    exercise = _exercise(name)
    _, state = _state()
    commands.refuse_during_interview(state, exercise, "hints")
    out = console()
    for shown in commands.hint_screens(state, exercise, show_all):
        if isinstance(shown, str):
            typer.echo(shown)
        else:
            render_text(out, shown.title, shown.text)


@app.command()
def solution(
    name: str = NAME,
    force: bool = typer.Option(False, "--force", help="Reveal even before you have passed, without asking."),
    diff: bool = typer.Option(False, "--diff", help="After a pass: a diff of your workspace file against the "
                              "reference."),
) -> None:
    """Show the reference solution (after a pass; before that only if you confirm)."""
    from judge.render import render_text

    exercise = _exercise(name)
    _, state = _state()
    commands.refuse_during_interview(state, exercise, "solution")
    if diff:
        from judge.verify import solution_diff

        typer.echo(solution_diff(exercise, learner_file(_workspace_root(), exercise), state.passed(exercise.slug)),
                   nl=False)
        return
    if not state.passed(exercise.slug) and not force:
        _confirm(f"You have not passed '{exercise.slug}' yet. Reveal the reference anyway?",
                 "Kept hidden. 'grind hint' gives a nudge instead.")
    render_text(console(), f"Reference solution: {exercise.slug}",
                exercise.reference_path.read_text(encoding="utf-8"), syntax=True)


@app.command()
def reset(
    name: Optional[str] = typer.Argument(None, help="Exercise name, e.g. clipping.", autocompletion=complete_names,
                                         show_default=False),
    every: bool = typer.Option(False, "--all", help="Put back the stub of every exercise."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Put the stub back in your workspace (your current file is backed up first)."""
    commands.check_reset_args(name, every)
    if every:
        root = _workspace_root()
        exercises = _course()
        if not yes:
            _confirm(f"Replace every exercise's file in {root} with its stub "
                     f"({len(exercises)} files; each is backed up first)?")
        typer.echo(commands.reset_all(root, exercises))
        return
    exercise = _exercise(name)  # type: ignore[arg-type]  # check_reset_args: a name without --all
    root = _workspace_root()
    if not yes:
        _confirm(f"Replace {learner_file(root, exercise)} with the stub?")
    for line in commands.reset_one(root, exercise, lambda: _state()[1]):
        typer.echo(line)


@app.command()
def progress(
    as_json: bool = typer.Option(False, "--json", help="Print the progress as JSON."),
    reset_all: bool = typer.Option(False, "--reset", help="Forget all progress (after asking)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --reset: do not ask for confirmation."),
    export: Optional[str] = typer.Option(None, "--export", help="Print the per-exercise table as csv or md "
                                         "(Markdown), to save or paste.", show_default=False),
) -> None:
    """Your progress: status, best time, attempts, last practised and next review per exercise."""
    commands.check_export(export)
    root, state = _state()
    if root is None:
        typer.echo(f"grind: {OUTSIDE_WORKSPACE}", err=True)
    if reset_all:
        if not yes:
            _confirm(f"Forget every attempt, hint and review in {state.path}?")
        state.reset()
        typer.echo("Progress cleared.")
        return
    exercises = _course()
    overview = state.overview([e.slug for e in exercises])
    if export is not None:
        from judge.verify import export_progress

        typer.echo(export_progress(overview, export), nl=False)
        return
    from judge.quiz import card_progress, quiz_json

    card_rows = card_progress(state, _quiz_cards(exercises))
    if as_json:
        _json({**overview.to_json(), "quiz": quiz_json(card_rows, overview.now)})
        return
    from judge.render import render_progress, show
    from judge.views.screens import quiz_progress_view

    render_progress(console(), overview)
    if card_rows:
        show(console(), quiz_progress_view(card_rows, overview.now))


@app.command()
def watch(
    name: Optional[str] = typer.Argument(None, help="Exercise to start with (default: the first one not passed).",
                                         autocompletion=complete_names, show_default=False),
    manual: bool = typer.Option(False, "--manual", help="Check on Enter instead of on save (for file systems "
                                "where save events do not arrive)."),
) -> None:
    """Re-grade on every save. Keys: h hint, n next exercise, l list, q quit."""
    from judge.watch import watch_session, watch_summary

    root = _workspace_root()
    _, state = _state()
    exercises, _problems = Catalog().load_all()
    first = commands.first_to_watch(state, exercises, _exercise(name) if name is not None else None)
    with _loop(root, state, manual) as loop:
        sittings = watch_session(loop, state, root, exercises, first)
    typer.echo(watch_summary(sittings))


@app.command()
def practice(
    count: int = typer.Option(3, "--count", "-n", min=1, help="How many exercises in this session."),
    topic: Optional[str] = typer.Option(None, "--topic", help="Only exercises of this topic."),
    interview: bool = typer.Option(False, "--interview", help="Each exercise as an interview: a blanked file, "
                                   "a countdown, no hints until you pass or the time is up."),
    minutes: Optional[float] = typer.Option(None, "--minutes", min=0.1, help="Interview length (default: each "
                                            "exercise's interview_minutes)."),
    manual: bool = typer.Option(False, "--manual", help="Check on Enter instead of on save."),
    cards: int = typer.Option(5, "--cards", min=0, help="Quiz cards asked first: the due ones, then new ones "
                              "(0: none)."),
) -> None:
    """A spaced-repetition session: the quiz cards and exercises due for review, then new ones."""
    commands.check_interview_options(interview, minutes, None, False, False)
    root = _workspace_root()
    _, state = _state()
    exercises = _course()
    deck = _quiz_cards(exercises, topic, quiet_topic=True) if cards and not interview else []
    plan = commands.plan_practice(state, exercises, deck, time.time(), count, topic, cards)
    if plan.nothing is not None:
        typer.echo(plan.nothing)
        return
    if plan.asked:
        if plan.picked:
            from judge.environment import require_torch

            require_torch()  # before the cards: a missing torch should not wait until after them
        typer.echo(plan.cards_line())
        session = _quiz_session(state, plan.asked, mode="practice")
        if session.quit_early or not plan.picked:
            return
        typer.echo(plan.exercises_line())
    _practice_session(root, state, plan.picked, interview=interview, minutes=minutes, manual=manual)


def _loop(root: Path, state: Progress, manual: bool) -> Any:
    from judge.environment import require_torch
    from judge.render import WatchView
    from judge.watch import open_loop

    require_torch()  # before the screen is taken over: every check in the loop needs it
    return open_loop(state, root, WatchView(console()), manual=manual, listing=commands.CourseListing(state))


def _practice_session(root: Path, state: Progress, picked: list[Exercise], *, interview: bool,
                      minutes: float | None, manual: bool) -> None:
    from judge.render import render_practice_summary
    from judge.watch import practice_session

    with _loop(root, state, manual) as loop:
        sittings = practice_session(loop, state, root, picked, interview=interview, minutes=minutes)
    render_practice_summary(console(), sittings, time.time())


@app.command()
def init(
    directory: Path = typer.Argument(Path("grind-practice"), help="Folder for the workspace."),
    notebook: bool = typer.Option(False, "--notebook", help="Also write a starter notebook per exercise "
                                  "(NAME/NAME.ipynb: the statement, then the stub in a %%grind NAME cell)."),
) -> None:
    """Create a practice workspace holding a copy of every stub."""
    exercises = _course()
    report = init_workspace(directory, exercises)
    books = None
    if notebook:
        from judge.frontends.starter import write_notebooks

        books = write_notebooks(report.root, exercises)
    for line in commands.init_lines(directory, report, books):
        _say(line)


@app.command()
def doctor(as_json: bool = typer.Option(False, "--json", help="Print the report as JSON.")) -> None:
    """Show how submissions are isolated on this machine, and how to isolate them better."""
    from judge.worker.isolation import doctor as doctor_report

    from judge.environment import install_advice, torch_version

    info = doctor_report()
    info["torch"] = torch_version()
    if info["torch"] is None:
        info["torch_advice"] = install_advice()
    if as_json:
        _json(info)
    else:
        from judge.render import render_doctor

        render_doctor(console(), info)
    if info["torch"] is None:
        raise typer.Exit(int(ExitStatus.ENVIRONMENT))


@app.command("mcp")
def mcp_command(
    workspace: Optional[Path] = typer.Option(None, "--workspace", "-w", help="Practise in this workspace "
                                             "(default: the one found from the current folder)."),
) -> None:
    """Serve grind to an AI tutor: a Model Context Protocol server on stdio (the mcp extra)."""
    if workspace is not None:
        if not workspace.is_dir():
            raise UsageError(f"{workspace}: no such folder")
        os.chdir(workspace)
    try:
        from judge.frontends.mcp_server import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types", "pydantic", "anyio"):
            raise
        raise EnvironmentProblem(f"grind mcp needs the mcp package: pip install '.[mcp]' in grind's folder (here: {exc})") from None
    serve()


@daemon_app.command("status")
def daemon_status(as_json: bool = typer.Option(False, "--json", help="Print the status as JSON.")) -> None:
    """Say whether the warm daemon runs, and what it is keyed by."""
    from judge import daemon

    info = daemon.status()
    why_not = None if info is not None else daemon.why_no_daemon()
    if as_json:
        socket = daemon.socket_path() if info is None and why_not is None else None
        _json(commands.daemon_status_json(info, why_not, socket))
        return
    typer.echo(commands.daemon_status_text(info, why_not))


@daemon_app.command("stop")
def daemon_stop() -> None:
    """Stop the warm daemon (the next 'grind run' starts it again, unless GRIND_NO_DAEMON=1)."""
    from judge import daemon

    typer.echo("Stopped the grind daemon." if daemon.stop() else "No grind daemon was running.")


@cache_app.command("clear")
def cache_clear() -> None:
    """Delete cached reference observations (they are rebuilt on the next run)."""
    from judge import cache

    removed = cache.clear()
    typer.echo(f"Removed {removed} cached exercise(s) from {cache.cache_root()}")


# ---------------------------------------------------------------------------------------------
# The quiz


class QuizGroup(TyperGroup):
    """``grind quiz [TOPIC]`` is a session, ``grind quiz list`` and ``grind quiz answer`` are
    commands: a first word that names no command (or no word at all) is the session's."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
            args = ["ask", *args]
        return super().parse_args(ctx, args)


quiz_app = typer.Typer(
    cls=QuizGroup, no_args_is_help=False, subcommand_metavar="[TOPIC | list | answer] [ARGS]...",
    help="Quiz cards on the course's reasoning and numbers, scheduled like the exercises. "
         "'grind quiz [TOPIC] [--count N]' asks the due cards, then new ones (TOPIC: a card topic, an exercise, "
         "or an exercise's topic).")
app.add_typer(quiz_app, name="quiz")


def _quiz_cards(exercises: list[Exercise] | None = None, topic: str | None = None,
                quiet_topic: bool = False) -> list[Any]:
    """Every loadable card (broken decks named on stderr), narrowed to ``topic`` (see
    commands.quiz_cards)."""
    return commands.quiz_cards(lambda: exercises if exercises is not None else Catalog().load_all()[0], topic,
                               quiet_topic, lambda problem: typer.echo(f"grind: skipped a broken quiz card: "
                                                                       f"{problem.message}", err=True))


def _quiz_session(state: Progress, cards: list[Any], mode: str) -> Any:
    """Ask ``cards`` one by one in this terminal, then show how it went. Each answer is stored as
    it is graded; q, Ctrl-D or Ctrl-C end the session with what was answered kept."""
    from judge.quiz import run_session
    from judge.render import show
    from judge.views.screens import quiz_card_view, quiz_feedback_view, quiz_summary_view

    out = console()

    def ask(_hint: str) -> Optional[str]:
        try:
            return out.input("answer> ")
        except EOFError:
            out.print()
            return None
        except KeyboardInterrupt:
            out.print()
            return None

    def present(card: Any, index: int, total: int) -> None:
        show(out, quiz_card_view(card, index, total))

    def reveal(answered: Any, index: int, total: int) -> None:
        show(out, quiz_feedback_view(answered))

    def complain(message: str) -> None:
        out.print(message, style="yellow", markup=False, highlight=False, soft_wrap=not out.is_terminal)

    session = run_session(state, cards, ask=ask, present=present, reveal=reveal, complain=complain, mode=mode)
    show(out, quiz_summary_view(session, time.time()))  # also after Ctrl-D at the first card
    return session


@quiz_app.command("ask", hidden=True)
def quiz_ask(
    topic: Optional[str] = typer.Argument(None, help="Only cards on this topic, this exercise, or this exercise "
                                          "topic.", show_default=False),
    count: int = typer.Option(10, "--count", "-n", min=1, help="How many cards in this session."),
) -> None:
    """Ask the due cards, then new ones, one at a time."""
    from judge.quiz import pick_cards

    root, state = _state()
    chosen = _quiz_cards(topic=topic)
    if not chosen:
        raise UsageError("No quiz cards: the course has no quiz/*.toml decks.")
    if root is None:
        typer.echo(f"grind: no workspace here, so answers go to {state.path}", err=True)
    now = time.time()
    picked = pick_cards(state, chosen, now, count)
    if not picked:
        typer.echo(commands.nothing_due_cards(state, chosen, topic, now))
        return
    _quiz_session(state, picked, mode="quiz")


@quiz_app.command("list")
def quiz_list(
    topic: Optional[str] = typer.Argument(None, help="Only cards on this topic or exercise.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the cards as JSON."),
) -> None:
    """List the cards: id, topic, kind of answer, the exercise that practises it, the question."""
    cards = _quiz_cards(topic=topic)
    if as_json:
        _json([card.to_json() for card in cards])
        return
    from judge.render import show
    from judge.views.screens import quiz_list_view

    show(console(), quiz_list_view(cards))


@quiz_app.command("answer", context_settings={"ignore_unknown_options": True})
def quiz_answer(
    id: str = typer.Argument(..., help="The card's id ('grind quiz list' shows them).", show_default=False),  # noqa: A002
    answer: list[str] = typer.Argument(..., help="Your answer: a number (-0.01 and 1/13 work), a choice's letter, "
                                       "or a few words.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Grade one answer and record it (exit 0 right, 1 wrong)."""
    from judge.quiz import answer_card, find_card

    card = find_card(_quiz_cards(), id)
    _, state = _state()
    answered = answer_card(state, card, " ".join(answer), time.time(), "answer")
    if as_json:
        from judge.progress import iso

        _json({**answered.graded.to_json(), "next_review": iso(answered.review.due if answered.review else None)})
    else:
        from judge.render import show
        from judge.views.screens import quiz_feedback_view

        show(console(), quiz_feedback_view(answered))
    raise typer.Exit(int(ExitStatus.PASSED if answered.graded.correct else ExitStatus.FAILED))


# ---------------------------------------------------------------------------------------------
# Instructors


autograder_app = typer.Typer(help="Build course-platform bundles.")
app.add_typer(autograder_app, name="autograder")


@app.command()
def new(
    slug: str = typer.Argument(..., help="The new exercise's name, e.g. sgd-momentum."),
    kind: str = typer.Option("function", "--kind", "-k",
                             help="What the learner writes: function (of tensors), optimizer (a class run in "
                                  "lockstep with scripted gradients) or training (a loop driving an optimizer)."),
) -> None:
    """Scaffold a new exercise (both folders) on the author kit, from a template with TODOs."""
    from judge.scaffold import new_exercise

    made = new_exercise(Catalog(), slug, kind)
    if made.kit_copied is not None:
        typer.echo(f"Copied grind's author kit to {made.kit_copied} (checks and pitfalls import it as grind_kit).")
    typer.echo(f"Created {made.exercise_dir} and {made.solution_dir} ({kind}):")
    for path in made.files:
        typer.echo(f"  {path}")
    typer.echo(f"Next: replace every TODO (statement, contract, reference, cases, pitfalls), then run "
               f"'grind validate {slug}' until it is clean. The authoring guide is docs/authoring.md.")


@app.command()
def validate(
    slug: Optional[str] = typer.Argument(None, help="Exercise to validate.", autocompletion=complete_names),
    all_: bool = typer.Option(False, "--all", help="Validate every exercise."),
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="Folder with one folder of independently written "
                                          "submissions per exercise (default: the repository's tests/corpus)."),
    quiz: bool = typer.Option(False, "--quiz", help="Check the quiz decks (quiz/*.toml) only; --all checks them too."),
) -> None:
    """Prove exercises adequate: schema, reference (twice), stub, every pitfall caught and named,
    and the share of the exercise's corpus named right, beside the share named wrongly. With --quiz
    (or --all), check the quiz cards: numbers agree with their formulas, choices are distinct,
    explanations are written."""
    catalog = Catalog()
    if quiz and slug is None and not all_:
        raise typer.Exit(int(_validate_quiz(catalog)))
    from judge.classroom import validate_exercises
    from judge.render import render_validation

    reports = validate_exercises(catalog, slug, all_, corpus)
    render_validation(console(), reports)
    decks_ok = _validate_quiz(catalog) == ExitStatus.PASSED if (all_ or quiz) else True
    raise typer.Exit(int(ExitStatus.PASSED if all(r.ok for r in reports) and decks_ok else ExitStatus.FAILED))


def _validate_quiz(catalog: Catalog) -> ExitStatus:
    """Check every quiz deck, print the table and problems, and say whether all are valid."""
    from judge.decks import validate_decks
    from judge.render import show
    from judge.views.screens import quiz_validation_view

    reports = validate_decks(catalog.slugs(), catalog.root)
    show(console(), quiz_validation_view(reports))
    return ExitStatus.PASSED if all(r.ok for r in reports) else ExitStatus.FAILED


@app.command("grade")
def grade_command(
    submissions: Path = typer.Argument(..., help="A folder with one NAME.py file or NAME/ folder per student."),
    exercise_name: str = typer.Option(..., "--exercise", "-e", help="Exercise to grade against.",
                                      autocompletion=complete_names),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Submissions graded at once (default 2; local only)."),
    formats: list[str] = typer.Option(["csv", "json"], "--format", "-F",
                                      help="Outputs: csv, json, junit, gradescope (repeatable)."),
    out: Path = typer.Option(Path("grind-results"), "--out", "-o", help="Folder for the outputs."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Override the exercise's time limit (s)."),
    memory_mb: Optional[int] = typer.Option(None, "--memory-mb", help="Override the exercise's memory limit (MB)."),
    allow_weak_isolation: bool = typer.Option(
        False, "--allow-weak-isolation",
        help="Grade even where submissions can read each other and the reference (see grind doctor)."),
    roster: Optional[Path] = typer.Option(
        None, "--roster", help="CSV of 'file or folder name,student id', or with id, name and email columns: "
        "adds a student_id column and names who is missing."),
    gradebook: Optional[str] = typer.Option(
        None, "--gradebook", help="With --roster: also write gradebook-canvas.csv or gradebook-moodle.csv."),
    executor_name: str = typer.Option(
        "local", "--executor", help="Where to grade: local (this machine, --jobs at once) or dask (a Dask cluster)."),
    scheduler: Optional[str] = typer.Option(
        None, "--scheduler", help="With --executor dask: the scheduler's address, e.g. tcp://host:8786."),
    worker_wait: Optional[float] = typer.Option(
        None, "--worker-wait", min=1,
        help="With --executor dask: seconds to wait for a worker when the cluster has none (default 300)."),
    similarity: Optional[float] = typer.Option(
        None, "--similarity", min=0.01, max=1.0,
        help="Also write similarity.csv/.md: pairs of submissions at least this similar (0-1, e.g. 0.8; needs copydetect)."),
    regrade: list[str] = typer.Option(
        [], "--regrade", help="Grade again stored results with this status, e.g. timeout (repeatable)."),
    force: bool = typer.Option(False, "--force", help="Grade every submission again, ignoring stored results."),
) -> None:
    """Grade a whole class, resumably, into CSV / JSON / JUnit / Gradescope results."""
    from judge import classroom
    from judge.batch import find_students, grade_class
    from judge.render import grading_progress, render_class

    executor = classroom.executor_for(executor_name, jobs, scheduler, allow_weak_isolation, worker_wait)
    classroom.check_outputs(formats, regrade)
    exercise = _exercise(exercise_name)
    limits = classroom.limits(exercise, time_limit, memory_mb)
    people = classroom.read_roster(roster, gradebook)  # a bad roster stops us before any grading
    if similarity is not None:
        from judge.similarity import require_copydetect

        require_copydetect()  # missing: said now, not after the class is graded
    total = len(find_students(submissions, exercise))  # and so does a name collision
    with grading_progress(console(stderr=True), total) as tick:
        rows = grade_class(exercise, submissions, out, jobs=jobs or 2, limits=limits, on_done=tick, executor=executor,
                           regrade=set(regrade), force=force)
    written = classroom.write_outputs(rows, exercise, submissions, out, formats, people=people, roster=roster,
                                      gradebook=gradebook, similarity=similarity,
                                      say=lambda line: typer.echo(f"grind: {line}", err=True))
    render_class(console(), rows)
    typer.echo(classroom.written_note(written, out))


@autograder_app.command("build")
def autograder_build(
    slugs: list[str] = typer.Argument(..., help="Exercises to bundle (one bundle each).",
                                      autocompletion=complete_names),
    out: Path = typer.Option(Path("autograder"), "--out", "-o", help="Folder for the bundles."),
    torch_version: Optional[str] = typer.Option(
        None, "--torch-version",
        help="torch version setup.sh installs (default: this machine's, which computed the shipped reference)."),
    torch_index_url: str = typer.Option(
        "https://download.pytorch.org/whl/cpu", "--torch-index-url",
        help="Index setup.sh installs torch from (default: PyTorch's CPU wheels; the default index's are CUDA)."),
    wheelhouse: Optional[Path] = typer.Option(
        None, "--wheelhouse", help="Folder of wheels to ship in the bundle: setup.sh then installs offline from it."),
    allow_weak_isolation: bool = typer.Option(
        False, "--allow-weak-isolation",
        help="Let run_autograder grade where the image gives only limits-only isolation (see grind doctor), "
             "but only where submissions run as another user (nobody, which needs a Python every user can read); "
             "as the grader's own user (root without a sandbox) it still refuses."),
) -> None:
    """Build a ready-to-upload Gradescope autograder bundle for each exercise: sealed (the
    reference's and pitfalls' observations precomputed; the reference, pitfalls and oracle left
    out), grading-only dependencies pinned to this machine's versions, torch from its CPU index."""
    from judge.autograder import build
    from judge.classroom import check_torch_version, refuse_inadequate

    check_torch_version(torch_version)
    exercises = [_exercise(slug) for slug in slugs]
    refuse_inadequate(exercises)
    out.mkdir(parents=True, exist_ok=True)
    for exercise in exercises:
        archive = build(exercise, out, torch_version=torch_version, torch_index_url=torch_index_url,
                        wheelhouse=wheelhouse, allow_weak_isolation=allow_weak_isolation)
        typer.echo(f"{exercise.slug}: {archive}")


def main() -> None:
    """Console-script entry point."""
    app(prog_name="grind")


__all__ = ["app", "main", "unknown_name_message"]
