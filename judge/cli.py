"""The command line: a thin typer adapter over the core, and the one error boundary.

Each command parses its arguments, calls one core function, renders with ``judge.render``, and
maps the outcome to an exit code (see ``judge.status``). ``JudgeError`` (and any unexpected
exception) becomes one line on stderr; ``--traceback`` shows the full traceback instead.

Importing this module must not import torch: ``grind --help`` and ``grind list`` stay instant.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from typer.core import TyperGroup

from judge import __version__
from judge.catalog import Catalog, unknown_name_message
from judge.errors import EnvironmentProblem, JudgeError, UsageError
from judge.models import Exercise, Status, Verdict
from judge.progress import Progress
from judge.status import ExitStatus, verdict_exit
from judge.text import for_terminal
from judge.workspace import current_exercise, find_workspace, init_workspace, learner_file, progress_path, \
    reset_exercise

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


@app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help="Print the list as JSON.")) -> None:
    """List the exercises, with title, topic, difficulty and your status."""
    root, state = _state()
    if root is None:
        typer.echo(f"grind: {OUTSIDE_WORKSPACE}", err=True)
    exercises, problems = Catalog().load_all()
    for problem in problems:
        typer.echo(f"grind: skipped a broken exercise: {problem.message}", err=True)
    rows = [(exercise, state.status(exercise.slug)) for exercise in exercises]
    if as_json:
        typer.echo(json.dumps([{"slug": e.slug, "title": e.title, "topic": e.topic, "difficulty": e.difficulty,
                                "status": s} for e, s in rows], indent=2))
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
    from judge.outcome import grade_and_record, pick_file
    from judge.practice import Sitting

    if every:
        if name is not None or file is not None or as_json or interview or repro or minutes is not None:
            raise UsageError("--all grades every exercise's workspace file: leave out the name, --file, --json, "
                             "--interview and --repro")
        _run_all(no_daemon)
        return
    root, state = _state()
    exercise = _exercise(name or current_exercise(root, state.last_exercise(), Catalog().slugs()))
    if minutes is not None and not interview:
        raise UsageError("--minutes sets an interview's length: add --interview, or leave --minutes out")
    if interview:
        if file is not None or as_json or repro:
            raise UsageError("--interview works on the workspace's file, interactively (without --file, --json "
                             "or --repro)")
        _practice_session(_workspace_root(), state, [exercise], interview=True, minutes=minutes, manual=manual)
        return
    if repro:  # the script holds the exercise's case code, hidden cases included
        _refuse_during_interview(state, exercise, "repro script")
    path, recording, notices = pick_file(exercise, root, file)
    _say_reference_note(exercise)
    sitting = Sitting(exercise, path, "run", None, interview=state.interview(exercise.slug) if recording else None)
    outcome = grade_and_record(state, sitting, record=recording, lead=notices, speed=True,
                               worker=_daemon_worker(exercise, no_daemon))
    verdict, notices = outcome.verdict, outcome.lead
    if as_json:
        verdict.notices += notices
    verdict.notices += outcome.notices
    if repro:  # beside the learner's file; the untouched stub's folder is grind's, so then here
        folder = path.parent if recording or file is not None else Path.cwd()
        verdict.notices.append(_write_repro(exercise, verdict, path, folder))
    _print_verdict(verdict, exercise, state, as_json, lead=notices)
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
    from judge.outcome import grade_and_record
    from judge.practice import Sitting
    from judge.render import grading_progress
    from judge.verify import all_summary, grade_all

    root = _workspace_root()
    _, state = _state()
    exercises, problems = Catalog().load_all()
    for problem in problems:
        typer.echo(f"grind: skipped a broken exercise: {problem.message}", err=True)

    def grade_one(exercise: Exercise, path: Path, record: bool) -> Any:
        sitting = Sitting(exercise, path, "run", None, interview=state.interview(exercise.slug) if record else None)
        return grade_and_record(state, sitting, record=record, worker=_daemon_worker(exercise, no_daemon))

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


def _daemon_worker(exercise: Exercise, opt_out: bool) -> Any:
    """The per-user daemon's worker (which grades cold whenever the daemon cannot), or None."""
    from judge.daemon import worker_for
    from judge.grade import hidden_from_learners

    return worker_for(lambda: hidden_from_learners(exercise), opt_out=opt_out)


def _write_repro(exercise: Exercise, verdict: Verdict, learner: Path, folder: Path) -> str:
    """The notice saying where the repro script is, or why there is none (never an error: the
    verdict is still the answer)."""
    from judge.repro import ReproUnavailable, write_repro

    target = folder.resolve() / f"repro_{exercise.slug.replace('-', '_')}.py"
    try:
        written = write_repro(exercise, verdict, learner, target)
    except ReproUnavailable as exc:
        return f"No repro script written: {exc}."
    except OSError as exc:
        return f"No repro script written: {target}: {exc.strerror or exc}."
    return f"Wrote {written}: python {shlex.quote(str(written))} re-runs the failing check on your code, outside grind."


def _print_verdict(verdict: Verdict, exercise: Exercise, state: Progress, as_json: bool,
                   lead: list[str] | None = None) -> None:
    if as_json:
        typer.echo(json.dumps(verdict.to_json(), indent=2))
        return
    from judge.render import HintInfo, render_verdict

    hints = None if state.running_interview(exercise.slug) else HintInfo(state.hints_shown(exercise.slug),
                                                                          len(exercise.hints))
    render_verdict(console(), verdict, exercise, hints, lead=lead)


def _refuse_during_interview(state: Progress, exercise: Exercise, what: str) -> None:
    from judge.interview import locked_message

    running = state.running_interview(exercise.slug)
    if running is not None:
        raise UsageError(locked_message(running, time.time(), what))


@app.command()
def hint(
    name: str = NAME,
    show_all: bool = typer.Option(False, "--all", help="Show again every hint revealed so far."),
) -> None:
    """Reveal the next hint (one per call; grind remembers how many you have seen)."""
    from judge.render import render_text

    exercise = _exercise(name)
    _, state = _state()
    _refuse_during_interview(state, exercise, "hints")
    shown = state.hints_shown(exercise.slug)
    total = len(exercise.hints)
    out = console()
    if show_all:
        revealed = min(total, state.hints_revealed(exercise.slug))  # a pass does not take them back
        if revealed == 0:
            typer.echo(f"No hints revealed yet. 'grind hint {exercise.slug}' shows the first.")
        for i in range(revealed):
            render_text(out, f"Hint {i + 1} of {total}", exercise.hints[i])
        return
    if shown >= total:
        render_text(out, f"Hint {total} of {total} (the last one)", exercise.hints[-1])
        typer.echo(f"That was the last hint. Once you pass, 'grind solution {exercise.slug}' shows the reference.")
        return
    state.record_hint(exercise.slug)
    render_text(out, f"Hint {shown + 1} of {total}", exercise.hints[shown])


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
    _refuse_during_interview(state, exercise, "solution")
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
    if every == (name is not None):
        raise UsageError("Name one exercise ('grind reset clipping') or use --all, not both."
                         if every else "Which exercise? 'grind reset NAME', or 'grind reset --all' for every one.")
    if every:
        _reset_all(yes)
        return
    exercise = _exercise(name)  # type: ignore[arg-type]
    root = _workspace_root()
    target = learner_file(root, exercise)
    if not yes:
        _confirm(f"Replace {target} with the stub?")
    backup = reset_exercise(root, exercise)
    typer.echo(f"Restored the stub in {target}." + (f" Your previous file is saved as {backup}." if backup else ""))
    _, state = _state()
    left_open = state.running_interview(exercise.slug)
    if left_open is not None:  # starting over drops the interview: its hints unlock, nothing is reviewed
        state.finish_interview(left_open.id, time.time(), "dropped")
        typer.echo(f"Dropped the interview that was open on {exercise.slug}: its hints are unlocked.")


def _reset_all(yes: bool) -> None:
    root = _workspace_root()
    exercises, problems = Catalog().load_all()
    for problem in problems:
        typer.echo(f"grind: skipped a broken exercise: {problem.message}", err=True)
    if not yes:
        _confirm(f"Replace every exercise's file in {root} with its stub "
                 f"({len(exercises)} files; each is backed up first)?")
    backups = [b for b in (reset_exercise(root, e) for e in exercises) if b is not None]
    typer.echo(f"Restored {len(exercises)} stubs." +
               (f" Your previous files are saved in {backups[0].parent}." if backups else ""))


@app.command()
def progress(
    as_json: bool = typer.Option(False, "--json", help="Print the progress as JSON."),
    reset_all: bool = typer.Option(False, "--reset", help="Forget all progress (after asking)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --reset: do not ask for confirmation."),
    export: Optional[str] = typer.Option(None, "--export", help="Print the per-exercise table as csv or md "
                                         "(Markdown), to save or paste.", show_default=False),
) -> None:
    """Your progress: status, best time, attempts, last practised and next review per exercise."""
    if export is not None and export not in ("csv", "md"):
        raise UsageError(f"--export {export!r}: choose csv or md")
    root, state = _state()
    if root is None:
        typer.echo(f"grind: {OUTSIDE_WORKSPACE}", err=True)
    if reset_all:
        if not yes:
            _confirm(f"Forget every attempt, hint and review in {state.path}?")
        state.reset()
        typer.echo("Progress cleared.")
        return
    exercises, problems = Catalog().load_all()
    for problem in problems:
        typer.echo(f"grind: skipped a broken exercise: {problem.message}", err=True)
    overview = state.overview([e.slug for e in exercises])
    if export is not None:
        from judge.verify import export_progress

        typer.echo(export_progress(overview, export), nl=False)
        return
    from judge.quiz import card_progress, quiz_json

    card_rows = card_progress(state, _quiz_cards(exercises))
    if as_json:
        typer.echo(json.dumps({**overview.to_json(), "quiz": quiz_json(card_rows, overview.now)}, indent=2))
        return
    from judge.render import render_progress

    render_progress(console(), overview)
    if card_rows:
        from judge.render import show
        from judge.views.screens import quiz_progress_view

        show(console(), quiz_progress_view(card_rows, overview.now))


@app.command()
def watch(
    name: Optional[str] = typer.Argument(None, help="Exercise to start with (default: the first one not passed).",
                                         autocompletion=complete_names, show_default=False),
    manual: bool = typer.Option(False, "--manual", help="Check on Enter instead of on save (for file systems "
                                "where save events do not arrive)."),
) -> None:
    """Re-grade on every save. Keys: h hint, n next exercise, l list, q quit."""
    from judge.watch import watch_session

    root = _workspace_root()
    _, state = _state()
    exercises, _problems = Catalog().load_all()
    first = _exercise(name).slug if name is not None else next(
        (e.slug for e in exercises if not state.passed(e.slug)), exercises[0].slug if exercises else None)
    if first is None:
        raise UsageError("No exercises to practise.")
    from judge.watch import watch_summary

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
    from judge import scheduling

    if minutes is not None and not interview:
        raise UsageError("--minutes sets an interview's length: add --interview, or leave --minutes out")
    root = _workspace_root()
    _, state = _state()
    exercises, problems = Catalog().load_all()
    for problem in problems:
        typer.echo(f"grind: skipped a broken exercise: {problem.message}", err=True)
    now = time.time()
    deck = _quiz_cards(exercises, topic, quiet_topic=True) if cards and not interview else []
    try:
        picked = scheduling.pick(state, exercises, now, count, topic)
    except UsageError:
        if not deck:  # a topic only cards have (--topic precision) is not an unknown topic
            raise
        picked = []
    from judge.quiz import pick_cards

    # of the new cards, those on this session's exercises first: the reasoning before the code
    session_slugs = {e.slug for e in picked}
    asked = pick_cards(state, sorted(deck, key=lambda c: c.exercise not in session_slugs), now, cards)
    if not picked and not asked:
        from judge.text import until_text

        upcoming = scheduling.next_due(state, [e for e in exercises if topic is None or e.topic == topic])
        typer.echo("Nothing is due and every exercise has been tried." +
                   (f" Next review: {upcoming[0].slug}, {until_text(upcoming[1], now)}." if upcoming else ""))
        return
    if asked:
        if picked:
            from judge.environment import require_torch

            require_torch()  # before the cards: a missing torch should not wait until after them
        then = f", then {len(picked)} exercise{'s' if len(picked) != 1 else ''}" if picked else ""
        typer.echo(f"First {len(asked)} quiz card{'s' if len(asked) != 1 else ''}{then}.")
        session = _quiz_session(state, asked, mode="practice")
        if session.quit_early or not picked:
            return
        typer.echo(f"Now the exercises: {', '.join(e.slug for e in picked)}.")
    _practice_session(root, state, picked, interview=interview, minutes=minutes, manual=manual)


def _loop(root: Path, state: Progress, manual: bool) -> Any:
    from judge.environment import require_torch
    from judge.render import WatchView
    from judge.watch import open_loop

    require_torch()  # before the screen is taken over: every check in the loop needs it
    kept: dict[str, Any] = {}

    def listing() -> list[tuple[Exercise, str]]:
        # Asked after every verdict ("x of N passed"): parsing every manifest again took 5-20 ms
        # of each save -> verdict, so they are parsed again only when one of them changed.
        catalog = Catalog()
        stamp = _manifest_stamps(catalog.exercises_root)
        if kept.get("stamp") != stamp:
            kept["stamp"], kept["exercises"] = stamp, catalog.load_all()[0]
        return [(e, state.status(e.slug)) for e in kept["exercises"]]

    return open_loop(state, root, WatchView(console()), manual=manual, listing=listing)


def _manifest_stamps(folder: Path) -> list[tuple[str, int, int]]:
    """Each exercise folder's manifest, with its modification time and size (-1 when it has none)."""
    stamps = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        try:
            info = os.stat(folder / name / "exercise.toml")
            stamps.append((name, info.st_mtime_ns, info.st_size))
        except OSError:
            stamps.append((name, -1, -1))
    return stamps


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
    exercises, problems = Catalog().load_all()
    for problem in problems:
        typer.echo(f"grind: skipped a broken exercise: {problem.message}", err=True)
    report = init_workspace(directory, exercises)
    _say(f"Workspace ready in {report.root}")
    if report.created:
        _say(f"  new stubs: {', '.join(report.created)}")
    if report.kept:
        _say(f"  kept your existing files: {', '.join(report.kept)}")
    if notebook:
        from judge.frontends.starter import write_notebooks

        books = write_notebooks(report.root, exercises)
        if books.created:
            _say(f"  new notebooks: {', '.join(p.parent.name + '/' + p.name for p in books.created)}")
        if books.kept:
            _say(f"  kept your existing notebooks: {', '.join(p.parent.name for p in books.kept)}")
        first = (report.created or report.kept or ["clipping"])[0]
        _say(f"Next: open {directory}/{first}/{first}.ipynb in Jupyter and run its cells (the notebook "
             "extra: pip install '.[notebook]' in grind's folder).")
        return
    first = (report.created or report.kept or ["clipping"])[0]
    first_file = learner_file(report.root, Catalog().get(first)).relative_to(report.root)
    _say(f"Next: cd {directory}, read {first}/README.md, edit {first_file}, "
         f"then run 'grind run {first}'.")


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
        typer.echo(json.dumps(info, indent=2))
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
        if info is None:
            path = daemon.socket_path() if why_not is None else None
            info = {"running": False, "can_start": why_not is None, "why_not": why_not,
                    "socket": str(path) if path else None}
        else:
            info = {"running": True, **info}
        typer.echo(json.dumps(info, indent=2))
        return
    if info is None:
        off = (f" and none can start ({why_not}), so grind run grades cold" if why_not is not None
               else ": the next 'grind run' starts it")
        typer.echo(f"No grind daemon is running{off}.")
        return
    ident = info.get("identity") or {}
    stale = "" if info.get("current") else " (another grind or torch: the next 'grind run' replaces it)"
    # Busy: grading a job now (another run then waits up to 5 s for it, and grades cold after that).
    doing = ("grading a job now" if info.get("busy")
             else f"idle {info.get('idle_s')} s of {info.get('idle_limit_s')} s")
    typer.echo(f"grind daemon running{stale}: pid {info.get('pid')}, {info.get('jobs')} job(s) graded, "
               f"{doing}, server {'warm' if info.get('warm') else 'starting'}\n  socket {info.get('socket')}\n  grind "
               f"{ident.get('grind')}, torch {ident.get('torch')}, python {ident.get('python')}")


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
    """Every loadable card (broken decks named on stderr), narrowed to ``topic``. With
    ``quiet_topic``, a topic no card has gives no cards instead of an error (practice: the topic
    may be an exercise topic only)."""
    from judge.quiz import load_cards, select_topic

    cards, problems = load_cards(Catalog().root)
    for problem in problems:
        typer.echo(f"grind: skipped a broken quiz card: {problem.message}", err=True)
    if topic is None:
        return cards
    if exercises is None:
        exercises = Catalog().load_all()[0]
    topics = {e.slug: e.topic for e in exercises}
    try:
        return select_topic(cards, topic, topics)
    except UsageError:
        if quiet_topic:
            return []
        raise


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
    from judge.quiz import next_card_due, pick_cards

    root, state = _state()
    chosen = _quiz_cards(topic=topic)
    if not chosen:
        raise UsageError("No quiz cards: the course has no quiz/*.toml decks.")
    if root is None:
        typer.echo(f"grind: no workspace here, so answers go to {state.path}", err=True)
    now = time.time()
    picked = pick_cards(state, chosen, now, count)
    if not picked:
        from judge.text import until_text

        upcoming = next_card_due(state, chosen)
        typer.echo("Nothing is due and you have answered every card" + (f" on {topic}" if topic else "") + "." +
                   (f" Next review: {upcoming[0].id}, {until_text(upcoming[1], now)}." if upcoming else ""))
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
        typer.echo(json.dumps([card.to_json() for card in cards], indent=2))
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

        typer.echo(json.dumps({**answered.graded.to_json(),
                               "next_review": iso(answered.review.due if answered.review else None)},
                              indent=2))
    else:
        from judge.render import show
        from judge.views.screens import quiz_feedback_view

        show(console(), quiz_feedback_view(answered))
    raise typer.Exit(int(ExitStatus.PASSED if answered.graded.correct else ExitStatus.FAILED))


# ---------------------------------------------------------------------------------------------
# Instructors


def _limits(exercise: Exercise, time_limit: float | None, memory_mb: int | None) -> Any:
    """The exercise's limits, with an instructor's overrides."""
    from judge.worker.sandbox import Limits

    if time_limit is None and memory_mb is None:
        return None
    if time_limit is not None and not 0 < time_limit <= 3600:
        raise UsageError("--time-limit must be between 0 and 3600 seconds")
    if memory_mb is not None and memory_mb < 512:
        raise UsageError("--memory-mb must be at least 512")
    return Limits(wall_s=time_limit or exercise.time_limit, memory_mb=memory_mb or exercise.memory_mb)


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
    from judge.adequacy import AdequacyReport, check_adequacy, golden_root
    from judge.corpus import default_root
    from judge.errors import ManifestError
    from judge.render import render_validation

    if all_ == (slug is not None):
        raise UsageError("give one exercise name, --all, or --quiz")
    slugs = catalog.slugs() if all_ else [slug]
    if corpus is not None and not corpus.is_dir():
        raise UsageError(f"{corpus}: no such folder")
    corpus_root = corpus if corpus is not None else default_root()
    reports = []
    for name in slugs:
        try:
            reports.append(check_adequacy(catalog.get(name or ""), determinism=True, corpus_root=corpus_root,
                                          golden=golden_root()))
        except ManifestError as exc:
            reports.append(AdequacyReport(name or "", problems=[exc.message]))
        except JudgeError as exc:
            if isinstance(exc, (UsageError, EnvironmentProblem)):  # not the exercise's fault: exit 2 / 5
                raise
            reports.append(AdequacyReport(name or "", problems=[exc.message]))
    render_validation(console(), reports)
    decks_ok = _validate_quiz(catalog) == ExitStatus.PASSED if (all_ or quiz) else True
    raise typer.Exit(int(ExitStatus.PASSED if all(r.ok for r in reports) and decks_ok else ExitStatus.FAILED))


def _validate_quiz(catalog: Catalog) -> ExitStatus:
    """Check every quiz deck, print the table and problems, and say whether all are valid."""
    from judge.quiz import validate_decks
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
    from judge.worker.isolation import HOW_TO_STRENGTHEN, isolation

    if executor_name == "dask" and jobs is not None:
        raise UsageError("--jobs counts this machine's parallel gradings; with --executor dask each worker grades "
                         "as many at once as its --nthreads: leave --jobs out")
    executor = _grade_executor(executor_name, scheduler, allow_weak_isolation, worker_wait)
    iso = isolation()  # on a Dask cluster, submissions run on the workers: each checks its own level
    if executor is None and iso.weak and not allow_weak_isolation:
        raise UsageError(f"refusing to grade at isolation level {iso.level}: a submission could read the "
                         "reference and classmates' files and fake a pass. "
                         f"Fix: {HOW_TO_STRENGTHEN[iso.level]}; or pass --allow-weak-isolation "
                         "(see grind doctor)")
    from judge.batch import find_students, grade_class
    from judge.gradebook import GRADEBOOKS, gradebook_csv, match, read_people
    from judge.formats import FORMATS, write_all
    from judge.render import grading_progress

    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise UsageError(f"unknown format {unknown[0]!r}; choose from {', '.join(FORMATS)}")
    from judge.models import Status

    statuses = {s.value for s in Status}
    for status in regrade:
        if status not in statuses:
            raise UsageError(f"--regrade {status!r}: choose from {', '.join(sorted(statuses))}")
    exercise = _exercise(exercise_name)
    limits = _limits(exercise, time_limit, memory_mb)
    if gradebook is not None and (roster is None or gradebook not in GRADEBOOKS):
        raise UsageError("--gradebook needs --roster (a gradebook has a line per student on it)" if roster is None
                         else f"--gradebook {gradebook!r}: choose from {', '.join(GRADEBOOKS)}")
    people = read_people(roster) if roster is not None else None  # a bad roster stops us before any grading
    if similarity is not None:
        from judge.similarity import require_copydetect

        require_copydetect()  # missing: said now, not after the class is graded
    total = len(find_students(submissions, exercise))  # and so does a name collision
    with grading_progress(console(stderr=True), total) as tick:
        rows = grade_class(exercise, submissions, out, jobs=jobs or 2, limits=limits, on_done=tick, executor=executor,
                           regrade=set(regrade), force=force)
    owner: dict[str, Any] = {}
    if people is not None:
        owner, problems = match(rows, people, str(roster))
        for problem in problems:
            typer.echo(f"grind: {problem}", err=True)
    written = write_all(rows, exercise.slug, out, formats)
    if gradebook is not None and people is not None:
        from judge.formats import write_atomic

        written.append(out / f"gradebook-{gradebook}.csv")
        write_atomic(written[-1], gradebook_csv(gradebook, rows, people, owner, exercise.title))
    if similarity is not None:
        from judge.similarity import write_report

        pairs, report = write_report(find_students(submissions, exercise), exercise, rows, similarity, out)
        written += report
        typer.echo(f"grind: {len(pairs)} pair{'s' if len(pairs) != 1 else ''} of submissions at or above "
                   f"{similarity:.0%} similarity (see {written[-1]})", err=True)
    from judge.render import render_class

    render_class(console(), rows)
    typer.echo(_written_note(written, out))


def _written_note(written: list[Path], out: Path) -> str:
    """What ``grind grade`` left under OUT, every entry named: the outputs asked for, plus the
    two it always keeps (the resumable per-student store and the run's log), so a listing of
    OUT never shows more than the message said."""
    outputs = [str(path.relative_to(out)) for path in written if path.parent == out]
    per_student = len(written) - len(outputs)
    if per_student:
        outputs.append(f"gradescope/ ({per_student} student file{'s' if per_student != 1 else ''})")
    return (f"Wrote under {out}: {', '.join(outputs) or 'no outputs'}; also graded/ (one stored result per "
            "student, reused when you run this again) and grade.log (this run's progress)")


def _grade_executor(name: str, scheduler: str | None, allow_weak_isolation: bool,
                    worker_wait: float | None = None) -> Any:
    """None for the local executor; a DaskExecutor for ``--executor dask --scheduler ADDR``."""
    if name not in ("local", "dask"):
        raise UsageError(f"--executor {name!r}: choose local or dask")
    if name == "local":
        if scheduler is not None or worker_wait is not None:
            raise UsageError(f"{'--scheduler' if scheduler is not None else '--worker-wait'} is for --executor dask")
        return None
    if not scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS, e.g. --scheduler tcp://host:8786")
    try:
        from judge.cluster import DaskExecutor
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("distributed", "dask"):
            raise
        raise EnvironmentProblem("--executor dask needs the distributed package: pip install -e '.[dask]' in your grind clone "
                                 f"(here: {exc})") from None
    return DaskExecutor(scheduler, allow_weak_isolation=allow_weak_isolation, worker_wait=worker_wait)


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
    from judge.adequacy import check_adequacy
    from judge.autograder import build

    if torch_version is not None and not re.fullmatch(r"\d+(\.\d+){1,2}", torch_version):
        raise UsageError(f"--torch-version {torch_version!r}: give a version such as 2.13.0")
    exercises = [_exercise(slug) for slug in slugs]
    for exercise in exercises:
        # A bundle of a broken exercise tells every student "the autograder crashed": refuse it here.
        try:
            problems = check_adequacy(exercise).problems
        except UsageError:
            raise
        except JudgeError as exc:
            problems = [exc.message]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise JudgeError(f"refusing to build {exercise.slug}: it fails 'grind validate {exercise.slug}': "
                             f"{problems[0]}{more}")
    out.mkdir(parents=True, exist_ok=True)
    for exercise in exercises:
        archive = build(exercise, out, torch_version=torch_version, torch_index_url=torch_index_url,
                        wheelhouse=wheelhouse, allow_weak_isolation=allow_weak_isolation)
        typer.echo(f"{exercise.slug}: {archive}")


def main() -> None:
    """Console-script entry point."""
    app(prog_name="grind")


__all__ = ["app", "main", "unknown_name_message"]
