"""The watch loop: re-grading on save (with a fake grade function where the point is the loop,
and the real judge and real file events where the point is end to end), keys, no auto-advance,
the interview countdown, and a practice session through the CLI."""

from __future__ import annotations

import io
import queue
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from typer.testing import CliRunner

from judge.catalog import Catalog
from judge.cli import app
from judge.interview import start_or_resume
from judge.models import Exercise, Status, Verdict
from judge.practice import Sitting
from judge.progress import Progress
from judge.watch import Change, Key, Loop, file_events, key_events, real_grade, watch_session
from judge.workspace import init_workspace, learner_file

from .conftest import SUBMISSIONS
from .test_progress import verdict

runner = CliRunner()
WAIT_S = 20.0


class FakeView:
    """Records what the loop asks to show, and lets a test wait for it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.changed = threading.Condition()
        self.sittings: list[Sitting] = []
        self.standings: list[Any] = []

    def _add(self, name: str, value: Any = None) -> None:
        with self.changed:
            self.calls.append((name, value))
            self.changed.notify_all()

    def names(self) -> list[str]:
        return [name for name, _ in self.calls if name != "tick"]

    def values(self, name: str) -> list[Any]:
        return [value for n, value in self.calls if n == name]

    def wait_for(self, name: str, count: int = 1) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.values(name)) >= count, timeout=WAIT_S), self.names()

    def __enter__(self) -> FakeView:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def present(self, sitting: Sitting, manual: bool, position: Any) -> None:
        self.sittings.append(sitting)
        self._add("present", sitting.slug)

    def checking(self, sitting: Sitting) -> None:
        self._add("checking", sitting.slug)

    def verdict(self, sitting: Sitting, verdict: Verdict, recorded: Any, hints_shown: int | None,
                standing: Any = None) -> None:
        self.standings.append(standing)
        self._add("verdict", (verdict.status, recorded.attempt))

    def hint(self, sitting: Sitting, hint: Any) -> None:
        self._add("hint", hint.number if hint else None)

    def listing(self, rows: list[tuple[Exercise, str]], current: str, pick: bool = False) -> None:
        self._add("listing", current)

    def message(self, text: str) -> None:
        self._add("message", text)

    def tick(self, sitting: Sitting, now: float, checking: bool) -> None:
        self._add("tick", checking)


class FakeGrade:
    """A grade function that records the source it saw; while ``gate`` is clear it blocks, so a
    test can save the file again in the middle of a grade."""

    def __init__(self, status: Status = Status.FAILED) -> None:
        self.sources: list[str] = []
        self.gate = threading.Event()
        self.gate.set()
        self.status = status
        self.started = threading.Semaphore(0)

    def __call__(self, exercise: Exercise, path: Path, source: str) -> Verdict:
        self.sources.append(source)
        self.started.release()
        assert self.gate.wait(WAIT_S)
        passed = self.status is Status.PASSED
        return verdict(self.status, 12 if passed else 4, 12, None if passed else "per-tensor", exercise.slug)


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    init_workspace(tmp_path / "ws", Catalog().all())
    return tmp_path / "ws"


def _loop(ws: Path, grade: Callable[..., Verdict], manual: bool = False,
          clock: Callable[[], float] = time.time, listing: Any = None) -> tuple[Loop, FakeView, Progress]:
    """A loop on the workspace's database, and a second handle on it for the test's own reads
    (an sqlite connection belongs to the thread that opened it, as in grind itself)."""
    db = ws / ".grind" / "progress.db"
    view = FakeView()
    loop = Loop(Progress(db), grade, view, queue.Queue(), listing=listing or (lambda: []), manual=manual,
                clock=clock, tick_s=0.02)
    return loop, view, Progress(db)


def _in_thread(fn: Callable[[], Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            result["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    result["thread"] = thread
    return result


def _join(result: dict[str, Any]) -> Any:
    result["thread"].join(WAIT_S)
    assert not result["thread"].is_alive(), "the loop did not return"
    if "error" in result:
        raise result["error"]
    return result["value"]


def _sitting(ws: Path, slug: str = "clipping", mode: str = "watch") -> Sitting:
    exercise = Catalog().get(slug)
    return Sitting(exercise, learner_file(ws, exercise), mode, time.time())


def test_saves_during_a_grade_rerun_once_on_the_latest_content(ws: Path) -> None:
    """While a grade runs, three more saves do not start grades; when it finishes, exactly one
    re-run grades what the file holds then. "checking…" is shown for each grade."""
    grade = FakeGrade()
    loop, view, progress = _loop(ws, grade)
    sitting = _sitting(ws)
    running = _in_thread(lambda: loop.run(sitting))
    assert loop.ready.wait(WAIT_S)
    grade.gate.clear()
    sitting.path.write_text("v1\n")
    loop.events.put(Change(sitting.path))
    assert grade.started.acquire(timeout=WAIT_S)
    for text in ("v2\n", "v3\n", "v4\n"):
        sitting.path.write_text(text)
        loop.events.put(Change(sitting.path))
    time.sleep(0.2)
    assert grade.sources == ["v1\n"]  # no second grade while one runs
    grade.gate.set()
    view.wait_for("verdict", 2)
    loop.events.put(Key("q"))
    assert _join(running) == "quit"
    assert grade.sources == ["v1\n", "v4\n"]
    assert view.names().count("checking") == 2
    assert [a.mode for a in progress.attempts("clipping")] == ["watch", "watch"]
    assert True in view.values("tick")  # the status line said "checking…" while it ran


def test_unchanged_content_is_not_graded_again_but_enter_is(ws: Path) -> None:
    """A save that changes nothing (or grind's own write of the stub) does not grade; Enter does."""
    grade = FakeGrade()
    loop, view, _ = _loop(ws, grade)
    sitting = _sitting(ws)
    running = _in_thread(lambda: loop.run(sitting))
    assert loop.ready.wait(WAIT_S)
    loop.events.put(Change(sitting.path))  # the file is still the stub grind wrote
    loop.events.put(Change(ws / "adam" / "adam.py"))  # another exercise's file
    loop.events.put(Key("\n"))
    view.wait_for("verdict")
    loop.events.put(Key("q"))
    _join(running)
    assert len(grade.sources) == 1


def test_keys_hint_list_and_a_pass_never_moves_on_by_itself(ws: Path) -> None:
    """h reveals the next hint (and remembers it), l lists; after a pass the loop stays on the
    exercise until n; n or q pressed during a grade wait for it, so the attempt is kept."""
    grade = FakeGrade(Status.PASSED)
    loop, view, progress = _loop(ws, grade)
    sitting = _sitting(ws)
    running = _in_thread(lambda: loop.run(sitting))
    assert loop.ready.wait(WAIT_S)
    loop.events.put(Key("h"))
    loop.events.put(Key("h"))
    loop.events.put(Key("l"))
    view.wait_for("listing")
    assert view.values("hint") == [1, 2] and progress.hints_shown("clipping") == 2
    sitting.path.write_text("solution\n")
    loop.events.put(Change(sitting.path))
    view.wait_for("verdict")
    time.sleep(0.3)
    assert running["thread"].is_alive()  # passed, and still here
    grade.gate.clear()
    sitting.path.write_text("solution, tidied\n")  # an unchanged file re-graded is not another try
    loop.events.put(Key("\n"))
    assert grade.started.acquire(timeout=WAIT_S) and grade.started.acquire(timeout=WAIT_S)
    loop.events.put(Key("n"))
    time.sleep(0.1)
    assert running["thread"].is_alive()  # waits for the running grade
    grade.gate.set()
    assert _join(running) == "next"
    assert len(progress.attempts("clipping")) == 2
    assert sitting.review is not None and sitting.review.rating == "hard"  # passed with two hints


def test_watch_session_goes_to_the_next_exercise_only_on_n(ws: Path) -> None:
    """`grind watch` presents exercises in curriculum order and moves on only when asked; on the
    last one, n says so and stays."""
    loop, view, progress = _loop(ws, FakeGrade())
    exercises = Catalog().all()
    session = _in_thread(lambda: watch_session(loop, progress, ws, exercises, exercises[-2].slug))
    view.wait_for("verdict")  # each exercise is graded as it is presented
    loop.events.put(Key("n"))
    view.wait_for("verdict", 2)
    loop.events.put(Key("n"))
    view.wait_for("message")
    loop.events.put(Key("q"))
    _join(session)
    assert view.values("present") == [exercises[-2].slug, exercises[-1].slug]
    assert "last exercise" in view.values("message")[0]


def test_interview_countdown_locks_hints_until_time_is_up(ws: Path) -> None:
    """In an interview h is refused while the clock runs; when it runs out the loop says so,
    hints unlock, and the exercise is rescheduled as again."""
    now = [1_750_000_000.0]
    loop, view, progress = _loop(ws, FakeGrade(), clock=lambda: now[0])
    exercise = Catalog().get("clipping")
    interview, _ = start_or_resume(progress, exercise, now[0], minutes=1)
    progress.close()  # reopened below, in this thread, after the loop has finished
    sitting = Sitting(exercise, learner_file(ws, exercise), "interview", now[0], fresh=True, interview=interview)
    running = _in_thread(lambda: loop.run(sitting))
    assert loop.ready.wait(WAIT_S)
    loop.events.put(Key("h"))
    view.wait_for("message")
    assert "no hints until you pass or the time is up (1:00 left)" in view.values("message")[0]
    assert progress.hints_shown("clipping") == 0
    now[0] += 61
    view.wait_for("message", 2)
    assert "Time is up" in view.values("message")[1]
    loop.events.put(Key("h"))
    view.wait_for("hint")
    loop.events.put(Key("q"))
    _join(running)
    assert [r[1] for r in progress.reviews("clipping")] == ["again"]


def test_keys_from_a_pipe_one_per_line_and_end_of_input_quits() -> None:
    """Without a terminal each line is a key (an empty line is Enter), a number is its digits
    then Enter (to pick from the list), and the end of input is q."""
    events: queue.Queue[Any] = queue.Queue()
    with key_events(events, io.StringIO("h\n\nNext\n12\n")):
        keys = [events.get(timeout=WAIT_S).key for _ in range(7)]
    assert keys == ["h", "\n", "n", "1", "2", "\n", "q"]


def test_watch_reacts_to_a_real_file_edit(ws: Path) -> None:
    """End to end: watchfiles sees the learner save a correct solution, the real judge grades it,
    and the pass is recorded with its hash as a watch attempt."""
    view = FakeView()
    loop = Loop(Progress(ws / ".grind" / "progress.db"), real_grade, view, queue.Queue(), listing=lambda: [])
    sitting = _sitting(ws)
    solution = (SUBMISSIONS / "clipping" / "correct_loop.py").read_text()
    with file_events(ws, loop.events):
        running = _in_thread(lambda: loop.run(sitting))
        assert loop.ready.wait(WAIT_S)
        deadline = time.time() + WAIT_S
        edit = 0
        while not view.values("checking") and time.time() < deadline:
            # the watcher may still be starting: save again (new content each time) until it sees one
            edit += 1
            sitting.path.write_text(f"{solution}\n# edit {edit}\n")
            time.sleep(0.5)
        view.wait_for("verdict")
        loop.events.put(Key("q"))
        _join(running)
    ((status, attempt),) = view.values("verdict")
    assert status is Status.PASSED and attempt.mode == "watch" and attempt.checks_passed == attempt.checks_total
    stored = Progress(ws / ".grind" / "progress.db").attempts("clipping")
    assert len(stored) == 1 and stored[0].passed


def test_practice_session_end_to_end_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`grind practice --count 1 --manual` starts the due-or-new exercise from a fresh stub (backing
    up the learner's file), grades on Enter with the real judge, and on n ends with a summary
    saying when it comes back; an unknown topic is a usage error."""
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "user-state"))
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["init", "ws"]).exit_code == 0
    monkeypatch.chdir(tmp_path / "ws")
    first = Catalog().all()[0]
    mine = learner_file(tmp_path / "ws", first)
    mine.write_text("# half-done\n")
    result = runner.invoke(app, ["practice", "--count", "1", "--cards", "0", "--manual"], input="\nn\n")
    assert result.exit_code == 0, result.output
    assert "(1 of 1)" in result.output and "checking…" in result.output and "FAILED" in result.output
    assert "Session over: 0 of 1 passed." in result.output
    summary = result.output.split("Session over")[1]
    assert first.slug in summary and "not passed" in summary and "again" in summary and "tomorrow" in summary
    assert "NotImplementedError" in mine.read_text()
    assert any(b.read_text() == "# half-done\n" for b in (tmp_path / "ws" / ".grind" / "backups").iterdir())
    with Progress(tmp_path / "ws" / ".grind" / "progress.db") as progress:
        (attempt,) = progress.attempts(first.slug)
        assert attempt.mode == "practice" and attempt.verdict in ("failed", "error")
        assert [r[1] for r in progress.reviews(first.slug)] == ["again"]
    bad = runner.invoke(app, ["practice", "--topic", "knitting"])
    assert bad.exit_code == 2 and "No exercises with topic 'knitting'" in bad.output


def _listing(ws: Path) -> Callable[[], list[tuple[Exercise, str]]]:
    def rows() -> list[tuple[Exercise, str]]:
        with Progress(ws / ".grind" / "progress.db") as progress:
            return [(e, progress.status(e.slug)) for e in Catalog().all()]
    return rows


def test_watch_grades_the_file_once_when_it_starts_and_says_how_many_passed(ws: Path) -> None:
    """No save is needed for the first verdict: the learner's file is graded as it is presented
    (and recorded); the untouched stub is graded too, but shown only, not a try. Each verdict
    comes with "x of N passed"."""
    grade = FakeGrade(Status.PASSED)
    loop, view, progress = _loop(ws, grade, listing=_listing(ws))
    exercises = Catalog().all()
    learner_file(ws, exercises[0]).write_text("my work\n")
    session = _in_thread(lambda: watch_session(loop, loop.progress, ws, exercises, exercises[0].slug))
    view.wait_for("verdict")
    loop.events.put(Key("n"))
    view.wait_for("verdict", 2)  # the next exercise, still the stub grind wrote
    loop.events.put(Key("q"))
    _join(session)
    stub = exercises[1].stub_path.read_text(encoding="utf-8")
    assert grade.sources == ["my work\n", stub]
    assert [a.mode for a in progress.attempts(exercises[0].slug)] == ["watch"]
    assert progress.attempts(exercises[1].slug) == []
    assert view.standings == [(1, len(exercises)), (1, len(exercises))]


def test_l_numbers_the_exercises_and_a_number_then_enter_picks_one(ws: Path) -> None:
    """In watch, l lists the exercises numbered; a number and Enter switches to that exercise
    (graded at once); a number out of range says so and stays."""
    grade = FakeGrade()
    loop, view, progress = _loop(ws, grade, listing=_listing(ws))
    exercises = Catalog().all()
    session = _in_thread(lambda: watch_session(loop, loop.progress, ws, exercises, exercises[0].slug))
    view.wait_for("verdict")
    for key in ("l", "9", "9", "\n"):
        loop.events.put(Key(key))
    view.wait_for("message")
    assert "No exercise 99" in view.values("message")[0]
    for key in ("3", "\n"):
        loop.events.put(Key(key))
    view.wait_for("present", 2)
    view.wait_for("verdict", 2)
    loop.events.put(Key("q"))
    _join(session)
    assert view.values("listing") == [exercises[0].slug]
    assert view.values("present") == [exercises[0].slug, exercises[2].slug]


def test_a_leftover_interview_clock_does_not_turn_watch_into_an_interview(ws: Path) -> None:
    """A plain `grind watch` on an exercise with an interview left open is plain practice (no
    clock, attempts recorded as watch); one line says the interview is open and how to resume
    or drop it. `grind reset` drops it."""
    loop, view, progress = _loop(ws, FakeGrade(), listing=_listing(ws))
    exercise = Catalog().get("clipping")
    start_or_resume(progress, exercise, time.time(), minutes=30)
    progress.close()  # reopened below, in this thread, after the session has finished
    learner_file(ws, exercise).write_text("from memory\n")
    session = _in_thread(lambda: watch_session(loop, loop.progress, ws, Catalog().all(), "clipping"))
    view.wait_for("verdict")
    loop.events.put(Key("q"))
    _join(session)
    (sitting,) = view.sittings
    assert sitting.interview is None and sitting.mode == "watch"
    (note,) = sitting.notes
    assert "interview on clipping was left open" in note
    assert "'grind run clipping --interview' resumes it" in note and "'grind reset clipping' drops it" in note
    assert [a.mode for a in progress.attempts("clipping")] == ["watch"]
    assert progress.running_interview("clipping") is not None  # not ended by watch


def test_reset_drops_an_interview_left_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "user-state"))
    init_workspace(tmp_path / "ws", Catalog().all())
    monkeypatch.chdir(tmp_path / "ws")
    with Progress(tmp_path / "ws" / ".grind" / "progress.db") as progress:
        start_or_resume(progress, Catalog().get("clipping"), time.time(), minutes=30)
    result = runner.invoke(app, ["reset", "clipping", "--yes"])
    assert result.exit_code == 0, result.output
    assert "Dropped the interview that was open on clipping" in result.output
    with Progress(tmp_path / "ws" / ".grind" / "progress.db") as progress:
        assert progress.running_interview("clipping") is None


def test_watch_view_lists_the_keys_once_and_says_press_h(ws: Path) -> None:
    """On a terminal the keys are in the status line only, not also printed when an exercise
    is presented; without one they are printed once. A failed verdict in watch offers h, not
    `grind hint`; "x of N passed" follows it."""
    from rich.console import Console

    from judge.practice import Recorded
    from judge.render import WatchView
    from judge.views.screens import KEYS_HELP

    sitting = _sitting(ws)
    out = io.StringIO()
    with WatchView(Console(file=out, force_terminal=True, width=200)) as view:
        view.present(sitting, False, None)
        assert KEYS_HELP not in out.getvalue()
    out = io.StringIO()
    with WatchView(Console(file=out, width=200)) as view:
        view.present(sitting, False, None)
        failed = verdict(Status.FAILED, 4, 12, None, "clipping")
        view.verdict(sitting, failed, Recorded(None, None), 0, (2, 6))  # type: ignore[arg-type]
    text = out.getvalue()
    assert text.count(KEYS_HELP) == 1
    assert "Press h for hint 1 of" in text and "grind hint" not in text
    assert "Exercises: 2 of 6 passed." in text


def _save_until_seen(ws: Path, events: queue.Queue[Any]) -> bool:
    """Save the learner's file (new content each time) until the watcher reports it."""
    target = learner_file(ws, Catalog().get("clipping"))
    deadline = time.time() + WAIT_S
    edit = 0
    while time.time() < deadline:
        edit += 1
        target.write_text(f"x = {edit}\n")
        try:
            change = events.get(timeout=0.5)
        except queue.Empty:
            continue
        if isinstance(change, Change) and change.path.name == target.name:
            return True
    return False


def test_watch_still_sees_saves_when_no_inotify_watcher_can_be_made(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watcher made while every inotify instance of the user is taken (by a submission running
    as that user, say) fails with EMFILE. That ended the watching thread: watch mode went on
    and never saw the learner's next save. It falls back to polling now."""
    import watchfiles

    real = watchfiles.watch
    refused = []

    def no_inotify(*args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("force_polling"):
            refused.append(True)
            raise watchfiles.main.WatchfilesRustInternalError(
                "Error creating recommended watcher: Too many open files (os error 24)")
        return real(*args, **kwargs)

    monkeypatch.setattr(watchfiles, "watch", no_inotify)
    events: queue.Queue[Any] = queue.Queue()
    with file_events(ws, events):
        assert _save_until_seen(ws, events), "the save was never seen"
    assert refused


def test_a_submission_holding_every_inotify_instance_does_not_blind_watch_mode(ws: Path) -> None:
    """The attack for real: a submission takes every inotify instance and thousands of watches of
    the user it runs as (grind's own user at the laptop level), and holds them while it runs. A
    watch session started meanwhile, and one already running, both see the learner's next save;
    the submission's verdict is its own (a wrong answer, stopped at the time limit)."""
    import ctypes

    from judge.grade import grade
    from judge.worker.sandbox import Limits

    from .conftest import ROOT

    hostile = ROOT / "tests" / "hostile_warm" / "holds_every_inotify_instance.py"
    exercise = Catalog().get("clipping")
    before: queue.Queue[Any] = queue.Queue()
    with file_events(ws, before):
        assert _save_until_seen(ws, before)
        running = _in_thread(lambda: grade(exercise, hostile, limits=Limits(wall_s=12)))
        libc = ctypes.CDLL(None, use_errno=True)
        deadline = time.time() + 8  # until this user's instances run out (never, where the child is another user)
        while time.time() < deadline:
            fd = libc.inotify_init1(0)
            if fd < 0:
                break
            import os

            os.close(fd)
            time.sleep(0.05)
        during: queue.Queue[Any] = queue.Queue()
        with file_events(ws, during):
            assert _save_until_seen(ws, during), "a watch started during the attack never saw the save"
        assert _save_until_seen(ws, before), "the watch already running stopped seeing saves"
        verdict = _join(running)
    # stdout and stderr in the message: CI once saw this run end CRASHED (exit 1, no result) under
    # a full suite's load, and the cause could not be read from the verdict's message alone
    assert verdict.status is Status.TIMEOUT, (verdict.message, verdict.stdout[-2000:], verdict.stderr[-2000:])
    assert "holding" in verdict.stdout and "inotify instances" in verdict.stdout, verdict.stdout


# -- issue 36, point 6: the loop's small things --------------------------------------------------

def test_practice_grades_the_fresh_file_when_it_presents_it_without_counting_a_try(ws: Path) -> None:
    """As watch does: the first verdict of a practice sitting needs no save, and grading the file
    grind just wrote is not an attempt."""
    from judge.watch import practice_session

    grade = FakeGrade()
    loop, view, progress = _loop(ws, grade)
    loop.events.put(Key("q"))
    done = _in_thread(lambda: practice_session(loop, loop.progress, ws, [Catalog().get("clipping")],
                                               interview=False))
    view.wait_for("verdict")
    _join(done)
    assert len(grade.sources) == 1 and view.names()[:2] == ["present", "checking"] and "verdict" in view.names()
    assert progress.attempts("clipping") == []


def test_q_in_watch_leaves_with_a_one_line_summary(ws: Path) -> None:
    """`q` ends watch with the attempts made and whether each exercise passed."""
    from judge.watch import watch_summary

    clipping, adam = _sitting(ws), _sitting(ws, "adam")
    clipping.attempts, clipping.passed_at = 3, time.time()
    adam.attempts = 1
    assert watch_summary([clipping, adam]) == "Left watch: clipping 3 attempts, passed; adam 1 attempt, not passed."
    assert watch_summary([_sitting(ws)]) == "Left watch: no attempts recorded."
    runner.invoke(app, ["init", str(ws)])
    import os

    here = os.getcwd()
    os.chdir(ws)
    try:
        result = runner.invoke(app, ["watch", "clipping", "--manual"], input="q\n")
    finally:
        os.chdir(here)
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().splitlines()[-1] == "Left watch: no attempts recorded."


def test_interview_keys_do_not_offer_a_hint_and_a_pass_has_one_footer(ws: Path) -> None:
    """While an interview refuses hints, the keys shown leave `h hint` out; after a pass the
    verdict's "Well done" and the loop's "n: next" are one line, not two stacked footers."""
    from rich.console import Console

    from judge.practice import Recorded
    from judge.render import WatchView

    with Progress(ws / ".grind" / "progress.db") as progress:
        interview, _ = start_or_resume(progress, Catalog().get("clipping"), time.time())
    sitting = _sitting(ws, mode="interview")
    sitting.interview = interview
    out = io.StringIO()
    with WatchView(Console(file=out, width=200)) as view:
        view.present(sitting, False, None)
        assert "Keys: n next · l list · q quit" in out.getvalue() and "h hint" not in out.getvalue()
        passed = verdict(Status.PASSED, 12, 12, None, "clipping")
        view.verdict(_sitting(ws), passed, Recorded(None, None), 0, (1, 6))  # type: ignore[arg-type]
    text = out.getvalue()
    assert text.count("Well done") == 1 and text.count("grind solution clipping") == 1
    assert "n: next exercise" in text


def test_the_first_grade_that_computes_the_reference_says_so(ws: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """No silent "checking…" while the reference is computed once: the loop says so first, with
    the time it took last on this machine when known."""
    from judge import cache

    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "fresh-cache"))
    clipping = Catalog().get("clipping")
    assert "up to" in (cache.reference_note(clipping) or "")
    cache.record_reference_seconds("clipping", 12.4)
    assert cache.reference_note(clipping) == "Computing clipping's reference once (about 12 s); later runs reuse it."
    grade = FakeGrade()
    db = ws / ".grind" / "progress.db"
    view = FakeView()
    loop = Loop(Progress(db), grade, view, queue.Queue(), listing=lambda: [], tick_s=0.02, note=cache.reference_note)
    loop.events.put(Key("\n"))
    loop.events.put(Key("q"))
    done = _in_thread(lambda: loop.run(_sitting(ws)))
    view.wait_for("verdict")
    _join(done)
    assert view.names()[1:3] == ["message", "checking"] and "about 12 s" in view.values("message")[0]


def test_the_watch_listing_is_parsed_again_when_a_manifest_changes(course: Path) -> None:
    """`grind watch` keeps the parsed catalog between verdicts (its "x of N passed" line) and
    parses it again when an exercise's manifest is edited, added or removed."""
    import os
    import shutil

    from judge.commands import manifest_stamps as _manifest_stamps

    exercises = course / "exercises"
    before = _manifest_stamps(exercises)
    assert before == _manifest_stamps(exercises) and [name for name, *_ in before] == ["clipping"]
    manifest = exercises / "clipping" / "exercise.toml"
    manifest.write_text(manifest.read_text() + "\n")
    os.utime(manifest, ns=(0, before[0][1] + 1))
    edited = _manifest_stamps(exercises)
    assert edited != before
    shutil.copytree(exercises / "clipping", exercises / "clipping-copy")
    assert [name for name, *_ in _manifest_stamps(exercises)] == ["clipping", "clipping-copy"]
