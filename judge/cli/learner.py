"""The learner's commands: list, show, run, hint, solution, reset, progress, watch, practice,
init, doctor and mcp (each registered on ``judge.cli.app``; the quiz's are in ``judge.cli.quiz``)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

import typer

from judge import commands
from judge.catalog import Catalog
from judge.cli.shared import (NAME, OUTSIDE_WORKSPACE, VERDICT_EXIT, _confirm, _course, _exercise, _json, _state,
                       _workspace_root, app, complete_names, console)
from judge.cli.quiz import _quiz_cards, _quiz_session
from judge.errors import EnvironmentProblem, UsageError
from judge.models import Exercise, Verdict
from judge.progress import Progress
from judge.status import ExitStatus
from judge.text import for_terminal
from judge.workspace import current_exercise, init_workspace, learner_file


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
    """Grade your submission for an exercise (or sit it as an interview).

    Without a name: the exercise folder you are in, else the exercise you ran last."""
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
    name: str | None = typer.Argument(None, help="Exercise name, e.g. clipping (default: the exercise folder "
                                      "you are in, else the one last run here, as for grind run).",
                                      autocompletion=complete_names, show_default=False),
    show_all: bool = typer.Option(False, "--all", help="Show again every hint revealed so far."),
) -> None:
    """Reveal the next hint (one per call; grind remembers how many you have seen)."""
    from judge.render import render_text

    root, state = _state()
    exercise = _exercise(name or current_exercise(root, state.last_exercise(), Catalog().slugs(), command="grind hint"))
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
