"""The watch loop: re-grade on save, keys for hint / next / list / quit, an interview clock.

Everything arrives as an event on one queue: a file change (from ``watchfiles``), a key (from
the terminal), a finished grade (from the grading thread), or nothing for a moment (a tick,
which moves the countdown). One thread, the caller's, handles them in order, so the loop
itself has no locks, and a test drives it by putting events on the queue, with a fake grade
function and a view that records what it was asked to show.

Rules the loop keeps:

- a save while a grade is running does not start a second one; when the running grade
  finishes, it re-runs once, on whatever the file holds then (ten saves, one re-run);
- a save that leaves the file's content unchanged (and the file grind itself just wrote when
  presenting the exercise) is not graded again; Enter always grades;
- ``n`` and ``q`` pressed while a grade runs take effect when it has finished (and the re-run
  a save or Enter owed then), so the attempt is recorded and shown, never lost;
- a pass never moves on by itself: only ``n`` does (or picking another exercise: a number
  from the ``l`` list, then Enter);
- ``grind watch`` grades the file once when it presents an exercise, so the first verdict
  needs no save; the untouched stub graded then is shown but not recorded as a try.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from judge import practice
from judge.interview import locked_message
from judge.models import Exercise, Verdict
from judge.outcome import record_outcome
from judge.practice import Hint, Recorded, Sitting
from judge.progress import Interview, Progress, source_hash
from judge.text import read_source

GradeFn = Callable[[Exercise, Path, str], Verdict]
TICK_S = 0.25


@dataclass(frozen=True)
class Change:
    path: Path


@dataclass(frozen=True)
class Key:
    key: str  # one lower-case character; "\n" for Enter


@dataclass(frozen=True)
class Graded:
    token: int
    source: str
    started_at: float
    ended_at: float
    verdict: Verdict | None
    error: BaseException | None = None
    record: bool = True  # False for the untouched stub graded when an exercise is presented


class Leave(str, Enum):
    """How a sitting ends (a str, so "quit" compares equal to Leave.QUIT)."""

    NEXT = "next"
    QUIT = "quit"
    PICK = "pick"  # an exercise chosen from the list: Loop.picked


class Owed(Enum):
    """A re-run owed once the running grade finishes: a save's (skipped if the file is as
    graded) or Enter's (always)."""

    AUTO = "auto"
    FORCE = "force"


@dataclass
class _Sitting:
    """The loop's state for one sitting."""

    sitting: Sitting
    target: Path  # the learner's file, resolved: the one a Change must name
    last_hash: str | None  # the content last graded (or presented)
    pick: bool  # a number and Enter picks an exercise from the list
    running: int | None = None  # the token of the grade running now
    owed: Owed | None = None
    deferred: Leave | None = None  # n, q or a pick pressed while grading
    number: str = ""  # digits typed so far


class View(Protocol):
    """What the loop shows. ``judge.render.WatchView`` draws it on a terminal or as plain lines."""

    def present(self, sitting: Sitting, manual: bool, position: tuple[int, int] | None) -> None: ...
    def checking(self, sitting: Sitting) -> None: ...
    def verdict(self, sitting: Sitting, verdict: Verdict, recorded: Recorded, hints_shown: int | None,
                standing: tuple[int, int] | None = None) -> None: ...
    def hint(self, sitting: Sitting, hint: Hint | None) -> None: ...
    def listing(self, rows: list[tuple[Exercise, str]], current: str, pick: bool = False) -> None: ...
    def message(self, text: str) -> None: ...
    def tick(self, sitting: Sitting, now: float, checking: bool) -> None: ...


class Loop:
    """Runs sittings until the learner presses ``n`` or ``q``."""

    def __init__(self, progress: Progress, grade: GradeFn, view: View, events: queue.Queue[Any], *,
                 listing: Callable[[], list[tuple[Exercise, str]]], manual: bool = False,
                 clock: Callable[[], float] = time.time, tick_s: float = TICK_S,
                 note: Callable[[Exercise], str | None] | None = None) -> None:
        self.progress, self.grade, self.view, self.events = progress, grade, view, events
        self.note = note  # what to say before a grade that first computes the reference (or None)
        self.listing, self.manual, self.clock, self.tick_s = listing, manual, clock, tick_s
        self._token = 0
        self.grades_started = 0
        self.ready = threading.Event()  # set once run() has read the file's starting content
        self.picked: str | None = None  # the exercise chosen from the list when run() returns "pick"

    def _resolved(self, path: Path) -> Path:
        try:
            return path.resolve()
        except OSError:
            return path

    def standing(self) -> tuple[int, int]:
        """(exercises passed, exercises): "x of N passed"."""
        rows = self.listing()
        return sum(1 for _, status in rows if status == "passed"), len(rows)

    def run(self, sitting: Sitting, position: tuple[int, int] | None = None, present: bool = True,
            grade_first: bool = False, pick: bool = False) -> Leave:
        """Handle events for one sitting; return "next", "quit" or (with ``pick``) "pick", with
        the chosen exercise in ``self.picked``. ``grade_first`` grades the file as it is now.

        As rustlings' watch does: one state, and a loop that maps each event to a transition
        (``_on_change``, ``_on_graded``, ``_on_key``), each saying whether the sitting ends."""
        if present:
            self.view.present(sitting, self.manual, position)
        # what grind wrote, or what is already graded: from here on every save is compared with it
        state = _Sitting(sitting, self._resolved(sitting.path), self._current_hash(sitting.path), pick)
        self.ready.set()
        self.picked = None
        if grade_first:
            state.running = self._start(state, force=True, first=True)
        while True:
            try:
                event = self.events.get(timeout=self.tick_s)
            except queue.Empty:
                event = None
            now = self.clock()
            if practice.time_up(self.progress, sitting, now):
                self.view.message("Time is up. Hints and the solution are unlocked; the exercise comes back "
                                  "tomorrow. Keep going if you like: the attempt still counts.")
            leave = self._on_event(state, event, now)
            if leave is not None:
                return leave
            self.view.tick(sitting, self.clock(), state.running is not None)

    def _on_event(self, state: _Sitting, event: Any, now: float) -> Leave | None:
        if isinstance(event, Change) and self._resolved(event.path) == state.target:
            self._on_change(state)
        elif isinstance(event, Graded) and event.token == state.running:
            return self._on_graded(state, event)
        elif isinstance(event, Key):
            return self._on_key(state, event.key, now)
        return None  # a tick, or a file or grade of no concern to this sitting

    def _on_change(self, state: _Sitting) -> None:
        """A save: graded now, or once after the running grade (ten saves, one re-run)."""
        if state.running is not None:
            state.owed = state.owed or Owed.AUTO
        else:
            state.running = self._start(state, force=False)

    def _on_graded(self, state: _Sitting, event: Graded) -> Leave | None:
        """The running grade finished: record and show it, run what is owed, then leave if asked."""
        sitting = state.sitting
        state.running = None
        if event.error is not None:
            raise event.error
        assert event.verdict is not None
        # the untouched stub graded on presenting an exercise is shown, not a try
        recorded = record_outcome(self.progress, sitting, event.verdict, event.source,
                                  started_at=event.started_at, ended_at=event.ended_at,
                                  record=event.record).recorded
        locked = sitting.interview_running(event.ended_at) or \
            self.progress.running_interview(sitting.slug, event.ended_at) is not None
        shown = None if locked else self.progress.hints_shown(sitting.slug)
        self.view.verdict(sitting, event.verdict, recorded, shown, self.standing())
        if state.owed is not None:  # a save or Enter owed: graded before n or q takes effect
            force, state.owed = state.owed is Owed.FORCE, None
            state.running = self._start(state, force=force)
        if state.deferred is not None and state.running is None:
            return state.deferred
        return None

    def _on_key(self, state: _Sitting, key: str, now: float) -> Leave | None:
        typed, state.number = state.number, ""
        if state.pick and key.isdigit():
            state.number = typed + key
        elif state.pick and key == "\n" and typed:
            return self._on_pick(state, int(typed))
        elif key in ("\n", "r"):
            if state.running is not None:
                state.owed = Owed.FORCE
            else:
                state.running = self._start(state, force=True)
        elif key == "h":
            self._on_hint(state.sitting, now)
        elif key == "l":
            self.view.listing(self.listing(), state.sitting.slug, state.pick)
        elif key in ("n", "q"):
            return self._leave(state, Leave.NEXT if key == "n" else Leave.QUIT)
        return None

    def _on_pick(self, state: _Sitting, number: int) -> Leave | None:
        """A number from the list, then Enter: that exercise next."""
        rows = self.listing()
        if not 1 <= number <= len(rows):
            self.view.message(f"No exercise {number}: type a number from 1 to {len(rows)}, then Enter.")
            return None
        self.picked = rows[number - 1][0].slug
        return self._leave(state, Leave.PICK)

    def _leave(self, state: _Sitting, leave: Leave) -> Leave | None:
        """Leave now, or (a grade running) once it and any re-run owed have finished."""
        if state.running is None:
            return leave
        if state.deferred is None:
            self.view.message("Finishing the running check first…")
        state.deferred = leave
        return None

    def _on_hint(self, sitting: Sitting, now: float) -> None:
        # the database too: an interview may have been started from another terminal
        locked = sitting.interview if sitting.interview_running(now) else \
            self.progress.running_interview(sitting.slug, now)
        if locked is not None:
            self.view.message(locked_message(locked, now, "hints"))
        else:
            self.view.hint(sitting, practice.next_hint(self.progress, sitting.exercise))

    def _start(self, state: _Sitting, force: bool, first: bool = False) -> int | None:
        """Start grading the file in a thread (its token), unless it is missing, unreadable, or
        (without ``force``) unchanged since it was last graded."""
        sitting = state.sitting
        try:
            source, unreadable = read_source(sitting.path)
        except OSError:
            self.view.message(f"{sitting.path} is missing: 'grind reset {sitting.slug}' puts the stub back.")
            return None
        digest = source_hash(source)
        if digest == state.last_hash and not force:
            return None
        state.last_hash = digest
        if unreadable is not None:  # not UTF-8: say so once per save; there is nothing to grade
            self.view.message(unreadable)
            return None
        self._token += 1
        token = self._token
        self.grades_started += 1
        said = self.note(sitting.exercise) if self.note is not None else None
        if said is not None:
            self.view.message(said)
        self.view.checking(sitting)
        # the file as grind presented it (the stub, or the fresh file of a practice sitting) is
        # shown, not a try
        record = not (first and (sitting.fresh or source == _stub_text(sitting.exercise)))
        threading.Thread(target=self._grade, args=(token, sitting, source, record), daemon=True).start()
        return token

    def _current_hash(self, path: Path) -> str | None:
        try:
            return source_hash(read_source(path).text)
        except OSError:
            return None

    def _grade(self, token: int, sitting: Sitting, source: str, record: bool = True) -> None:
        started = self.clock()
        try:
            verdict = self.grade(sitting.exercise, sitting.path, source)
        except BaseException as exc:  # noqa: BLE001 - handed to the loop's thread, which re-raises it
            self.events.put(Graded(token, source, started, self.clock(), None, exc))
            return
        self.events.put(Graded(token, source, started, self.clock(), verdict, record=record))


def _stub_text(exercise: Exercise) -> str | None:
    try:
        return exercise.stub_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


# -- the learner's session: which exercise comes next ----------------------------------------

def watch_session(loop: Loop, progress: Progress, root: Path, exercises: list[Exercise],
                  first: str) -> list[Sitting]:
    """``grind watch``: the exercises in curriculum order, from the one named ``first``; ``n``
    moves on, a number from the ``l`` list jumps. Each exercise is graded once as it is
    presented. It is plain practice: an interview left running on an exercise is not resumed
    here (its clock is not shown and does not end), it is named in one line with the commands
    that resume or drop it; until then its hints stay locked, as everywhere. Returns the
    sittings, for the line ``watch_summary`` says on the way out."""
    from judge.workspace import learner_file

    slugs = [e.slug for e in exercises]
    index = slugs.index(first)
    sittings: list[Sitting] = []
    while True:
        exercise = exercises[index]
        now = loop.clock()
        sitting = Sitting(exercise, learner_file(root, exercise), "watch", now)
        sittings.append(sitting)
        left_open = progress.running_interview(exercise.slug, now)
        if left_open is not None:
            sitting.notes.append(open_interview_note(left_open, now))
        present = True
        while True:
            outcome = loop.run(sitting, present=present, grade_first=present, pick=True)
            if outcome is Leave.QUIT:
                return sittings
            if outcome is Leave.PICK and loop.picked in slugs:
                index = slugs.index(loop.picked)
                break
            if index + 1 < len(exercises):
                index += 1
                break
            loop.view.message("That was the last exercise. 'l' lists them all (a number and Enter picks one); "
                              "'q' quits.")
            present = False


def watch_summary(sittings: list[Sitting]) -> str:
    """One line on leaving watch: the attempts made, and on what, passed or not."""
    tally: dict[str, tuple[int, bool]] = {}  # an exercise picked again from the list is one line
    for s in sittings:
        attempts, passed = tally.get(s.slug, (0, False))
        tally[s.slug] = (attempts + s.attempts, passed or s.passed_at is not None)
    tried = {slug: counts for slug, counts in tally.items() if counts[0] or counts[1]}
    if not tried:
        return "Left watch: no attempts recorded."
    parts = [f"{slug} {attempts} attempt{'s' if attempts != 1 else ''}, {'passed' if passed else 'not passed'}"
             for slug, (attempts, passed) in tried.items()]
    return "Left watch: " + "; ".join(parts) + "."


def open_interview_note(interview: Interview, now: float) -> str:
    remaining = interview.remaining(now)
    slug = interview.exercise
    return (f"An interview on {slug} was left open ({int(remaining // 60)}:{int(remaining % 60):02d} left; its hints "
            f"stay locked until it ends): 'grind run {slug} --interview' resumes it, 'grind reset {slug}' drops it.")


def practice_session(loop: Loop, progress: Progress, root: Path, picked: list[Exercise], *, interview: bool,
                     minutes: float | None = None) -> list[Sitting]:
    """``grind practice``: each picked exercise from a fresh file; ``n`` moves on, ``q`` ends.
    Returns the sittings, reviewed, for the summary."""
    sittings = []
    for number, exercise in enumerate(picked, start=1):
        sitting = practice.present(progress, root, exercise, loop.clock(), interview=interview, minutes=minutes)
        sittings.append(sitting)
        # graded as presented, as watch does: the first verdict needs no save (not a try)
        outcome = loop.run(sitting, position=(number, len(picked)), grade_first=True)
        practice.leave(progress, sitting, loop.clock())
        if outcome is Leave.QUIT:
            break
    return sittings


def real_grade(exercise: Exercise, path: Path, source: str) -> Verdict:
    from judge.grade import grade

    return grade(exercise, path, source=source)


class WarmGrade:
    """The loop's grader: one warm worker (torch imported once) for the whole session, so each
    save costs the cases, not a torch start. Every grade still gets a fresh, limited fork."""

    def __init__(self) -> None:
        self.worker: Any = None

    def __call__(self, exercise: Exercise, path: Path, source: str) -> Verdict:
        from judge.grade import grade, hidden_from_learners
        from judge.worker.sandbox import WarmWorker

        if self.worker is None:
            self.worker = WarmWorker(hidden_from_learners(exercise))
        return grade(exercise, path, source=source, worker=self.worker)

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None


@contextmanager
def open_loop(progress: Progress, root: Path, view: Any, *, manual: bool,
              listing: Callable[[], list[tuple[Exercise, str]]], grade: GradeFn = real_grade,
              stdin: Any = None) -> Iterator[Loop]:
    """A loop wired to the real world: the workspace's file events (unless ``manual``), the
    terminal's keys, and ``view`` (a context manager, for its status line)."""
    events: queue.Queue[Any] = queue.Queue()
    warm = WarmGrade() if grade is real_grade else None
    note: Callable[[Exercise], str | None] | None = None
    if grade is real_grade:
        from judge.cache import reference_note

        note = reference_note
    loop = Loop(progress, warm or grade, view, events, listing=listing, manual=manual, note=note)
    try:
        with view:
            if manual:
                with key_events(events, stdin):
                    yield loop
            else:
                with file_events(root, events), key_events(events, stdin):
                    yield loop
    finally:
        if warm is not None:
            warm.close()


# -- event sources ---------------------------------------------------------------------------

def _python_file(change: Any, path: str) -> bool:
    return path.endswith(".py") and f"{os.sep}.grind{os.sep}" not in path


@contextmanager
def file_events(root: Path, events: queue.Queue[Any]) -> Iterator[threading.Thread]:
    """Put a ``Change`` on ``events`` for every saved ``.py`` file under ``root``, until the
    block ends. Editors that save by renaming a temp file over the original show up as a
    change (or a delete and an add) of the same path, which is all the loop looks at. Where
    inotify cannot be had (or fails while watching), the workspace is polled instead."""
    from watchfiles import watch

    stop = threading.Event()

    def pump() -> None:
        # inotify first; polling when it fails. A user's inotify instances are few (128 by
        # default) and shared by all their processes: a submission running as this user (the
        # laptop level, or the daemon's jobs) can hold all of them, and a watcher made then
        # failed with EMFILE, ending this thread: watch mode went on without ever seeing the
        # learner's next save. Polling the workspace costs a stat per file every 300 ms.
        # A save is seen at watchfiles' next step and handed over one quiet step later: with
        # step=30 that was 30-60 ms of every save -> verdict (a third of clipping's). An editor
        # writes a file in well under 10 ms, so 10 ms still groups one save's events; a save
        # split wider is graded again once it settles (the loop re-grades a changed file).
        polling = False
        while not stop.is_set():
            try:
                for changes in watch(root, watch_filter=_python_file, debounce=150, step=10, stop_event=stop,
                                     raise_interrupt=False, rust_timeout=500, yield_on_timeout=False,
                                     force_polling=polling, poll_delay_ms=300):
                    for _kind, path in changes:
                        events.put(Change(Path(path)))
            except Exception:  # noqa: BLE001 - watchfiles' own error types; never the end of watching
                if polling:
                    stop.wait(1.0)  # polling failed too (the folder went away?): try again shortly
                polling = True

    thread = threading.Thread(target=pump, name="grind-watch", daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        stop.set()
        thread.join(timeout=2)


@contextmanager
def key_events(events: queue.Queue[Any], stream: Any = None) -> Iterator[None]:
    """Put a ``Key`` on ``events`` for every key the learner presses. On a terminal, single
    keys without Enter (cbreak mode, restored afterwards; Ctrl-C still interrupts). Elsewhere
    (a pipe, a test), one key per line: the line's first character, or Enter for an empty
    line, or a number's digits and Enter; the end of input is ``q``, so a script that runs out
    of keys does not hang."""
    stream = stream if stream is not None else sys.stdin
    stop = threading.Event()
    fd = None
    try:
        if stream.isatty():
            import termios
            import tty

            fd = stream.fileno()
            saved = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError, AttributeError):
        fd = None

    if fd is None:
        def lines() -> None:
            for line in iter(stream.readline, ""):
                if stop.is_set():
                    return
                text = line.strip()
                if text.isdigit():  # a number from the list: its digits, then Enter picks it
                    for digit in text:
                        events.put(Key(digit))
                    events.put(Key("\n"))
                    continue
                events.put(Key(text[0].lower() if text else "\n"))
            events.put(Key("q"))

        threading.Thread(target=lines, name="grind-keys", daemon=True).start()
        try:
            yield
        finally:
            stop.set()
        return

    import select

    def keys() -> None:
        while not stop.is_set():
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                continue
            data = os.read(fd, 1)
            if not data:
                events.put(Key("q"))
                return
            char = data.decode("utf-8", "replace")
            events.put(Key("\n" if char in "\r\n" else char.lower()))

    tty.setcbreak(fd)
    thread = threading.Thread(target=keys, name="grind-keys", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=1)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
