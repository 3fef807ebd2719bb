"""``grind daemon`` (status, stop) and ``grind cache`` (clear): the sub-apps that look after the
warm daemon and the reference cache (added to ``judge.cli.app`` there)."""

from __future__ import annotations

import typer

from judge import commands
from judge.cli.shared import _json

cache_app: typer.Typer = typer.Typer(help="Manage the cache of reference observations.")
daemon_app: typer.Typer = typer.Typer(help="The warm per-user daemon that makes 'grind run' answer without a torch start.")


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


