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
    monkeypatch.setattr("judge.grade.grade", grade)
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
