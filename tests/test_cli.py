"""The CLI adapter, driven through typer's CliRunner: commands, exit codes, the error boundary."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.status import ExitStatus

from .conftest import ADVERSARIAL, SUBMISSIONS

runner = CliRunner()


@pytest.fixture()
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "user-state"))
    monkeypatch.setenv("COLUMNS", "80")
    return tmp_path


def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=input)


def test_list_shows_clipping_with_its_metadata(in_tmp: Path) -> None:
    """`grind list` shows each exercise's slug, title, topic, difficulty and status."""
    result = invoke("list")
    assert result.exit_code == 0
    line = next(line for line in result.output.splitlines() if line.startswith("clipping"))
    assert "Gradient clipping by global norm" in line and "easy" in line and "new" in line


def test_list_json(in_tmp: Path) -> None:
    """`grind list --json` is machine-readable."""
    data = json.loads(invoke("list", "--json").stdout)  # stderr has the no-workspace note
    assert {"slug": "clipping", "status": "new"}.items() <= next(d for d in data if d["slug"] == "clipping").items()


def test_unknown_exercise_suggests_the_closest_name(in_tmp: Path) -> None:
    """A typo gets one line with 'did you mean', exit code 2, and no traceback."""
    result = invoke("run", "cliping")
    assert result.exit_code == ExitStatus.USAGE
    assert "Did you mean 'clipping'?" in result.output
    assert "Traceback" not in result.output


def test_run_without_workspace_grades_the_stub_and_says_how_to_start(in_tmp: Path) -> None:
    """A new user with no workspace gets a real verdict on the stub and the next step."""
    result = invoke("run", "clipping")
    assert result.exit_code == ExitStatus.FAILED
    assert "FAILED" in result.output and "worked_example" in result.output
    assert "grind init" in result.output


def test_run_json_verdict_fields(in_tmp: Path) -> None:
    """`--json` gives the exercise, the status and per check name/kind/status/message/expected/got/pitfall."""
    result = invoke("run", "clipping", "--file", str(SUBMISSIONS / "clipping" / "pitfall_per_tensor.py"), "--json")
    assert result.exit_code == ExitStatus.FAILED
    data = json.loads(result.output)
    assert data["exercise"] == "clipping" and data["status"] == "failed"
    assert data["pitfall"]["slug"] == "per-tensor"
    example = next(c for c in data["checks"] if c["name"] == "worked_example")
    assert example["kind"] == "example" and example["status"] == "failed"
    # float32 values, each the shortest decimal that is exact in float32 (3/13 is 0.23076922)
    # (the pitfall divides by n + 1e-6, so it gets just under 0.6 and 0.8, and says so exactly)
    assert example["expected"] == [0.23076922, 0.3076923] and example["got"] == [0.5999999, 0.79999983]
    assert example["pitfall"] == "per-tensor clipping"
    assert set(example) >= {"name", "kind", "status", "message", "expected", "got", "pitfall"}


def test_exit_codes_for_pass_syntax_error_and_missing_file(in_tmp: Path) -> None:
    """0 for a pass, 3 for a learner error, 2 for a usage error."""
    ok = invoke("run", "clipping", "-f", str(SUBMISSIONS / "clipping" / "correct_loop.py"))
    assert ok.exit_code == ExitStatus.PASSED, ok.output
    assert "PASSED" in ok.output
    bad = invoke("run", "clipping", "-f", str(ADVERSARIAL / "syntax_error.py"))
    assert bad.exit_code == ExitStatus.LEARNER_ERROR and "SyntaxError at line 2" in bad.output
    missing = invoke("run", "clipping", "-f", "nope.py")
    assert missing.exit_code == ExitStatus.USAGE and "no such file" in missing.output


def test_init_then_run_hint_solution_reset_cycle(in_tmp: Path) -> None:
    """The learner's loop in a workspace: init, fail, hints one at a time, pass, reveal, reset with backup."""
    assert invoke("init", "ws").exit_code == 0
    ws = in_tmp / "ws"
    mine = ws / "clipping" / "clipping.py"
    assert mine.read_text() == (Path(__file__).parents[1] / "exercises/clipping/stub.py").read_text()
    os.chdir(ws / "clipping")  # the workspace is found from a subfolder too

    assert invoke("run", "clipping").exit_code == ExitStatus.FAILED
    first = invoke("hint", "clipping")
    second = invoke("hint", "clipping")
    assert "Hint 1 of 5" in first.output and "Hint 2 of 5" in second.output
    assert "Hint 1 of 5" in invoke("hint", "clipping", "--all").output

    refused = invoke("solution", "clipping", input="n\n")
    assert refused.exit_code == ExitStatus.USAGE and "def clip_grad_norm_" not in refused.output

    mine.write_text((SUBMISSIONS / "clipping" / "correct_loop.py").read_text())
    assert invoke("run", "clipping").exit_code == ExitStatus.PASSED
    revealed = invoke("solution", "clipping")
    assert revealed.exit_code == 0 and "def clip_grad_norm_" in revealed.output
    listed = invoke("list").output
    assert "passed" in next(line for line in listed.splitlines() if line.startswith("clipping"))

    kept = invoke("reset", "clipping", input="n\n")
    assert kept.exit_code == ExitStatus.USAGE
    assert "expect: passed" in mine.read_text()
    assert invoke("reset", "clipping", "--yes").exit_code == 0
    assert "NotImplementedError" in mine.read_text()
    backups = list((ws / ".grind" / "backups").glob("clipping-*.py"))
    assert backups and "expect: passed" in backups[0].read_text()


def test_init_never_overwrites_learner_files(in_tmp: Path) -> None:
    """Running init twice keeps what the learner wrote."""
    invoke("init", "ws")
    mine = in_tmp / "ws" / "clipping" / "clipping.py"
    mine.write_text("# my work\n")
    result = invoke("init", "ws")
    assert "kept your existing files: clipping" in result.output
    assert mine.read_text() == "# my work\n"


def test_solution_force_reveals_without_asking(in_tmp: Path) -> None:
    result = invoke("solution", "clipping", "--force")
    assert result.exit_code == 0 and "def clip_grad_norm_" in result.output


def test_reset_outside_a_workspace_is_a_usage_error(in_tmp: Path) -> None:
    result = invoke("reset", "clipping", "--yes")
    assert result.exit_code == ExitStatus.USAGE and "grind init" in result.output


def test_malformed_manifest_is_one_line_naming_file_and_key(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken exercise.toml is a judge error: one line with the file, the key and its line."""
    root = in_tmp / "course"
    (root / "exercises" / "broken").mkdir(parents=True)
    (root / "solutions" / "broken").mkdir(parents=True)
    (root / "exercises" / "broken" / "exercise.toml").write_text(
        'title = "Broken"\ntopic = "x"\ndifficulty = "impossible"\nentry = ["f"]\nhints = ["h"]\n'
    )
    monkeypatch.setenv("GRIND_CONTENT", str(root))
    result = invoke("run", "broken")
    assert result.exit_code == ExitStatus.JUDGE_ERROR
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1
    assert "exercise.toml" in lines[0] and "'difficulty' (line 3)" in lines[0] and "impossible" in lines[0]


def test_traceback_flag_shows_the_traceback(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--traceback lets a developer see where a judge error came from."""
    monkeypatch.setenv("GRIND_CONTENT", str(in_tmp / "nowhere"))
    result = invoke("--traceback", "show", "clipping")
    assert result.exception is not None and type(result.exception).__name__ == "UsageError"


def test_completion_offers_exercise_names() -> None:
    """Shell completion of exercise names comes from the catalog."""
    from judge.cli.shared import complete_names

    assert complete_names("cl") == ["clipping"]
    assert complete_names("zz") == []


def test_every_command_is_documented_in_the_readme() -> None:
    """The README documents every command and every exit code."""
    from judge.cli import app as cli_app
    from judge.status import ExitStatus

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    names = [c.name or c.callback.__name__ for c in cli_app.registered_commands]  # type: ignore[union-attr]
    for name in names:
        assert f"grind {name}" in readme, name
    for status in ExitStatus:
        assert f"| {int(status)} |" in readme, status


def _workspace(in_tmp: Path) -> Path:
    assert invoke("init", "ws").exit_code == 0
    os.chdir(in_tmp / "ws")
    return in_tmp / "ws"


def test_hint_all_still_shows_the_hints_revealed_before_a_pass(in_tmp: Path) -> None:
    """A pass closes the sitting, but the hints seen in it stay readable with --all."""
    ws = _workspace(in_tmp)
    invoke("hint", "clipping")
    invoke("hint", "clipping")
    (ws / "clipping" / "clipping.py").write_text((SUBMISSIONS / "clipping" / "correct_loop.py").read_text())
    assert invoke("run", "clipping").exit_code == ExitStatus.PASSED
    shown = invoke("hint", "clipping", "--all").output
    assert "No hints revealed yet" not in shown
    assert "Hint 1 of 5" in shown and "Hint 2 of 5" in shown and "Hint 3 of 5" not in shown


def test_a_bare_hint_means_the_exercise_folder_you_are_in_as_a_bare_run_does(in_tmp: Path) -> None:
    """A newcomer in clipping/ typed `grind hint` and was asked which exercise, though `grind run`
    there knew."""
    ws = _workspace(in_tmp)
    os.chdir(ws / "clipping")
    shown = invoke("hint")
    assert shown.exit_code == 0 and "Hint 1 of 5" in shown.output, shown.output
    os.chdir(in_tmp)
    outside = invoke("hint")
    assert outside.exit_code == ExitStatus.USAGE and "grind hint NAME" in outside.output, outside.output


def test_progress_and_list_outside_a_workspace_say_where_progress_lives(in_tmp: Path) -> None:
    """Outside a workspace, one line says that progress is kept in a workspace; --json stays JSON."""
    for command in (["progress"], ["list"]):
        result = invoke(*command)
        assert result.exit_code == 0
        notes = [line for line in result.output.splitlines() if "progress lives in a workspace" in line]
        assert len(notes) == 1 and "grind init" in notes[0]
        assert json.loads(runner.invoke(app, [*command, "--json"]).stdout) is not None
    _workspace(in_tmp)
    assert "progress lives in a workspace" not in invoke("progress").output


def test_file_given_a_directory_says_it_is_a_directory(in_tmp: Path) -> None:
    result = invoke("run", "clipping", "--file", str(in_tmp))
    assert result.exit_code == ExitStatus.USAGE and "is a directory" in result.output
    assert "no such file" not in result.output


def test_usage_errors_with_json_are_json_on_stdout(in_tmp: Path) -> None:
    """With --json a script gets a JSON error on stdout and exit 2, from grind's checks and click's."""
    for args in (["run", "cliping", "--json"], ["run", "clipping", "--json", "--bogus"],
                 ["run", "clipping", "--json", "-f", "nope.py"]):
        result = runner.invoke(app, args)
        assert result.exit_code == ExitStatus.USAGE, args
        error = json.loads(result.stdout)["error"]
        assert error["kind"] == "usage" and error["exit_code"] == 2 and error["message"]


def test_minutes_without_interview_is_refused(in_tmp: Path) -> None:
    for args in (["run", "clipping", "--minutes", "5"], ["practice", "--minutes", "5"]):
        result = invoke(*args)
        assert result.exit_code == ExitStatus.USAGE, args
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("grind: --minutes") and "--interview" in lines[0]


def test_run_without_a_name_is_one_grind_line(in_tmp: Path) -> None:
    """No click box: one `grind:` line naming what is missing, exit 2."""
    result = invoke("run")
    assert result.exit_code == ExitStatus.USAGE
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("grind: ") and "grind list" in lines[0]
    assert "╭" not in result.output and "Usage:" not in result.output


def test_a_refused_or_unanswered_confirmation_exits_2_everywhere(in_tmp: Path) -> None:
    """No, or no answer at all (end of input), is the same exit code in every command that asks."""
    _workspace(in_tmp)
    for args in (["progress", "--reset"], ["reset", "clipping"], ["reset", "--all"], ["solution", "clipping"]):
        for answer in ("n\n", ""):
            result = invoke(*args, input=answer)
            assert result.exit_code == ExitStatus.USAGE, (args, answer, result.output)
            assert "Aborted" not in result.output


def test_untouched_stub_verdict_is_short_and_says_no_workspace_first(in_tmp: Path) -> None:
    """The note comes first; the error repeated by every check is one line with a count; the error shows its code line."""
    result = invoke("run", "accumulation")
    assert result.exit_code == ExitStatus.FAILED
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[0].startswith("Note: No grind workspace here")
    rows = [line for line in lines if line.startswith("  ERROR")]
    assert len(rows) == 1 and "13 checks: NotImplementedError: write train_epoch" in rows[0], lines
    assert any('raise NotImplementedError("write train_epoch"))' in line for line in lines), lines


NO_TORCH = """
import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'")
        return None
sys.meta_path.insert(0, _NoTorch())
sys.argv = ["grind", *sys.argv[1:]]
from judge.cli import main
main()
"""


def test_without_torch_run_and_doctor_say_how_to_install_it(in_tmp: Path) -> None:
    """In a Python without torch: exit 5 (environment), the missing package and the pip command,
    for a learner's run and doctor as for an instructor's validate and grade (never a reference
    that "failed", nor a class graded as crashed)."""
    import subprocess
    import sys

    (in_tmp / "class").mkdir()
    (in_tmp / "class" / "ann.py").write_text("def clip_grad_norm_(parameters, max_norm, norm_type=2.0):\n    pass\n")
    for args in (["run", "clipping"], ["doctor"], ["validate", "clipping"],
                 ["grade", "class", "-e", "clipping", "--allow-weak-isolation"]):
        done = subprocess.run([sys.executable, "-c", NO_TORCH, *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == ExitStatus.ENVIRONMENT == 5, (args, done.stdout, done.stderr)
        said = done.stdout + done.stderr
        assert "torch" in said and "pip install torch" in said and "Traceback" not in said, said
        assert "reference failed" not in said


def test_torch_found_is_remembered_but_its_absence_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every grade asks whether torch is there (reading its metadata: 7 ms). A version found is
    kept for the process; an absence is not, so torch installed while `grind watch` runs is
    seen on the next save."""
    import importlib.util

    from judge import environment

    real = importlib.util.find_spec
    asked: list[str] = []
    monkeypatch.setattr(environment, "_FOUND", [])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: asked.append(name))
    assert environment.torch_version() is None and environment.torch_version() is None
    assert asked == ["torch", "torch"]
    monkeypatch.setattr(importlib.util, "find_spec", real)
    found = environment.torch_version()
    assert found and found != "unknown version"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: asked.append(name))
    assert environment.torch_version() == found and asked == ["torch", "torch"]


def test_show_renders_the_statement_as_markdown_with_the_title_once(in_tmp: Path) -> None:
    result = invoke("show", "clipping")
    assert result.exit_code == 0
    assert result.output.count("Gradient clipping by global norm") == 1
    assert not [line for line in result.output.splitlines() if line.startswith("#")]  # rendered, not raw


def test_series_display_whole_step_ticks_steps_as_steps_no_legend_and_aligned_marker() -> None:
    """The plot: whole-number step ticks, a halving scale drawn as a drop (not a ramp), no legend
    box over the curves at 80 columns; without colour, the ◀ marker keeps the numbers aligned."""
    import re
    from io import StringIO

    from rich.console import Console

    from judge.render.styled import series
    from judge.views.screens import minutes_text
    from judge.views.verdict import series_view

    expected, got = [65536.0] * 4 + [32768.0] * 4 + [16384.0] * 8, [65536.0] * 16
    out = StringIO()
    colour = Console(file=out, width=80, force_terminal=True, color_system="standard")
    colour.print(series(colour, series_view({"expected": expected, "got": got}, "loss scale")))
    plot = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()).splitlines()
    ticks = plot[plot.index(next(line for line in plot if line.strip() == "step")) - 1]
    assert ticks.split() == [str(n) for n in range(0, 16, 3)], ticks
    assert "reference (green line), yours (red x)" in plot[0] and not any("yours" in line for line in plot[1:])
    assert any("x" in line for line in plot[1:-2])  # yours is drawn in crosses: told apart without colour
    drop = [line for line in plot if "▌" in line or "▐" in line]  # vertical drops at steps 4 and 8
    assert len(drop) >= 4

    out = StringIO()
    plain = Console(file=out, width=80, no_color=True, force_terminal=True)
    plain.print(series(plain, series_view({"expected": expected, "got": got}, "loss scale")))
    rows = [line for line in out.getvalue().splitlines() if "65536" in line]
    assert len({line.rindex("65536") for line in rows}) == 1 and any("◀" in line for line in rows)
    assert not any("65536.0" in line for line in rows)  # a whole number reads as an integer
    assert minutes_text(1) == "1 minute" and minutes_text(25) == "25 minutes"


def test_an_exercise_file_that_is_a_fifo_or_a_device_link_is_not_called_missing(in_tmp: Path) -> None:
    """A FIFO, a folder or a link to /dev/zero where the exercise file should be: grind says what
    is there instead of "missing" (which sends the learner looking for a file that exists)."""
    import os

    assert invoke("init").exit_code == 0
    target = next(in_tmp.rglob("clipping/clipping.py"))
    target.unlink()
    os.mkfifo(target)
    result = invoke("run", "clipping", "--file", str(target))
    assert result.exit_code == ExitStatus.USAGE and "not a regular file" in result.output, result.output
    target.unlink()
    target.symlink_to("/dev/zero")
    with_cwd = os.getcwd()
    os.chdir(target.parent)
    try:
        result = invoke("run", "clipping")
    finally:
        os.chdir(with_cwd)
    assert result.exit_code == ExitStatus.USAGE and "not a regular file" in result.output, result.output
    assert "is missing" not in result.output


def test_something_in_the_way_of_grinds_progress_is_a_one_line_environment_problem(in_tmp: Path) -> None:
    """A file named .grind, or a folder named progress.db: exit 5 with what to move, never
    "a bug in grind" (exit 4) and never a traceback; the learner's files are left alone."""
    import shutil

    assert invoke("init", "ws").exit_code == 0
    state = in_tmp / "ws" / ".grind"
    ws = in_tmp / "ws"
    for make in ("file", "folder"):
        if state.is_file():
            state.unlink()
        shutil.rmtree(state, ignore_errors=True)
        if make == "file":
            state.write_text("not grind's")
        else:
            (state / "progress.db").mkdir(parents=True)
        import os
        here = os.getcwd()
        os.chdir(ws)
        try:
            result = invoke("run", "clipping")
        finally:
            os.chdir(here)
        assert result.exit_code == ExitStatus.ENVIRONMENT, (make, result.output)
        assert "move it away" in result.output and "Traceback" not in result.output, result.output
    assert (ws / "clipping" / "clipping.py").is_file()


def test_a_reader_that_leaves_early_is_not_an_internal_error(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`grind grade --help | head -50`: the reader leaves while grind still writes. That is no bug
    of grind's: no "internal error" line, and the status a shell gives a process SIGPIPE ended."""
    import judge.cli.shared as cli  # where _course looks Catalog up

    class Gone:
        def load_all(self) -> object:
            raise BrokenPipeError(32, "Broken pipe")  # what a write to a closed pipe raises

    monkeypatch.setattr(cli, "Catalog", Gone)
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 141, result.output
    assert "internal error" not in result.output and "Traceback" not in result.output
