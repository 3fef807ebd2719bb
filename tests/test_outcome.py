"""``judge.outcome``: one grade, recorded once, with the notices that say what it meant. The
grader is faked (a verdict per source), so these run in milliseconds; one test grades for real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge.catalog import Catalog
from judge.errors import UsageError
from judge.models import Status, Verdict
from judge.outcome import REPEAT, TIME_UP, Outcome, grade_and_record, pick_file, record_outcome
from judge.practice import Sitting
from judge.progress import Progress

from .test_progress import verdict

T0 = 1_700_000_000.0
PASSING, FAILING, OTHER = "def f():\n    return 1\n", "def f():\n    return 0\n", "def f():\n    return 2\n"


@pytest.fixture
def clipping() -> Any:
    return Catalog().get("clipping")


class Fake:
    """A grader that passes PASSING and fails everything else, and remembers what it was given."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, exercise: Any, path: Path, *, source: str | None = None, **kwargs: Any) -> Verdict:
        self.calls.append({"path": path, "source": source, **kwargs})
        ok = source == PASSING
        return verdict(Status.PASSED if ok else Status.FAILED, 12 if ok else 4)


def _grade(progress: Progress, sitting: Sitting, source: str, at: float, **kwargs: Any) -> Outcome:
    sitting.path.write_text(source, encoding="utf-8")
    return grade_and_record(progress, sitting, grade=Fake(), clock=lambda: at, **kwargs)


def test_a_pass_is_recorded_once_and_an_identical_regrade_is_not_another_try(tmp_path: Path, clipping: Any) -> None:
    with Progress(tmp_path / "p.db") as progress:
        sitting = Sitting(clipping, tmp_path / "c.py", "run", None)
        first = _grade(progress, sitting, PASSING, T0)
        assert first.verdict.passed and first.stored and first.counted and first.pass_recorded
        assert first.review is not None and first.notices == [
            "Rated Good: passed first try. Comes back for review in 2 days ("
            + __import__("datetime").datetime.fromtimestamp(first.review.due).strftime("%a %d %b")
            + ") ('grind practice' asks for it then)."]
        assert not first.timed  # a first-try `grind run` pass: grind did not see the learner start
        again = _grade(progress, Sitting(clipping, tmp_path / "c.py", "run", None), PASSING, T0 + 60)
        assert again.repeat and not again.counted and not again.pass_recorded and again.review is None
        assert again.notices == [REPEAT]
        assert len(progress.attempts("clipping")) == 1 and len(progress.reviews("clipping")) == 1


def test_a_pass_after_a_try_is_timed_but_resaving_a_known_answer_is_not(tmp_path: Path, clipping: Any) -> None:
    """A pass following a failed try in the same sitting sets a time to pass (a best-time
    candidate); passing again with the file that passed before is counted but times nothing."""
    with Progress(tmp_path / "p.db") as progress:
        sitting = Sitting(clipping, tmp_path / "c.py", "watch", T0)
        assert _grade(progress, sitting, FAILING, T0 + 10).counted
        passed = _grade(progress, sitting, PASSING, T0 + 300)
        assert passed.pass_recorded and passed.timed and passed.recorded.attempt.time_to_pass == 300
        assert _grade(progress, sitting, OTHER, T0 + 400).counted
        resaved = _grade(progress, sitting, PASSING, T0 + 500)
        assert resaved.counted and resaved.pass_recorded and not resaved.timed
        assert len(progress.attempts("clipping")) == 4


def test_an_interview_passed_in_time_ends_with_its_time(tmp_path: Path, clipping: Any) -> None:
    with Progress(tmp_path / "p.db") as progress:
        interview = progress.start_interview("clipping", T0, T0 + 600)
        sitting = Sitting(clipping, tmp_path / "c.py", "interview", T0, fresh=True, interview=interview)
        outcome = _grade(progress, sitting, PASSING, T0 + 90)
        assert outcome.interview_passed and not outcome.interview_expired and outcome.lead == []
        assert outcome.notices[0] == "Interview passed in 1:30."
        assert outcome.recorded.attempt.mode == "interview"
        stored = progress.interview("clipping")
        assert stored is not None and (stored.ended_at, stored.outcome) == (T0 + 90, "passed")
        assert sitting.interview is not None and sitting.interview.outcome == "passed"


def test_an_interview_whose_clock_ran_out_is_closed_before_the_grade(tmp_path: Path, clipping: Any) -> None:
    """Graded after the deadline: the interview is closed as a timeout (said first, once), the
    card is reviewed as again, and the attempt counts as practice, not as an interview time."""
    with Progress(tmp_path / "p.db") as progress:
        interview = progress.start_interview("clipping", T0, T0 + 60)
        sitting = Sitting(clipping, tmp_path / "c.py", "run", None, interview=progress.interview("clipping"))
        assert interview.id == sitting.interview.id  # type: ignore[union-attr]
        late = _grade(progress, sitting, PASSING, T0 + 120)
        assert late.interview_expired and late.lead == [TIME_UP] and not late.interview_passed
        assert progress.running_interview("clipping", T0 + 120) is None
        assert progress.interview("clipping").outcome == "timeout"  # type: ignore[union-attr]
        assert progress.reviews("clipping")[0][1] == "again"
        assert late.recorded.attempt.mode == "run"
        later = _grade(progress, sitting, FAILING, T0 + 180)
        assert not later.interview_expired and later.lead == []


def test_a_grade_not_recorded_touches_nothing(tmp_path: Path, clipping: Any) -> None:
    """Outside a workspace (and for the stub watch grades on presenting): shown, never stored,
    and an interview left running is not closed from there."""
    with Progress(tmp_path / "p.db") as progress:
        progress.start_interview("clipping", T0, T0 + 60)
        sitting = Sitting(clipping, tmp_path / "c.py", "run", None, interview=progress.interview("clipping"))
        outcome = _grade(progress, sitting, PASSING, T0 + 120, record=False, lead=["first"])
        assert outcome.verdict.passed and not outcome.stored and not outcome.counted and not outcome.repeat
        assert outcome.lead == ["first"] and outcome.notices == [] and not outcome.interview_expired
        assert progress.attempts() == [] and progress.interview("clipping").ended_at is None  # type: ignore[union-attr]
        shown = record_outcome(progress, sitting, outcome.verdict, PASSING, started_at=T0, ended_at=T0 + 1,
                               record=False)
        assert not shown.stored and shown.recorded.attempt.exercise == "clipping" and progress.attempts() == []


def test_the_grader_gets_the_source_the_worker_and_speed_and_none_for_a_file_not_utf8(
        tmp_path: Path, clipping: Any) -> None:
    with Progress(tmp_path / "p.db") as progress:
        path = tmp_path / "c.py"
        path.write_text(PASSING, encoding="utf-8")
        fake, worker = Fake(), object()
        grade_and_record(progress, Sitting(clipping, path, "run", None), grade=fake, worker=worker, speed=True,
                         clock=lambda: T0)
        assert fake.calls == [{"path": path, "source": PASSING, "speed": True, "worker": worker}]
        path.write_bytes(b"x = '\xff'\n")
        grade_and_record(progress, Sitting(clipping, path, "run", None), grade=fake, clock=lambda: T0 + 5)
        assert fake.calls[-1] == {"path": path, "source": None, "speed": False}


def test_pick_file_workspace_file_stub_outside_and_refusals(tmp_path: Path, clipping: Any) -> None:
    given = tmp_path / "mine.py"
    given.write_text(PASSING)
    assert pick_file(clipping, None, given) == (given, True, [])
    path, recording, lead = pick_file(clipping, None, None)
    assert path == clipping.stub_path and not recording and lead[0].startswith("No grind workspace here")
    with pytest.raises(UsageError, match="is a directory"):
        pick_file(clipping, None, tmp_path)
    with pytest.raises(UsageError, match="no such file"):
        pick_file(clipping, None, tmp_path / "absent.py")
    with pytest.raises(UsageError, match="is missing: 'grind reset clipping'"):
        pick_file(clipping, tmp_path, None)


def test_grind_run_and_the_watch_loop_go_through_the_one_recorder(tmp_path: Path, monkeypatch: Any,
                                                                   clipping: Any) -> None:
    """No second copy of the recording: `grind run` calls grade_and_record, the watch (and
    practice) loop calls record_outcome."""
    import queue

    import judge.outcome
    import judge.watch
    from typer.testing import CliRunner

    from judge.cli import app

    calls: list[str] = []
    real_record = judge.outcome.record_outcome

    def spy(*args: Any, **kwargs: Any) -> Outcome:
        calls.append("record_outcome")
        return real_record(*args, **kwargs)

    monkeypatch.setattr(judge.outcome, "record_outcome", spy)
    monkeypatch.setattr(judge.watch, "record_outcome", spy)
    monkeypatch.setattr("judge.grade.grade", Fake())
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    given = tmp_path / "mine.py"
    given.write_text(PASSING)
    result = CliRunner().invoke(app, ["run", "clipping", "--file", str(given), "--json"])
    assert result.exit_code == 0, result.output
    assert calls == ["record_outcome"]

    class View:
        def __getattr__(self, name: str) -> Any:
            return lambda *a, **k: None

    events: queue.Queue[Any] = queue.Queue()
    with Progress(tmp_path / "w.db") as progress:
        loop = judge.watch.Loop(progress, lambda e, p, s: verdict(Status.PASSED, 12), View(), events,
                                listing=lambda: [], tick_s=0.01)
        events.put(judge.watch.Key("\n"))
        events.put(judge.watch.Key("q"))
        given.write_text(OTHER)
        assert loop.run(Sitting(clipping, given, "watch", T0)) == "quit"
        assert calls == ["record_outcome", "record_outcome"] and len(progress.attempts()) == 1
