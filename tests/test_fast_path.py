"""The fast `grind run` (judge/entry.py) against the full typer CLI (judge/cli/): the same
verdict text, exit code, progress record and --json, whichever way the run goes.

Each case runs the command twice in this process, once through ``judge.entry.main`` and once
through ``judge.cli.main``, each against a fresh copy of the same state (a workspace, or a
state folder), and compares what each printed on stdout and stderr, its exit code and the
attempts it stored. Times (a verdict's duration, an attempt's clock) are left out: two runs of
one file differ in them and in nothing else. Speed advice depends on the machine's load, and
the files graded here are fast, so no advice is printed in either run.

The import rule (the entry module loads no typer, rich, numpy nor torch) is checked in a fresh
interpreter, in tests/test_architecture.py.
"""

from __future__ import annotations

import io
import os
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator

import pytest

from judge import daemon, daemon_wire
from judge.catalog import Catalog
from judge.executor import Submission
from judge.fast_run import RunArgs, parse_run
from judge.progress import Progress
from judge.workspace import init_workspace, progress_path

from .conftest import SUBMISSIONS
from .test_daemon import FAKE, daemons, fake_daemon, warm_daemon  # noqa: F401 - fixtures used by name

CLIPPING = SUBMISSIONS / "clipping"


def _invoke(which: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str, int]:
    """Run ``grind ARGV`` through the fast entry or the full CLI; (stdout, stderr, exit code)."""
    from judge import cli, entry

    saved = sys.argv
    sys.argv = ["grind", *argv]
    code: Any = 0
    try:
        (entry.main if which == "fast" else cli.main)()
    except SystemExit as done:
        code = done.code
    finally:
        sys.argv = saved
    out, err = capsys.readouterr()
    return out, err, int(code or 0)


def _attempts(db: Path) -> list[dict[str, Any]]:
    if not db.exists():
        return []
    with Progress(db) as progress:
        return [{k: v for k, v in asdict(a).items() if k not in ("started_at", "ended_at", "id",
                                                                  "sitting_started_at")}
                for a in progress.attempts()]


def _timeless(out: str) -> str:
    """--json output without the durations (a run's own clock); plain output as it is."""
    try:
        doc = json.loads(out)
    except ValueError:
        return out
    doc.pop("duration_s", None)
    return json.dumps(doc, sort_keys=True)


def both(argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         workspace: bool = False, setup: Any = None) -> dict[str, Any]:
    """The command through each path, each in fresh state; both results, asserted equal."""
    results = {}
    for which in ("full", "fast"):
        home = tmp_path / which
        home.mkdir(parents=True)
        monkeypatch.setenv("GRIND_STATE_DIR", str(home / "state"))
        if workspace:
            init_workspace(home / "ws", Catalog().all())
            monkeypatch.chdir(home / "ws")
        else:
            monkeypatch.chdir(home)
        if setup is not None:
            setup(home)
        out, err, code = _invoke(which, argv, capsys)
        db = progress_path(home / "ws" if workspace else None)
        out, err = (text.replace(str(home), "<home>") for text in (out, err))  # each path's own folder
        out = re.sub(r"Interview passed in [0-9:]+", "Interview passed in <time>", out)  # its own clock
        results[which] = {"stdout": _timeless(out), "stderr": err, "exit": code, "attempts": _attempts(db)}
    assert results["fast"] == results["full"]
    return results["fast"]


# ---------------------------------------------------------------------------------------------
# What the fast path takes, and what it leaves to the full CLI


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "clipping"], RunArgs("clipping", None, False, False)),
    (["run", "--json", "clipping", "-f", "a.py"], RunArgs("clipping", Path("a.py"), True, False)),
    (["run", "clipping", "--file=a.py", "--no-daemon"], RunArgs("clipping", Path("a.py"), False, True)),
    (["run"], None),  # which exercise? the CLI's question
    (["run", "clipping", "--help"], None),
    (["run", "clipping", "--interview"], None),
    (["run", "clipping", "--repro"], None),
    (["run", "clipping", "extra"], None),
    (["run", "clipping", "--file", "a.py", "--file", "b.py"], None),
    (["run", "clipping", "--file"], None),
    (["run", "clipping", "--file", "--json"], None),  # a value that looks like a flag
    (["run", "--", "clipping"], None),
    (["--traceback", "run", "clipping"], None),
    (["list"], None),
    ([], None),
])
def test_the_fast_path_takes_only_the_run_command_lines_it_knows(argv: list[str], expected: RunArgs | None) -> None:
    assert parse_run(argv) == expected


def test_the_full_cli_answers_what_the_fast_path_does_not_take(capsys: pytest.CaptureFixture[str]) -> None:
    out, err, code = _invoke("fast", ["run", "clipping", "--help"], capsys)
    assert code == 0 and "--interview" in out


# ---------------------------------------------------------------------------------------------
# The same answer, whichever path


@pytest.mark.parametrize("name", ["correct_loop.py", "pitfall_sum_of_norms.py"])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_graded_file_gets_the_same_verdict_exit_code_and_record(name: str, as_json: bool, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    result = both(["run", "clipping", "--file", str(CLIPPING / name), *(["--json"] if as_json else [])],
                  capsys, tmp_path, monkeypatch)
    assert result["exit"] == (0 if name.startswith("correct") else 1)
    assert len(result["attempts"]) == 1 and result["stdout"]


def test_a_file_that_does_not_compile_gets_the_same_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def clip_grad_norm(params, max_norm)\n    return 0\n")
    result = both(["run", "clipping", "--file", str(broken)], capsys, tmp_path, monkeypatch)
    assert result["exit"] == 3 and "SyntaxError" in result["stdout"]
    assert f"{broken}:1: error:" in result["stdout"]  # the editor's line, on both paths


def test_a_scratch_file_in_a_workspace_is_graded_and_not_recorded_the_same_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    scratch = tmp_path / "scratch.py"
    scratch.write_text((CLIPPING / "pitfall_sum_of_norms.py").read_text())
    result = both(["run", "clipping", "--file", str(scratch)], capsys, tmp_path, monkeypatch, workspace=True)
    assert result["exit"] == 1 and result["attempts"] == [] and "scratch" in result["stdout"].lower()


@pytest.mark.parametrize("as_json", [False, True])
def test_a_missing_file_is_the_same_usage_error(as_json: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    result = both(["run", "clipping", "--file", str(tmp_path / "nowhere.py"), *(["--json"] if as_json else [])],
                  capsys, tmp_path, monkeypatch)
    assert result["exit"] == 2 and result["attempts"] == []
    assert "no such file" in (result["stdout"] if as_json else result["stderr"])


def test_a_workspace_file_deleted_is_the_same_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    result = both(["run", "clipping"], capsys, tmp_path, monkeypatch, workspace=True,
                  setup=lambda home: (home / "ws" / "clipping" / "clipping.py").unlink())
    assert result["exit"] == 2 and "grind reset clipping" in result["stderr"]


def test_an_unknown_exercise_is_the_same_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    result = both(["run", "clippin"], capsys, tmp_path, monkeypatch)
    assert result["exit"] == 2 and "clipping" in result["stderr"]


def test_a_broken_exercise_is_the_same_error(course: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A reference that fails its own case is found while grading, after the fast path has
    taken the command: its error boundary must say what the CLI's says, with the same code."""
    reference = course / "solutions" / "clipping" / "reference.py"
    reference.write_text(reference.read_text().replace(
        "    coef = ", "    raise RuntimeError('a broken reference')\n    coef = ", 1))
    for as_json in (False, True):
        result = both(["run", "clipping", "--file", str(CLIPPING / "correct_loop.py"), *(["--json"] if as_json else [])],
                      capsys, tmp_path / str(as_json), monkeypatch)
        assert result["exit"] == 4 and result["attempts"] == []
        assert "the reference fails its own case" in (result["stdout"] if as_json else result["stderr"])


def test_a_broken_manifest_is_the_same_error(course: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    manifest = course / "exercises" / "clipping" / "exercise.toml"
    manifest.write_text(manifest.read_text() + "\n[[[ not toml\n")
    result = both(["run", "clipping", "--file", str(CLIPPING / "correct_loop.py")], capsys, tmp_path, monkeypatch)
    assert result["exit"] == 4 and result["stderr"].startswith("grind: ")


def test_an_interview_in_progress_gets_the_same_verdict_and_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """No hints offered while the interview runs, the pass ends it: the same on both paths."""
    def sitting(home: Path) -> None:
        shutil.copyfile(CLIPPING / "correct_loop.py", home / "ws" / "clipping" / "clipping.py")
        with Progress(progress_path(home / "ws")) as progress:
            progress.start_interview("clipping", time.time() - 60, time.time() + 3600)

    result = both(["run", "clipping"], capsys, tmp_path, monkeypatch, workspace=True, setup=sitting)
    assert result["exit"] == 0 and "Interview passed in" in result["stdout"]
    assert [a["mode"] for a in result["attempts"]] == ["interview"]


def test_an_expired_interview_is_closed_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    def sitting(home: Path) -> None:
        shutil.copyfile(CLIPPING / "pitfall_sum_of_norms.py", home / "ws" / "clipping" / "clipping.py")
        with Progress(progress_path(home / "ws")) as progress:
            progress.start_interview("clipping", time.time() - 3600, time.time() - 60)

    result = both(["run", "clipping", "--json"], capsys, tmp_path, monkeypatch, workspace=True, setup=sitting)
    assert result["exit"] == 1 and "ran out of time" in result["stdout"]


def test_a_progress_database_in_the_way_is_the_same_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The fast path grades before it opens the progress (the job is sent first); a database it
    then cannot open hands the command to the full CLI, which says what it always says. The
    early grade recorded nothing, so nothing is doubled."""
    result = both(["run", "clipping", "--file", str(CLIPPING / "correct_loop.py")], capsys, tmp_path, monkeypatch,
                  setup=lambda home: (home / "state").write_text("a file where the folder goes\n"))
    assert result["exit"] == 5 and "is not a folder" in result["stderr"] and result["attempts"] == []


def test_a_file_changed_during_the_grade_is_graded_as_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The early grade read the file before the progress was opened; if the file changed before
    the attempt is recorded, what is recorded is graded again: verdict and record agree."""
    import judge.grade
    target = tmp_path / "clipping.py"
    target.write_text((CLIPPING / "pitfall_sum_of_norms.py").read_text())
    real, graded = judge.grade.grade, []

    def grade(exercise: Any, path: Path, **kwargs: Any) -> Any:
        graded.append(kwargs.get("source"))
        verdict = real(exercise, path, **kwargs)
        if len(graded) == 1:  # an edit saved while the first grade ran
            target.write_text((CLIPPING / "correct_loop.py").read_text())
        return verdict

    monkeypatch.setattr(judge.grade, "grade", grade)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    out, err, code = _invoke("fast", ["run", "clipping", "--file", str(target), "--json"], capsys)
    assert code == 0 and json.loads(out)["status"] == "passed", (out, err)
    assert len(graded) == 2 and graded[1] == (CLIPPING / "correct_loop.py").read_text()
    assert [a["verdict"] for a in _attempts(progress_path(None))] == ["passed"]


def test_the_job_is_sent_before_the_progress_is_loaded(tmp_path: Path) -> None:
    """A daemon-served `grind run` sends its job first and loads the progress database and the
    recording's modules while the daemon grades: when the grade starts, none of them is loaded."""
    broken = tmp_path / "broken.py"
    broken.write_text("def clip_grad_norm(params, max_norm)\n    return 0\n")  # a static verdict: no torch
    script = (
        "import sys, judge.grade\n"
        "real = judge.grade.grade\n"
        "def grade(*args, **kwargs):\n"
        "    loaded = sorted(m for m in ('judge.progress', 'judge.outcome', 'judge.practice', 'sqlite3')"
        " if m in sys.modules)\n"
        "    sys.stderr.write(f'loaded at the grade: {loaded}\\n')\n"
        "    return real(*args, **kwargs)\n"
        "judge.grade.grade = grade\n"
        "from judge.entry import main\n"
        f"sys.argv = ['grind', 'run', 'clipping', '--file', {str(broken)!r}]\n"
        "main()\n")
    env = dict(os.environ, GRIND_STATE_DIR=str(tmp_path / "state"), GRIND_NO_DAEMON="1")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stderr
    assert "loaded at the grade: []" in done.stderr
    assert "SyntaxError" in done.stdout
    assert [a["verdict"] for a in _attempts(tmp_path / "state" / "progress.db")] == ["error"]


def test_a_terminal_gets_the_same_styled_screen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Where rich would take the stream for a terminal, the fast path draws through rich too."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    result = both(["run", "clipping", "--file", str(CLIPPING / "pitfall_sum_of_norms.py")], capsys, tmp_path,
                  monkeypatch)
    assert "\x1b[" in result["stdout"]


def test_text_rich_would_rewrite_is_printed_by_rich(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A tab in the learner's output: rich expands it; so the fast path lets rich print it."""
    noisy = tmp_path / "noisy.py"
    noisy.write_text((CLIPPING / "pitfall_sum_of_norms.py").read_text() + "\nprint('a\\tb\\rc')\n")
    result = both(["run", "clipping", "--file", str(noisy)], capsys, tmp_path, monkeypatch)
    assert result["exit"] == 1


# ---------------------------------------------------------------------------------------------
# Over the daemon


def test_a_daemon_served_run_gets_the_same_verdict_exit_code_and_record(
        daemons: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    from judge.paths import hidden_from_learners

    daemon.spawn(hidden_from_learners(Catalog().get("clipping")))
    info = warm_daemon()
    for name in ("correct_loop.py", "pitfall_sum_of_norms.py"):
        for as_json in (False, True):
            both(["run", "clipping", "--file", str(CLIPPING / name), *(["--json"] if as_json else [])],
                 capsys, tmp_path / f"{name}-{as_json}", monkeypatch)
    after = daemon.status()
    assert after is not None and after["pid"] == info["pid"] and after["jobs"] == info["jobs"] + 8


DYING = '''
import json, os, socket, struct, sys
path = sys.argv[1]
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
os.umask(0o177)
listener.bind(path)
listener.listen(4)
print("listening", flush=True)
while True:
    conn, _ = listener.accept()
    for _ in range(2):  # the secret's frame, then the job
        size = struct.unpack(">I", conn.recv(4, socket.MSG_WAITALL))[0]
        request = conn.recv(size, socket.MSG_WAITALL) if size else b""
    if json.loads(request).get("op") != "grade":
        raw = json.dumps({"ok": True}).encode()
        conn.sendall(struct.pack(">I", len(raw)) + raw)
        conn.close()
        continue
    accepted = json.dumps({"ok": True, "accepted": True}).encode()
    conn.sendall(struct.pack(">I", len(accepted)) + accepted)
    conn.sendall(struct.pack(">I", 1000) + b'{"ok": true, "verdict": {"exer')  # half an answer, then gone
    conn.close()
'''


@pytest.fixture()
def dying_daemon(daemons: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:  # noqa: F811
    """A daemon that accepts each job and dies halfway through its answer (the connection closes
    mid-frame). Starting a real one in its place is stubbed out: each run then grades cold."""
    monkeypatch.setattr(daemon, "spawn", lambda hidden: None)
    script = tmp_path / "dying.py"
    script.write_text(DYING)
    procs = []

    def start() -> None:
        path = daemon.socket_path()
        assert path is not None
        proc = subprocess.Popen([sys.executable, str(script), str(path)], stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline() == b"listening\n"
        procs.append(proc)

    monkeypatch.setattr(sys.modules[__name__], "_restart_dying", start)
    yield
    for proc in procs:
        proc.kill()
        proc.wait()


def _restart_dying() -> None:  # replaced by the fixture
    raise AssertionError("no dying daemon fixture")


def test_a_daemon_that_dies_mid_answer_means_the_same_cold_verdict(
        dying_daemon: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Each path meets the dying daemon (its socket is taken away after the failure, so one is
    started before each run) and grades cold: the same verdict as each other, nothing doubled."""
    result = both(["run", "clipping", "--file", str(CLIPPING / "pitfall_sum_of_norms.py"), "--json"], capsys,
                  tmp_path, monkeypatch, setup=lambda home: _restart_dying())
    assert result["exit"] == 1 and len(result["attempts"]) == 1
    assert json.loads(result["stdout"])["pitfall"]["slug"] == "sum-of-norms"


def test_plain_text_written_directly_is_what_rich_prints() -> None:
    """judge.render.direct writes the plain renderer's text itself unless it holds a character
    rich's print rewrites. Held against rich (code no one here wrote): for text without those
    characters, rich's plain print is the text and a newline."""
    from rich.console import Console

    from judge.render.direct import RICH_REWRITES

    samples = ["PASS  worked_example", "[bold]x[/] :smile: 漢字 é\u0301 🙂", "a  \n  b\u00a0", "\\x1b[31m red",
               "\u2028 line \x85 sep \x1c", "tab\there", "cr\rhere", "bell\x07", "ff\x0c"]
    for text in samples:
        out = io.StringIO()
        Console(file=out, highlight=False).print(text, markup=False, highlight=False, emoji=False, soft_wrap=True)
        if not RICH_REWRITES.search(text):
            assert out.getvalue() == text + "\n", text
        else:
            assert out.getvalue() != text + "\n", text  # the guard is needed: rich changes these


def test_the_fast_torch_version_is_importlib_metadatas() -> None:
    """judge.environment reads torch's version from its dist-info folder; held against the
    standard library's importlib.metadata, which it stands in for."""
    from importlib import metadata

    from judge import environment

    assert environment._dist_info_version("torch") == metadata.version("torch")
    assert environment._dist_info_version("numpy") == metadata.version("numpy")
    assert environment._dist_info_version("not-a-package-grind-knows") is None


# ---------------------------------------------------------------------------------------------
# The help, replayed from what the full CLI printed (judge/entry.py)


HELP_LINES = [[], ["--help"], ["-h"]]


def _help_runs(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str, int]]:
    """The full CLI's answer, then the entry's twice: the first prints through the full CLI and
    keeps the text, the second replays it."""
    return [_invoke(which, argv, capsys) for which in ("full", "fast", "fast")]


@pytest.mark.parametrize("argv", HELP_LINES)
@pytest.mark.parametrize("setting", [{}, {"COLUMNS": "132"}, {"FORCE_COLOR": "1", "COLUMNS": "61"}])
def test_the_help_is_the_full_clis_byte_for_byte_and_exit_code(
        argv: list[str], setting: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Plain, wide, and styled (rich's colours, a narrow width): the same bytes and exit code as
    the full CLI, whether printed through it or replayed."""
    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "cache"))
    for name, value in setting.items():
        monkeypatch.setenv(name, value)
    full, first, replayed = _help_runs(argv, capsys)
    assert first == full and replayed == full
    assert full[2] == (2 if not argv else 0) and "grind [OPTIONS] COMMAND" in full[0]
    assert ("\x1b[" in full[0]) == ("FORCE_COLOR" in setting)
    assert len(list((tmp_path / "cache" / ".help").glob("help-*.txt"))) == 1


def test_a_kept_help_is_printed_without_typer_rich_or_click(tmp_path: Path) -> None:
    """The point of keeping it: the second `grind --help` loads none of the CLI's libraries."""
    code = ("import sys\nfrom judge.entry import main\nsys.argv = ['grind', '--help']\n"
            "try:\n    main()\nexcept SystemExit as done:\n    code = done.code\n"
            "sys.stderr.write(repr((code, sorted(m for m in ('typer', 'rich', 'click') if m in sys.modules))))")
    env = {k: v for k, v in os.environ.items() if k not in ("GRIND_TRACEBACK", "_GRIND_COMPLETE")}
    env["GRIND_CACHE_DIR"] = str(tmp_path / "cache")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
            for _ in range(2)]
    assert runs[0].stderr.startswith("(0, [") and "'typer'" in runs[0].stderr
    assert runs[1].stderr == "(0, [])" and runs[1].stdout == runs[0].stdout


def test_a_terminal_gets_the_full_clis_help_at_its_own_width(tmp_path: Path) -> None:
    """On a real terminal (a pseudo-terminal 97 columns wide, no COLUMNS): rich finds the width
    and colours itself; the replay is the same bytes the full CLI wrote there."""
    import fcntl
    import pty
    import struct
    import termios

    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "GRIND_TRACEBACK", "_GRIND_COMPLETE")}
    env.update(GRIND_CACHE_DIR=str(tmp_path / "cache"), TERM="xterm-256color")

    def on_a_terminal(module: str) -> tuple[bytes, int]:
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 97, 0, 0))
        code = f"import sys\nsys.argv = ['grind', '--help']\nfrom {module} import main\nmain()"
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=follower, stdout=follower, stderr=follower,
                                env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other side is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        return b"".join(chunks), proc.wait(timeout=120)

    full = on_a_terminal("judge.cli")
    assert full[1] == 0 and b"\x1b[" in full[0] and max(len(line) for line in full[0].split(b"\r\n")) > 97
    assert on_a_terminal("judge.entry") == full
    assert on_a_terminal("judge.entry") == full
    assert len(list((tmp_path / "cache" / ".help").glob("help-*.txt"))) == 1


def test_a_kept_help_is_replayed_only_for_its_own_rendering(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Another width, or a module of judge/cli/ edited since (its commands' help may have changed): the
    full CLI prints again, never the kept text."""
    from judge import entry

    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "cache"))
    full = _invoke("full", ["--help"], capsys)
    _invoke("fast", ["--help"], capsys)
    [kept] = (tmp_path / "cache" / ".help").glob("help-*.txt")
    kept.write_bytes(kept.read_bytes().replace(b"Usage: grind", b"Usage: STALE"))
    assert "Usage: STALE" in _invoke("fast", ["--help"], capsys)[0]  # what is kept is what is printed
    real_stamp = entry._stamp
    cli = os.path.join("judge", "cli", "")
    monkeypatch.setattr(entry, "_stamp", lambda path: (path, 0, 0) if cli in path else real_stamp(path))
    assert _invoke("fast", ["--help"], capsys) == full
    monkeypatch.undo()
    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "100")
    assert _invoke("fast", ["--help"], capsys) == _invoke("full", ["--help"], capsys)


def test_a_help_cache_that_cannot_be_written_costs_nothing_but_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cache").write_text("a file where the cache folder would be")
    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "cache"))
    full = _invoke("full", ["--help"], capsys)
    assert _invoke("fast", ["--help"], capsys) == full and _invoke("fast", ["--help"], capsys) == full


def test_clearing_the_cache_removes_the_kept_help_and_counts_only_exercises(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from judge import cache

    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "cache"))
    _invoke("fast", ["--help"], capsys)
    assert (tmp_path / "cache" / ".help").is_dir()
    assert cache.clear() == 0 and not (tmp_path / "cache" / ".help").exists()


def test_the_daemons_code_fingerprint_is_the_one_pathlibs_rglob_gives(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Every daemon-served run fingerprints grind's code with os.scandir; held against the
    standard library's Path.rglob("*.py") walk it stands in for (which files, in which order, a
    linked folder not entered), on a package folder made for it."""
    import hashlib

    package = tmp_path / "judge"
    for name in ("__init__.py", "a.py", "a/b.py", "a/c.txt", "a/d/e.py", "ab.py", "z.py/inside.py", ".hidden.py"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(name)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "f.py").write_text("f")
    (package / "linked").symlink_to(tmp_path / "elsewhere")
    monkeypatch.setattr(daemon_wire, "_PACKAGE", str(package))  # the folder it fingerprints

    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        info = path.stat()
        digest.update(f"{path.relative_to(package)}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    assert daemon_wire.code_fingerprint() == digest.hexdigest()[:16]


@pytest.mark.parametrize("meanwhile_fails", [False, True])
def test_the_client_does_its_next_work_while_the_daemon_grades(dying_daemon: None, meanwhile_fails: bool) -> None:
    """`grind run` loads its renderer once the daemon has accepted the job, before the answer is
    read; a failure there is only a lost head start: the job's answer is still read (here, a
    daemon dying mid-answer: None, graded cold by the caller)."""
    _restart_dying()
    calls: list[str] = []

    def meanwhile() -> None:
        calls.append("meanwhile")
        if meanwhile_fails:
            raise ImportError("a module that cannot load yet")

    worker = daemon.DaemonExecutor([])
    worker.meanwhile = meanwhile
    assert worker.verdict(Submission(Catalog().get("clipping"), "key", "source = 1\n", "clipping.py", speed=True)) is None
    assert calls == ["meanwhile"]


@pytest.mark.parametrize("name, code, verdict", [("correct_loop.py", 0, "passed"), ("pitfall_per_tensor.py", 1, "failed")])
def test_the_console_script_leaves_without_teardown_yet_flushes_records_and_runs_exit_handlers(
        name: str, code: int, verdict: str, tmp_path: Path) -> None:
    """``python -m judge`` (as the console script) ends a fast ``grind run`` with ``os._exit``
    after the exit handlers and a flush: the piped output is whole, the exit code and the record
    are the run's, and an exit handler registered during the run still ran."""
    marker = tmp_path / "handler-ran"
    script = (
        "import atexit, sys, pathlib\n"
        f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'yes')\n"
        "import judge.entry, judge.fast_run\n"
        "sys.argv = ['grind', *sys.argv[1:]]\n"
        "judge.entry.script()\n"
        "sys.stderr.write('script() returned\\n')\n")
    env = dict(os.environ, GRIND_STATE_DIR=str(tmp_path / "state"), GRIND_NO_DAEMON="1")
    done = subprocess.run([sys.executable, "-c", script, "run", "clipping", "--file", str(CLIPPING / name), "--json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == code, done.stderr
    assert "script() returned" not in done.stderr, "the fast run ends in script(), not after it"
    assert json.loads(done.stdout)["status"] == verdict, "the whole --json document reached the pipe"
    assert marker.read_text() == "yes"
    assert [a["verdict"] for a in _attempts(tmp_path / "state" / "progress.db")] == [verdict]
