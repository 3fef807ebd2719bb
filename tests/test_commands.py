"""What the commands decide, tested without typer: judge/commands.py (the learner's) and
judge/classroom.py (the instructor's) are the core under judge/cli/, so each rule is a call here
and a line of output there (tests/test_cli.py checks the lines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge import classroom, commands
from judge.catalog import Catalog
from judge.errors import UsageError
from judge.progress import Progress


@pytest.fixture
def clipping():  # type: ignore[no-untyped-def]
    return Catalog().get("clipping")


def test_minutes_without_an_interview_is_refused() -> None:
    with pytest.raises(UsageError, match="--minutes sets an interview's length"):
        commands.check_interview_options(False, 5.0, None, False, False)


@pytest.mark.parametrize("file, as_json, repro", [(Path("a.py"), False, False), (None, True, False),
                                                   (None, False, True)])
def test_an_interview_refuses_another_file_json_and_repro(file: Path | None, as_json: bool, repro: bool) -> None:
    with pytest.raises(UsageError, match="--interview works on the workspace's file"):
        commands.check_interview_options(True, None, file, as_json, repro)


def test_run_all_refuses_a_name() -> None:
    with pytest.raises(UsageError, match="--all grades every exercise's workspace file"):
        commands.refuse_with_all("clipping", None, False, False, False, None)
    commands.refuse_with_all(None, None, False, False, False, None)  # --all alone is fine


def test_each_hint_call_reveals_the_next_and_the_last_one_repeats(tmp_path: Path, clipping) -> None:  # type: ignore[no-untyped-def]
    with Progress(tmp_path / "p.db") as state:
        total = len(clipping.hints)
        seen = [commands.hint_screens(state, clipping, show_all=False)[0] for _ in range(total)]
        assert [s.title for s in seen] == [f"Hint {i} of {total}" for i in range(1, total + 1)]
        again = commands.hint_screens(state, clipping, show_all=False)
        assert again[0].title.endswith("(the last one)") and "grind solution clipping" in again[1]
        assert len(commands.hint_screens(state, clipping, show_all=True)) == total


def test_showing_all_hints_before_any_says_how_to_get_the_first(tmp_path: Path, clipping) -> None:  # type: ignore[no-untyped-def]
    with Progress(tmp_path / "p.db") as state:
        assert commands.hint_screens(state, clipping, show_all=True) == [
            "No hints revealed yet. 'grind hint clipping' shows the first."]


def test_reset_needs_one_name_or_all_but_not_both() -> None:
    with pytest.raises(UsageError, match="Which exercise"):
        commands.check_reset_args(None, False)
    with pytest.raises(UsageError, match="not both"):
        commands.check_reset_args("clipping", True)


def test_watch_starts_with_the_first_exercise_not_passed(tmp_path: Path) -> None:
    exercises = Catalog().load_all()[0][:3]
    with Progress(tmp_path / "p.db") as state:
        assert commands.first_to_watch(state, exercises, None) == exercises[0].slug
        assert commands.first_to_watch(state, exercises, exercises[2]) == exercises[2].slug
        with pytest.raises(UsageError, match="No exercises"):
            commands.first_to_watch(state, [], None)


def test_manifest_stamps_of_a_missing_folder_are_none(tmp_path: Path) -> None:
    assert commands.manifest_stamps(tmp_path / "nowhere") == []
    (tmp_path / "broken").mkdir()
    assert commands.manifest_stamps(tmp_path) == [("broken", -1, -1)]


def test_the_daemon_status_says_why_none_can_start() -> None:
    assert commands.daemon_status_text(None, "no unix sockets") == (
        "No grind daemon is running and none can start (no unix sockets), so grind run grades cold.")
    assert commands.daemon_status_json(None, None, Path("/run/g.sock")) == {
        "running": False, "can_start": True, "why_not": None, "socket": "/run/g.sock"}


def test_the_grade_note_names_every_output_and_the_two_always_kept(tmp_path: Path) -> None:
    written = [tmp_path / "results.csv", tmp_path / "gradescope" / "ann.json", tmp_path / "gradescope" / "bo.json"]
    note = classroom.written_note(written, tmp_path)
    assert note.startswith(f"Wrote under {tmp_path}: results.csv, gradescope/ (2 student files);")
    assert "graded/" in note and "grade.log" in note


def test_a_scheduler_is_for_the_dask_executor_only() -> None:
    with pytest.raises(UsageError, match="--scheduler is for --executor dask"):
        classroom.grade_executor("local", "tcp://h:8786", False)
    with pytest.raises(UsageError, match="choose local or dask"):
        classroom.grade_executor("ray", None, False)
    assert classroom.grade_executor("local", None, False) is None


def test_limits_are_the_exercises_unless_overridden(clipping) -> None:  # type: ignore[no-untyped-def]
    assert classroom.limits(clipping, None, None) is None
    assert classroom.limits(clipping, 30.0, None).memory_mb == clipping.memory_mb
    with pytest.raises(UsageError, match="at least 512"):
        classroom.limits(clipping, None, 100)


def test_outputs_and_regrade_statuses_are_checked_before_grading() -> None:
    with pytest.raises(UsageError, match="unknown format 'pdf'"):
        classroom.check_outputs(["csv", "pdf"], [])
    with pytest.raises(UsageError, match="--regrade 'late'"):
        classroom.check_outputs(["csv"], ["late"])


def test_validate_wants_a_name_or_all() -> None:
    with pytest.raises(UsageError, match="give one exercise name, --all, or --quiz"):
        classroom.validate_exercises(Catalog(), "clipping", True, None)
