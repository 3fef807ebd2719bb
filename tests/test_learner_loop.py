"""The small things around the learner's loop (issue 36, points 6 and 8): a bare `grind run`,
scratch files, importable file names, the curriculum order, `run --all`, the diff after a pass,
editor lines and the progress export. Grading is faked where the verdict is not the point."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judge.catalog import Catalog
from judge.cli import app
from judge.models import Status, Verdict
from judge.progress import Progress
from judge.status import ExitStatus
from judge.workspace import current_exercise, is_scratch, learner_file

from .conftest import ROOT
from .test_progress import verdict

runner = CliRunner()
PASSING = "# the answer\n"


class FakeGrade:
    """Passes a file holding PASSING, fails anything else; remembers which exercises it graded."""

    def __init__(self) -> None:
        self.graded: list[str] = []

    def __call__(self, exercise: Any, path: Path, *, source: str | None = None, **kwargs: Any) -> Verdict:
        self.graded.append(exercise.slug)
        text = source if source is not None else path.read_text(encoding="utf-8")
        ok = PASSING in text
        return verdict(Status.PASSED if ok else Status.FAILED, 12 if ok else 4, exercise=exercise.slug,
                       pitfall=None if ok else "per-tensor")


@pytest.fixture()
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "user-state"))
    monkeypatch.setenv("COLUMNS", "100")
    assert runner.invoke(app, ["init", "ws"]).exit_code == 0
    os.chdir(tmp_path / "ws")
    return tmp_path / "ws"


@pytest.fixture()
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeGrade:
    grade = FakeGrade()
    monkeypatch.setattr("judge.grade.grade", grade)  # grind run grades through judge.grade
    return grade


def _db(ws: Path) -> Progress:
    return Progress(ws / ".grind" / "progress.db")


# -- a bare `grind run` ------------------------------------------------------------------------

def test_bare_run_runs_the_exercise_last_run_in_the_workspace(ws: Path, fake: FakeGrade) -> None:
    """As rustlings does: after `grind run adam`, `grind run` alone grades adam again."""
    assert runner.invoke(app, ["run", "adam"]).exit_code == ExitStatus.FAILED
    result = runner.invoke(app, ["run", "--json"])
    assert result.exit_code == ExitStatus.FAILED and json.loads(result.stdout)["exercise"] == "adam"
    assert fake.graded == ["adam", "adam"]


def test_bare_run_in_an_exercise_folder_runs_that_exercise(ws: Path, fake: FakeGrade) -> None:
    os.chdir(ws / "lr-schedule")
    runner.invoke(app, ["run"])
    assert fake.graded == ["lr-schedule"]


def test_bare_run_with_nothing_run_yet_is_one_usage_line(ws: Path, fake: FakeGrade) -> None:
    result = runner.invoke(app, ["run"])
    assert result.exit_code == ExitStatus.USAGE and fake.graded == []
    assert result.output.count("\n") == 1 and "grind run NAME" in result.output and "Traceback" not in result.output


def test_current_exercise_outside_a_workspace_is_a_usage_error(tmp_path: Path) -> None:
    from judge.errors import UsageError

    with pytest.raises(UsageError, match="no workspace here"):
        current_exercise(None, "adam", ["adam"], cwd=tmp_path)


# -- scratch files ---------------------------------------------------------------------------

def test_a_scratch_file_is_graded_but_not_an_attempt(ws: Path, fake: FakeGrade) -> None:
    """`--file` on another file in a workspace leaves the exercise's progress and schedule alone
    and says so in one line; `--file` on the workspace's own file is an attempt as before."""
    scratch = ws / "try.py"
    scratch.write_text(PASSING, encoding="utf-8")
    result = runner.invoke(app, ["run", "clipping", "--file", str(scratch)])
    assert result.exit_code == ExitStatus.PASSED
    assert "Scratch run" in result.output and "not recorded" in result.output
    with _db(ws) as progress:
        assert progress.attempts("clipping") == [] and progress.card("clipping") is None
    own = learner_file(ws, Catalog().get("clipping"))
    own.write_text(PASSING, encoding="utf-8")
    assert runner.invoke(app, ["run", "clipping", "--file", str(own)]).exit_code == ExitStatus.PASSED
    with _db(ws) as progress:
        assert len(progress.attempts("clipping")) == 1 and progress.card("clipping") is not None


def test_is_scratch_only_inside_a_workspace(tmp_path: Path) -> None:
    clipping = Catalog().get("clipping")
    assert not is_scratch(tmp_path / "x.py", None, clipping)  # the per-user progress: --file is the learner's file
    assert is_scratch(tmp_path / "x.py", tmp_path, clipping)
    assert not is_scratch(learner_file(tmp_path, clipping), tmp_path, clipping)


# -- importable file names ---------------------------------------------------------------------

def test_workspace_files_are_importable_and_an_old_dashed_file_is_still_used(ws: Path, fake: FakeGrade) -> None:
    """init writes lr-schedule/lr_schedule.py (importable from a REPL); a workspace that still has
    only the dashed lr-schedule.py keeps grading and recording that file."""
    lr = Catalog().get("lr-schedule")
    new = ws / "lr-schedule" / "lr_schedule.py"
    assert new.is_file() and not (ws / "lr-schedule" / "lr-schedule.py").exists()
    assert learner_file(ws, lr) == new
    old = ws / "lr-schedule" / "lr-schedule.py"
    new.rename(old)
    old.write_text(PASSING, encoding="utf-8")
    assert learner_file(ws, lr) == old
    assert runner.invoke(app, ["run", "lr-schedule"]).exit_code == ExitStatus.PASSED
    with _db(ws) as progress:
        assert progress.passed("lr-schedule")
    assert runner.invoke(app, ["init", "."]).exit_code == 0  # topping up never writes a second file
    assert not new.exists() and old.read_text(encoding="utf-8") == PASSING


# -- the curriculum order ------------------------------------------------------------------------

def test_the_readme_table_lists_the_exercises_in_the_order_list_and_init_use() -> None:
    """One order everywhere: exercise.toml's `order` key, which `grind list` and `init` follow."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| exercise | what you write |"):]
    table = table[:table.index("\n\n")]
    in_readme = re.findall(r"^\| `([a-z0-9-]+)` \|", table, re.M)
    assert in_readme == Catalog().slugs()
    listed = [row["slug"] for row in json.loads(runner.invoke(app, ["list", "--json"]).stdout)]
    assert listed == in_readme


# -- issue 36, point 8 -------------------------------------------------------------------------

def test_run_all_grades_in_order_and_stops_at_the_first_failing_exercise(ws: Path, fake: FakeGrade) -> None:
    """Like `rustlings verify`: every exercise in curriculum order, a progress line each (plain
    mode), the first failing one's verdict and name, exit 0 only when all pass. Untouched stubs are
    graded but not counted as tries."""
    slugs = Catalog().slugs()
    for slug in slugs[:2]:
        learner_file(ws, Catalog().get(slug)).write_text(PASSING, encoding="utf-8")
    result = runner.invoke(app, ["run", "--all"])
    assert result.exit_code == ExitStatus.FAILED, result.output
    assert fake.graded == slugs[:3]  # stopped at the third
    assert f"graded 1/{len(slugs)} {slugs[0]}: passed" in result.output
    assert result.output.rstrip().splitlines()[-1].startswith(f"2 of {len(slugs)} pass in order; the first that "
                                                              f"does not is {slugs[2]} (failed)")
    with _db(ws) as progress:
        assert progress.passed(slugs[0]) and progress.attempts(slugs[2]) == []  # the untouched stub: no try
    for exercise in Catalog().all():
        learner_file(ws, exercise).write_text(PASSING, encoding="utf-8")
    result = runner.invoke(app, ["run", "--all"])
    assert result.exit_code == 0 and result.output.rstrip().endswith(f"All {len(slugs)} exercises pass.")
    assert runner.invoke(app, ["run", "clipping", "--all"]).exit_code == ExitStatus.USAGE


def test_run_all_says_which_exercises_after_the_stop_passed_before(tmp_path: Path) -> None:
    """A learner who passed exercises out of order read "1 of 21 pass in order" and nothing more:
    the summary also names those after the stop that the progress records as passed."""
    from types import SimpleNamespace

    from judge.workspace import init_workspace
    from judge.verify import all_summary, grade_all

    exercises = Catalog().all()
    slugs = [e.slug for e in exercises]
    init_workspace(tmp_path / "ws", exercises)
    done = {slugs[0], slugs[4], slugs[6]}

    def grade_one(exercise: Any, path: Path, record: bool) -> Any:
        status = Status.PASSED if exercise.slug in done else Status.FAILED
        return SimpleNamespace(verdict=verdict(status, 12 if status is Status.PASSED else 4, exercise=exercise.slug))

    progress = SimpleNamespace(passed=lambda slug: slug in done)
    result = grade_all(progress, tmp_path / "ws", exercises, grade_one=grade_one)  # type: ignore[arg-type]
    summary = all_summary(result)
    assert summary.startswith(f"1 of {len(slugs)} pass in order; the first that does not is {slugs[1]} (failed)")
    assert f"2 of them passed before: {slugs[4]}, {slugs[6]}" in summary, summary


def test_plain_lines_wrap_at_words_on_a_narrow_terminal() -> None:
    """A terminal breaks a long line where the column ends ("afte" / "r"): lines grind prints
    itself are wrapped at words to the terminal's width; a pipe gets them whole."""
    import io

    from judge.text import for_terminal

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    line = ("1 of 21 pass in order; the first that does not is loss-scaling (failed); 19 after it not graded. "
            "Next: grind run loss-scaling")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "80")
        rows = for_terminal(line, Tty()).splitlines()
    assert len(rows) == 2 and all(len(row) <= 80 for row in rows)
    assert " ".join(row.strip() for row in rows) == line  # broken between words only
    assert for_terminal(line, io.StringIO()) == line


def test_solution_diff_only_after_a_pass(ws: Path, fake: FakeGrade) -> None:
    """The diff reveals the reference, so it is refused before a pass, even with --force."""
    mine = learner_file(ws, Catalog().get("clipping"))
    refused = runner.invoke(app, ["solution", "clipping", "--diff", "--force"])
    assert refused.exit_code == ExitStatus.USAGE and "only after a pass" in refused.output
    mine.write_text(PASSING, encoding="utf-8")
    assert runner.invoke(app, ["run", "clipping"]).exit_code == 0
    shown = runner.invoke(app, ["solution", "clipping", "--diff"])
    assert shown.exit_code == 0
    assert shown.output.startswith(f"--- yours: {mine}\n+++ reference: clipping\n")
    assert "-# the answer" in shown.output and "+def clip_grad_norm_" in shown.output


def test_plain_mode_ends_with_a_file_line_for_editors_when_a_line_is_known(ws: Path) -> None:
    """A syntax error gives `FILE:LINE: error: MESSAGE`, the form problem matchers read (graded by
    the real judge: the line comes from Python's own parser, not from a fake)."""
    mine = learner_file(ws, Catalog().get("clipping"))
    mine.write_text("import torch\n\n\ndef clip_grad_norm_(parameters, max_norm:\n    pass\n", encoding="utf-8")
    result = runner.invoke(app, ["run", "clipping"])
    assert result.exit_code == ExitStatus.LEARNER_ERROR
    last = result.output.rstrip().splitlines()[-1]
    assert re.fullmatch(rf"{re.escape(str(mine))}:4: error: .+", last), last
    assert "file:line" not in runner.invoke(app, ["run", "clipping", "--json"]).stdout


def test_editor_line_none_for_a_pass_or_a_wrong_value() -> None:
    from judge.verify import editor_line

    assert editor_line(verdict(Status.PASSED, 12), "f.py") is None
    assert editor_line(verdict(Status.FAILED, 4), "f.py") is None  # a wrong value: no line at fault
    crashed = verdict(Status.FAILED, 4)
    crashed.learner_line, crashed.checks[4].message = 7, "ZeroDivisionError: division by zero\n  more"
    assert editor_line(crashed, "f.py") == "f.py:7: error: c4: ZeroDivisionError: division by zero more"


def test_progress_exports_as_csv_and_markdown(ws: Path, fake: FakeGrade) -> None:
    """csv reads back with the csv module (one row per exercise); md is a Markdown table."""
    learner_file(ws, Catalog().get("clipping")).write_text(PASSING, encoding="utf-8")
    runner.invoke(app, ["run", "clipping"])
    out = runner.invoke(app, ["progress", "--export", "csv"])
    assert out.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [r["exercise"] for r in rows] == Catalog().slugs()
    clipping = rows[0]
    assert clipping["status"] == "passed" and clipping["attempts"] == "1" and clipping["next_review"]
    md = runner.invoke(app, ["progress", "--export", "md"]).stdout.splitlines()
    assert md[0].startswith("| exercise | status | attempts |") and md[1].startswith("|---|")
    assert md[2].startswith("| clipping | passed | 1 |")
    bad = runner.invoke(app, ["progress", "--export", "xml"])
    assert bad.exit_code == ExitStatus.USAGE and "choose csv or md" in bad.output
