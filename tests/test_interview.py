"""Interview mode: the stub blanked to signatures and docstrings, the clock, and hints and the
solution locked until a pass or the end of the time."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.catalog import Catalog
from judge.cli import app
from judge.interview import blank, start_or_resume
from judge.models import Status
from judge.practice import Sitting, record_verdict, time_up
from judge.progress import Progress
from judge.status import ExitStatus

from .test_progress import verdict

runner = CliRunner()
T0 = 1_750_000_000.0

SCAFFOLD = '''"""Scaffolded stub."""

import math  # noqa: F401 - kept with its comment
from typing import List

EPS = 1e-8


def _norm(xs: List[float]) -> float:
    """Helper the instructor half wrote."""
    total = 0.0
    for x in xs:
        total += x * x
    return math.sqrt(total)


@staticmethod
def clip(xs,
         max_norm=1.0):
    """Clip xs to max_norm.

    Returns the norm before clipping."""
    n = _norm(xs)
    return n


class Opt:
    """An optimizer."""

    lr: float = 0.1

    def __init__(self, params):
        self.params = list(params)

    def step(self):
        """One step."""
        for p in self.params:
            p -= self.lr


class Empty:
    x = 1


if __name__ == "__main__":
    print(clip([3.0, 4.0]))
'''


def test_blanking_keeps_imports_constants_signatures_and_docstrings_only() -> None:
    """Bodies become `raise NotImplementedError`; imports (with their comments), constants,
    decorators, multi-line signatures, docstrings and class attributes stay; demo code goes."""
    out = blank(SCAFFOLD)
    assert out.startswith('"""Scaffolded stub."""\n\nimport math  # noqa: F401 - kept with its comment\n')
    assert "EPS = 1e-8" in out and "lr: float = 0.1" in out and "    x = 1" in out
    assert "@staticmethod\ndef clip(xs,\n         max_norm=1.0):\n" in out
    assert '    """Clip xs to max_norm.\n\n    Returns the norm before clipping."""\n' \
           '    raise NotImplementedError("write clip")' in out
    assert 'raise NotImplementedError("write Opt.__init__")' in out
    assert 'raise NotImplementedError("write Opt.step")' in out
    assert 'raise NotImplementedError("write _norm")' in out
    for gone in ("total += x * x", "return n", "self.params = list", "p -= self.lr", "__main__"):
        assert gone not in out
    tree = ast.parse(out)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            body = node.body[1:] if ast.get_docstring(node) else node.body
            assert len(body) == 1 and isinstance(body[0], ast.Raise), node.name
    namespace: dict[str, object] = {}
    exec(compile(out, "blank.py", "exec"), namespace)  # noqa: S102 - our own fixture
    with pytest.raises(NotImplementedError, match="write Opt.__init__"):
        namespace["Opt"]([1.0])  # type: ignore[operator]
    assert blank(out) == out  # blanking a blank stub changes nothing


@pytest.mark.parametrize("slug", Catalog().slugs())
def test_every_shipped_stub_blanks_to_its_entry_points(slug: str) -> None:
    """Each exercise's interview file still defines every entry point, with nothing but a
    docstring and a raise in any function."""
    exercise = Catalog().get(slug)
    tree = ast.parse(blank(exercise.stub_path.read_text()))
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert set(exercise.entry) <= defined
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            assert isinstance(node.body[-1], ast.Raise) and len(node.body) <= 2, node.name


def test_the_clock_defaults_to_the_exercise_and_resumes(tmp_path: Path) -> None:
    """A new interview lasts the exercise's interview_minutes (or --minutes); starting again
    while it runs resumes the same clock instead of restarting it."""
    clipping = Catalog().get("clipping")
    with Progress(tmp_path / "p.db") as progress:
        first, new = start_or_resume(progress, clipping, T0)
        assert new and first.deadline - first.started_at == clipping.interview_minutes * 60
        again, new_again = start_or_resume(progress, clipping, T0 + 60, minutes=5)
        assert not new_again and again.id == first.id
        adam, _ = start_or_resume(progress, Catalog().get("adam"), T0, minutes=5)
        assert adam.deadline - adam.started_at == 300


def test_a_pass_in_time_records_the_time_to_pass_and_ends_the_interview(tmp_path: Path) -> None:
    """Passing before the deadline records an interview attempt timed from the interview's start,
    closes the interview as passed, and reviews the exercise."""
    clipping = Catalog().get("clipping")
    with Progress(tmp_path / "p.db") as progress:
        interview, _ = start_or_resume(progress, clipping, T0)
        sitting = Sitting(clipping, tmp_path / "c.py", "interview", T0, fresh=True, interview=interview)
        record_verdict(progress, sitting, verdict(), "v1", started_at=T0 + 100, ended_at=T0 + 102)
        recorded = record_verdict(progress, sitting, verdict(Status.PASSED, 12, 12, None), "v2",
                                  started_at=T0 + 400, ended_at=T0 + 402)
        assert recorded.interview_passed and recorded.attempt.mode == "interview"
        assert recorded.attempt.time_to_pass == 402 and sitting.time_to_pass == 402
        assert progress.interview("clipping").outcome == "passed"  # type: ignore[union-attr]
        assert progress.running_interview("clipping", T0 + 403) is None
        # fast (6.7 of 15 minutes), but after a failed attempt: Hard, and it says why (issue 36)
        assert recorded.review is not None and recorded.review.rating == "hard"
        assert recorded.review.reason == "rated Hard: 1 failed attempt"
        assert progress.overview(["clipping"], T0 + 500).exercises[0].best_interview_s == 402


def test_time_up_unlocks_and_reviews_again(tmp_path: Path) -> None:
    """When the clock runs out without a pass the interview closes once as a timeout, the
    exercise is rescheduled as a failed recall, and later attempts are ordinary ones."""
    clipping = Catalog().get("clipping")
    with Progress(tmp_path / "p.db") as progress:
        interview, _ = start_or_resume(progress, clipping, T0, minutes=1)
        sitting = Sitting(clipping, tmp_path / "c.py", "interview", T0, fresh=True, interview=interview)
        assert not time_up(progress, sitting, T0 + 59)
        assert time_up(progress, sitting, T0 + 61)
        assert not time_up(progress, sitting, T0 + 62)  # once
        assert progress.interview("clipping").outcome == "timeout"  # type: ignore[union-attr]
        assert [r[1] for r in progress.reviews("clipping")] == ["again"]
        late = record_verdict(progress, sitting, verdict(Status.PASSED, 12, 12, None), "v", started_at=T0 + 90,
                              ended_at=T0 + 92)
        assert late.attempt.mode == "practice" and not late.interview_passed
        assert progress.overview(["clipping"], T0 + 100).exercises[0].best_interview_s is None


def test_cli_interview_blanks_the_file_and_locks_hints_and_solution(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`grind run NAME --interview` backs up the learner's file and writes the blanked stub; while
    the clock runs, `grind hint` and `grind solution --force` refuse, naming the time left; once
    the interview is over they work again."""
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "user-state"))
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["init", "ws"]).exit_code == 0
    monkeypatch.chdir(tmp_path / "ws")
    mine = tmp_path / "ws" / "clipping" / "clipping.py"
    mine.write_text("# my earlier solution\n")
    started = runner.invoke(app, ["run", "clipping", "--interview", "--manual"], input="q\n")
    assert started.exit_code == 0, started.output
    assert "15 minutes on the clock" in started.output and "skipped" in started.output
    assert mine.read_text() == blank(Catalog().get("clipping").stub_path.read_text())
    backups = list((tmp_path / "ws" / ".grind" / "backups").glob("clipping-*.py"))
    assert [b.read_text() for b in backups] == ["# my earlier solution\n"]

    hint = runner.invoke(app, ["hint", "clipping"])
    assert hint.exit_code == ExitStatus.USAGE and "no hints until you pass or the time is up" in hint.output
    assert "left)" in hint.output and "Hint 1" not in hint.output
    solution = runner.invoke(app, ["solution", "clipping", "--force"])
    assert solution.exit_code == ExitStatus.USAGE and "def clip_grad_norm_" not in solution.output
    assert runner.invoke(app, ["hint", "adam"]).exit_code == 0  # only the interview's exercise is locked

    with Progress(tmp_path / "ws" / ".grind" / "progress.db") as progress:
        running = progress.interview("clipping")
        assert running is not None and running.running(running.started_at + 1)
        progress.finish_interview(running.id, running.deadline, "timeout")
    assert "Hint 1 of 5" in runner.invoke(app, ["hint", "clipping"]).output


def test_show_during_an_interview_prints_the_contract_and_no_hint(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """While an interview on adam runs, `grind show adam` still prints the statement (the
    contract and the worked example's numbers), but nothing of the hints: not where eps goes,
    not the bias correction, not the order of AdamW's decay."""
    from .test_exercises import RECIPE_MARKERS, one_line

    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "user-state"))
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["init", "ws"]).exit_code == 0
    monkeypatch.chdir(tmp_path / "ws")
    started = runner.invoke(app, ["run", "adam", "--interview", "--manual"], input="q\n")
    assert started.exit_code == 0, started.output
    assert runner.invoke(app, ["hint", "adam"]).exit_code == ExitStatus.USAGE  # the interview is running

    shown = runner.invoke(app, ["show", "adam"])
    assert shown.exit_code == 0, shown.output
    text = one_line(shown.output).lower()
    assert "worked_example_adamw" in text and "2.974013" in text  # the contract's example is there
    assert [m for m in RECIPE_MARKERS["adam"] if m.lower() in text] == []
    assert [h for h in Catalog().get("adam").hints if one_line(h).lower()[:60] in text] == []


def test_a_plain_practice_session_resumes_a_running_interview(tmp_path: Path) -> None:
    """Quitting an interview and starting a plain `grind practice` must not unlock its hints or
    wipe the file: the running interview is resumed with its clock."""
    from judge.practice import present
    from judge.workspace import init_workspace, learner_file

    clipping = Catalog().get("clipping")
    init_workspace(tmp_path / "ws", [clipping])
    with Progress(tmp_path / "p.db") as progress:
        first = present(progress, tmp_path / "ws", clipping, T0, interview=True)
        learner_file(tmp_path / "ws", clipping).write_text("# halfway through\n")
        again = present(progress, tmp_path / "ws", clipping, T0 + 60, interview=False)
        assert again.mode == "interview" and again.interview is not None
        assert again.interview.id == first.interview.id  # type: ignore[union-attr]
        assert learner_file(tmp_path / "ws", clipping).read_text() == "# halfway through\n"
        assert again.interview_running(T0 + 61)
