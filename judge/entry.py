"""The ``grind`` console script (and ``python -m judge``): the first module every ``grind`` runs.

Two command lines are answered without the typer CLI, because a learner types them often and
typer, rich and grind's command modules cost several times the interpreter's own start:

- ``grind run NAME [--file PATH] [--json] [--no-daemon]``: judge/fast_run.py runs the CLI's own
  steps without typer, rich or numpy.
- ``grind --help``, ``grind -h`` and a bare ``grind``: the full CLI's own help, as it printed it
  the last time under the same conditions, replayed from a file (below).

Everything else, and these too when the environment asks for the full CLI (shell completion,
``GRIND_TRACEBACK``), goes to ``judge.cli`` untouched. tests/test_fast_path.py holds both fast
answers to the full CLI's output, byte for byte, with the same exit code.

Imports here are ``os`` and ``sys`` only (both loaded by the interpreter's start): a help served
from the cache costs about one bare Python start. Any other command line first takes SIGCHLD's
default back (``judge.worker.process.default_sigchld``, stdlib only), in the main thread.

The help cache. The help is typer's rendering of judge/cli/'s commands through rich, and what
rich draws depends on the terminal: its width, colours, encoding. So the cache is not a text
shipped in the package (it would fit one terminal), but a record of what the full CLI printed,
kept per "rendering key": the command line, grind's version and judge/cli/'s modules' modification
times and sizes, the files of typer, click and rich (an upgrade rewrites them), Python's version, whether
stdout is a terminal and its encoding, the width rich would find, and every environment variable
rich, typer or click read when drawing help (``_RENDER_ENV``). A key seen before replays the
bytes printed then; any other key runs the full CLI, copying what it prints, and keeps it when it
ends as a help ends (exit 0, or 2 for a bare ``grind``) having written nothing on stderr. The
files live in ``.help`` under the cache folder (``GRIND_CACHE_DIR``, else ``$XDG_CACHE_HOME/grind``
or ``~/.cache/grind`` on Linux, else platformdirs' folder); ``grind cache clear`` removes them
with the rest. A file that cannot be read or written only costs the typer start it saves.
"""

from __future__ import annotations

import os
import sys

# The full CLI's completion hook (typer: _<PROG>_COMPLETE) and its traceback switch: both are
# the full CLI's business.
_FULL_CLI_ENV = ("_GRIND_COMPLETE", "GRIND_TRACEBACK")

# The command lines whose output is the top-level help, and the exit code the full CLI gives them
# (click's no_args_is_help ends a bare `grind` with 2, as a usage error).
_HELP_LINES = {(): 2, ("--help",): 0, ("-h",): 0}

# What rich (rich.console.Console: size, colour system, terminal detection), typer
# (typer.rich_utils, typer.core) and click read from the environment while drawing a help; the
# names that begin with _TYPER_ or TYPER_ are added whatever they are.
_RENDER_ENV = ("COLUMNS", "LINES", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE",
               "TTY_INTERACTIVE", "TERMINAL_WIDTH", "GITHUB_ACTIONS", "PY_COLORS", "JUPYTER_COLUMNS",
               "JUPYTER_LINES", "DATABRICKS_RUNTIME_VERSION", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
# The libraries that draw the help: their files' stamps are in the key (typer 0.28 carries its own
# click, an older typer uses the installed one).
_RENDER_LIBRARIES = ("typer", "click", "rich")
# How many renderings are kept (about 5 kB each).
_KEPT = 16


def main() -> None:
    """``grind ARGV``: the fast answers above, else the full CLI. Ends with SystemExit."""
    argv = sys.argv[1:]
    if not any(k in os.environ for k in _FULL_CLI_ENV):
        if tuple(argv) in _HELP_LINES:
            raise SystemExit(help_from_cache(tuple(argv)))
    from judge.worker.process import default_sigchld

    default_sigchld()  # here, in the main thread, before any command starts a thread or a child
    if not any(k in os.environ for k in _FULL_CLI_ENV):
        if argv[0] == "run":
            from judge.fast_run import answer

            code = answer(argv)
            if code is not None:
                raise _Answered(code)
    from judge.cli import main as full_cli

    full_cli()


class _Answered(SystemExit):
    """The fast ``grind run``'s exit: ``script`` ends the process without the interpreter's teardown."""


def script() -> None:
    """The console script (and ``python -m judge``): ``main``, and after a fast ``grind run`` a
    quick exit. The interpreter's own teardown (every module's objects freed one by one, about
    10 ms of a 0.1 s daemon-served run) does nothing a learner can see: the exit handlers run,
    the streams are flushed, the progress database committed each write as it made it. Tests
    call ``main``, which exits as any command does."""
    try:
        main()
    except _Answered as done:
        _leave(done.code)


def _leave(code: object) -> None:
    """Exit now, as the interpreter would have: exit handlers, flushed streams (a failed flush is
    exit 120, as in CPython), then ``os._exit``. A normal exit instead while a thread that is
    not a daemon runs (the interpreter waits for those), or under a profiler or a tracer
    (``python -m cProfile`` writes its figures after the code returns)."""
    import atexit

    threading = sys.modules.get("threading")
    if threading is not None and any(t is not threading.main_thread() and not t.daemon and t.is_alive()
                                     for t in threading.enumerate()):
        raise SystemExit(code)
    if sys.getprofile() is not None or sys.gettrace() is not None:
        raise SystemExit(code)
    atexit._run_exitfuncs()
    status = code if isinstance(code, int) else (0 if code is None else 1)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            status = 120
    os._exit(status)


# ---------------------------------------------------------------------------------------------
# The help, replayed


def help_from_cache(argv: tuple[str, ...]) -> int:
    """Print the top-level help for ``grind ARGV`` and return its exit code: replayed when this
    rendering was kept before, else printed (and kept) by the full CLI."""
    key = rendering_key(argv)
    path = _cache_file(key) if key is not None else None
    if key is None or path is None:  # no stdout to speak of, or no cache folder: the full CLI as it is
        from judge.cli import main as full_cli

        full_cli()  # exits
        return 0
    text = _read_kept(path, key)
    if text is None:
        return _print_and_keep(argv, key, path)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # as judge.cli: the reader left; nothing more to say to it
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    return _HELP_LINES[argv]


def rendering_key(argv: tuple[str, ...]) -> str | None:
    """Everything the help's rendering depends on, as one line; None when something is unknown
    (no stdout, no judge/cli/ package): then no cache."""
    stdout = sys.stdout
    try:
        isatty = stdout.isatty()
        encoding, errors = stdout.encoding, stdout.errors
    except (AttributeError, ValueError):  # no stdout, or a closed one
        return None
    cli = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cli")
    try:  # every module of the judge/cli/ package: an edit to any command's help refreshes the cache
        own = [_stamp(os.path.join(cli, name)) for name in sorted(os.listdir(cli)) if name.endswith(".py")]
    except OSError:
        return None
    if not own or None in own:
        return None
    stamps = [*own, *(_library_stamp(name) for name in _RENDER_LIBRARIES)]
    width = 0
    for fd in (0, 1, 2):  # rich.console.Console.size: the first standard stream that is a terminal
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    from judge.version import __version__

    env = sorted((k, v) for k, v in os.environ.items() if k in _RENDER_ENV or k.startswith(("_TYPER_", "TYPER_")))
    parts = [repr(argv), __version__, sys.version, sys.platform, *map(str, stamps), str(isatty), str(encoding),
             str(errors), str(width), repr(env)]
    return "\x1f".join(parts).replace("\n", " ").replace("\0", " ")


def _stamp(path: str) -> tuple[str, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return path, st.st_mtime_ns, st.st_size


def _library_stamp(name: str) -> tuple[str, int, int] | str:
    """The stamp of the package ``import NAME`` would load: its ``__init__.py`` in the first
    ``sys.path`` folder that holds one (typer, click and rich are plain package folders), else
    "absent"."""
    for folder in sys.path:
        stamp = _stamp(os.path.join(folder or os.getcwd(), name, "__init__.py"))
        if stamp is not None:
            return stamp
    return "absent"


def _cache_dir() -> str:
    from judge.userdirs import user_cache_dir

    return os.path.join(os.environ.get("GRIND_CACHE_DIR") or user_cache_dir(), ".help")


def _cache_file(key: str) -> str | None:
    import zlib

    try:
        folder = _cache_dir()
    except Exception:  # noqa: BLE001 - no cache folder to be found: no cache, the full CLI prints
        return None
    return os.path.join(folder, f"help-{zlib.crc32(key.encode('utf-8', 'surrogateescape')):08x}.txt")


def _read_kept(path: str, key: str) -> str | None:
    """The text kept at ``path`` for exactly ``key`` (the key is written in the file's first
    line, so two keys with one checksum never answer for each other), else None."""
    try:
        with open(path, "rb") as kept:
            data = kept.read()
    except OSError:
        return None
    head, sep, body = data.partition(b"\0")
    if not sep or head != key.encode("utf-8", "surrogateescape"):
        return None
    return body.decode("utf-8", "surrogateescape")


class _Copy:
    """A standard stream that also keeps what is written to it; everything else (isatty,
    encoding, fileno...) is the stream's own, so rich and click draw for the real one."""

    def __init__(self, stream: object) -> None:
        self.stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        written = self.stream.write(text)  # type: ignore[attr-defined]
        if isinstance(text, str):  # click probes a stream with write(b""): not output
            self.parts.append(text)
        return written  # type: ignore[no-any-return]

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def _print_and_keep(argv: tuple[str, ...], key: str, path: str) -> int:
    """The full CLI prints the help; what it wrote is kept for ``key`` when it ended as a help."""
    from judge.cli import main as full_cli

    out, err = _Copy(sys.stdout), _Copy(sys.stderr)
    code: object = 0
    sys.stdout, sys.stderr = out, err
    try:
        full_cli()
    except SystemExit as done:
        code = done.code
    finally:
        sys.stdout, sys.stderr = out.stream, err.stream
    code = 0 if code is None else code
    if code == _HELP_LINES[argv] and not err.parts and out.parts:
        _keep(path, key, "".join(out.parts))
    if isinstance(code, int):
        return code
    raise SystemExit(code)


def _keep(path: str, key: str, text: str) -> None:
    """Write the entry whole or not at all (a temporary file renamed into place), and keep the
    ``_KEPT`` newest: each terminal width is a rendering of its own."""
    folder = os.path.dirname(path)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(temporary, "wb") as kept:
            kept.write(key.encode("utf-8", "surrogateescape") + b"\0" + text.encode("utf-8", "surrogateescape"))
        os.replace(temporary, path)
        entries = [os.path.join(folder, name) for name in os.listdir(folder) if name.startswith("help-")]
        if len(entries) > _KEPT:
            entries.sort(key=lambda entry: os.stat(entry).st_mtime_ns)
            for old in entries[:-_KEPT]:
                os.unlink(old)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
