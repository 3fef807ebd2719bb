"""What every command of the CLI shares: the typer app, ``GrindGroup`` (the one error boundary),
the console, the helpers that find the workspace and the exercise. A module of its own so that the
command modules import it and the package imports them, with no import running in a circle."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from judge.version import __version__
from judge.catalog import Catalog
from judge.errors import EnvironmentProblem, JudgeError, UsageError
from judge.models import Exercise, Status
from judge.progress import Progress
from judge.status import ExitStatus, verdict_exit
from judge.workspace import find_workspace, progress_path

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
