"""The command line: a thin typer adapter over the core, and the one error boundary.

Each command parses its arguments, calls one core function, renders with ``judge.report``, and
maps the outcome to an exit code (see ``judge.status``). ``JudgeError`` (and any unexpected
exception) becomes one line on stderr; ``--traceback`` shows the full traceback instead.

Importing this module must not import torch: ``grind --help`` and ``grind list`` stay instant.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from typer.core import TyperGroup

from judge import __version__
from judge.catalog import Catalog, unknown_name_message
from judge.errors import JudgeError, UsageError
from judge.models import Exercise, Status, Verdict
from judge.status import ExitStatus
from judge.workspace import State, find_workspace, init_workspace, learner_file, reset_exercise, state_path

VERDICT_EXIT = {
    Status.PASSED: ExitStatus.PASSED,
    Status.FAILED: ExitStatus.FAILED,
    Status.FORBIDDEN: ExitStatus.FAILED,
    Status.ERROR: ExitStatus.LEARNER_ERROR,
    Status.TIMEOUT: ExitStatus.LEARNER_ERROR,
    Status.CRASHED: ExitStatus.LEARNER_ERROR,
}


class GrindGroup(TyperGroup):
    """Adds the single error boundary around every command."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except JudgeError as exc:
            if _want_traceback(ctx):
                raise
            typer.echo(f"grind: {exc.message}", err=True)
            raise typer.Exit(int(exc.exit_status)) from None
        except KeyboardInterrupt:
            typer.echo("grind: interrupted", err=True)
            raise typer.Exit(130) from None
        except (typer.Exit, typer.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - the boundary: a bug is one line, not a traceback
            if _want_traceback(ctx) or type(exc).__module__.startswith(("click", "typer")):
                raise
            typer.echo(f"grind: internal error: {type(exc).__name__}: {exc} (rerun with --traceback)", err=True)
            raise typer.Exit(int(ExitStatus.JUDGE_ERROR)) from None


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


def _state() -> tuple[Path | None, State]:
    root = find_workspace()
    return root, State(state_path(root))


def _exercise(name: str) -> Exercise:
    return Catalog().get(name)


@app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help="Print the list as JSON.")) -> None:
    """List the exercises, with title, topic, difficulty and your status."""
    _, state = _state()
    exercises, problems = Catalog().load_all()
    for problem in problems:
        typer.echo(f"grind: skipped a broken exercise: {problem.message}", err=True)
    rows = [(exercise, state.status(exercise.slug)) for exercise in exercises]
    if as_json:
        typer.echo(json.dumps([{"slug": e.slug, "title": e.title, "topic": e.topic, "difficulty": e.difficulty,
                                "status": s} for e, s in rows], indent=2))
        return
    from judge.report import render_list

    render_list(console(), rows)


@app.command()
def show(name: str = NAME) -> None:
    """Print an exercise's statement."""
    exercise = _exercise(name)
    from judge.report import render_text

    render_text(console(), exercise.title, exercise.statement_path.read_text(encoding="utf-8"))


@app.command()
def run(
    name: str = NAME,
    file: Optional[Path] = typer.Option(None, "--file", "-f", help="Grade this file instead of the workspace's."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
) -> None:
    """Grade your submission for an exercise."""
    from judge.grade import grade

    exercise = _exercise(name)
    root, state = _state()
    notices = []
    if file is not None:
        if not file.is_file():
            raise UsageError(f"{file}: no such file")
        path = file
    elif root is not None:
        path = learner_file(root, exercise)
        if not path.is_file():
            raise UsageError(f"{path} is missing: 'grind reset {exercise.slug}' puts the stub back")
    else:
        path = exercise.stub_path
        notices.append("No grind workspace here, so this graded the untouched stub. Start practising with "
                       "'grind init' (creates ./grind-practice), then edit "
                       f"grind-practice/{exercise.slug}/{exercise.slug}.py and run 'grind run {exercise.slug}'.")
    verdict = grade(exercise, path)
    verdict.notices += notices
    if file is not None or root is not None:
        state.record_attempt(exercise.slug, verdict.passed)
    _print_verdict(verdict, exercise, state, as_json)
    raise typer.Exit(int(VERDICT_EXIT[verdict.status]))


def _print_verdict(verdict: Verdict, exercise: Exercise, state: State, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(verdict.to_json(), indent=2))
        return
    from judge.report import HintInfo, render_verdict

    render_verdict(console(), verdict, exercise, HintInfo(state.hints_shown(exercise.slug), len(exercise.hints)))


@app.command()
def hint(
    name: str = NAME,
    show_all: bool = typer.Option(False, "--all", help="Show again every hint revealed so far."),
) -> None:
    """Reveal the next hint (one per call; grind remembers how many you have seen)."""
    from judge.report import render_text

    exercise = _exercise(name)
    _, state = _state()
    shown = state.hints_shown(exercise.slug)
    total = len(exercise.hints)
    out = console()
    if show_all:
        if shown == 0:
            typer.echo(f"No hints revealed yet. 'grind hint {exercise.slug}' shows the first.")
        for i in range(shown):
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
) -> None:
    """Show the reference solution (after a pass; before that only if you confirm)."""
    from judge.report import render_text

    exercise = _exercise(name)
    _, state = _state()
    if not state.passed(exercise.slug) and not force:
        if not typer.confirm(f"You have not passed '{exercise.slug}' yet. Reveal the reference anyway?",
                             default=False):
            typer.echo("Kept hidden. 'grind hint' gives a nudge instead.")
            raise typer.Exit(int(ExitStatus.USAGE))
    render_text(console(), f"Reference solution: {exercise.slug}",
                exercise.reference_path.read_text(encoding="utf-8"), syntax=True)


@app.command()
def reset(
    name: str = NAME,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Put the stub back in your workspace (your current file is backed up first)."""
    exercise = _exercise(name)
    root = find_workspace()
    if root is None:
        raise UsageError("No grind workspace here (no grind.toml in this folder or above). Run 'grind init'.")
    target = learner_file(root, exercise)
    if not yes and not typer.confirm(f"Replace {target} with the stub?", default=False):
        typer.echo("Nothing changed.")
        raise typer.Exit(int(ExitStatus.USAGE))
    backup = reset_exercise(root, exercise)
    typer.echo(f"Restored the stub in {target}." + (f" Your previous file is saved as {backup}." if backup else ""))


@app.command()
def init(directory: Path = typer.Argument(Path("grind-practice"), help="Folder for the workspace.")) -> None:
    """Create a practice workspace holding a copy of every stub."""
    exercises, problems = Catalog().load_all()
    for problem in problems:
        typer.echo(f"grind: skipped a broken exercise: {problem.message}", err=True)
    report = init_workspace(directory, exercises)
    typer.echo(f"Workspace ready in {report.root}")
    if report.created:
        typer.echo(f"  new stubs: {', '.join(report.created)}")
    if report.kept:
        typer.echo(f"  kept your existing files: {', '.join(report.kept)}")
    first = (report.created or report.kept or ["clipping"])[0]
    typer.echo(f"Next: cd {directory} && open {first}/README.md, edit {first}/{first}.py, "
               f"then run 'grind run {first}'.")


@cache_app.command("clear")
def cache_clear() -> None:
    """Delete cached reference observations (they are rebuilt on the next run)."""
    from judge import cache

    removed = cache.clear()
    typer.echo(f"Removed {removed} cached exercise(s) from {cache.cache_root()}")


def main() -> None:
    """Console-script entry point."""
    app(prog_name="grind")


__all__ = ["app", "main", "unknown_name_message"]
