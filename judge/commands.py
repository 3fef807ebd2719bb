"""What the learner's commands do, apart from parsing and drawing: the core under judge/cli/.

judge/cli/ parses a command's arguments, calls into here, renders what comes back with
``judge.render`` and maps the outcome to an exit code. What a command decides (which options go
together, what to grade, what a session asks, what to say when there is nothing to do) lives
here, as plain functions over the core, so that it is read and tested without typer or rich
(tests/test_architecture.py keeps both out of this module). The instructor's commands have
theirs in judge/classroom.py.
"""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple

from judge.catalog import Catalog
from judge.errors import ManifestError, UsageError
from judge.models import Exercise, Verdict
from judge.progress import Progress
from judge.views.verdict import HintInfo
from judge.workspace import learner_file, reset_exercise

# -- grind run --------------------------------------------------------------------------------


def refuse_with_all(name: str | None, file: Path | None, as_json: bool, interview: bool, repro: bool,
                    minutes: float | None) -> None:
    """``grind run --all`` grades the workspace's files: every option naming one file or mode is refused."""
    if name is not None or file is not None or as_json or interview or repro or minutes is not None:
        raise UsageError("--all grades every exercise's workspace file: leave out the name, --file, --json, "
                         "--interview and --repro")


def check_interview_options(interview: bool, minutes: float | None, file: Path | None, as_json: bool,
                            repro: bool) -> None:
    """--minutes needs --interview; an interview is interactive, on the workspace's file."""
    if minutes is not None and not interview:
        raise UsageError("--minutes sets an interview's length: add --interview, or leave --minutes out")
    if interview and (file is not None or as_json or repro):
        raise UsageError("--interview works on the workspace's file, interactively (without --file, --json "
                         "or --repro)")


def refuse_during_interview(state: Progress, exercise: Exercise, what: str) -> None:
    """Hints, the solution and a repro script stay locked while an interview runs."""
    from judge.interview import locked_message

    running = state.running_interview(exercise.slug)
    if running is not None:
        raise UsageError(locked_message(running, time.time(), what))


def daemon_worker(exercise: Exercise, opt_out: bool) -> Any:
    """The per-user daemon's worker (which grades cold whenever the daemon cannot), or None."""
    from judge.daemon import worker_for
    from judge.grade import hidden_from_learners

    return worker_for(lambda: hidden_from_learners(exercise), opt_out=opt_out)


def grade_one(state: Progress, exercise: Exercise, path: Path, record: bool, no_daemon: bool, *,
              lead: list[str] | None = None, speed: bool = False) -> Any:
    """Grade one file and record the attempt (when ``record``): the outcome of judge.outcome."""
    from judge.outcome import grade_and_record
    from judge.practice import Sitting

    sitting = Sitting(exercise, path, "run", None, interview=state.interview(exercise.slug) if record else None)
    return grade_and_record(state, sitting, record=record, lead=lead, speed=speed,
                            worker=daemon_worker(exercise, no_daemon))


def run_verdict(state: Progress, exercise: Exercise, path: Path, recording: bool, notices: list[str], *,
                no_daemon: bool, as_json: bool, repro: bool, file_given: bool) -> tuple[Verdict, list[str]]:
    """``grind run NAME``'s verdict, its notices in place, and the lines said before it."""
    outcome = grade_one(state, exercise, path, recording, no_daemon, lead=notices, speed=True)
    verdict, lead = outcome.verdict, outcome.lead
    if as_json:
        verdict.notices += lead
    verdict.notices += outcome.notices
    if repro:  # beside the learner's file; the untouched stub's folder is grind's, so then here
        folder = path.parent if recording or file_given else Path.cwd()
        verdict.notices.append(write_repro_notice(exercise, verdict, path, folder))
    return verdict, lead


def write_repro_notice(exercise: Exercise, verdict: Verdict, learner: Path, folder: Path) -> str:
    """The notice saying where the repro script is, or why there is none (never an error: the
    verdict is still the answer)."""
    from judge.repro import ReproUnavailable, write_repro

    target = folder.resolve() / f"repro_{exercise.slug.replace('-', '_')}.py"
    try:
        written = write_repro(exercise, verdict, learner, target)
    except ReproUnavailable as exc:
        return f"No repro script written: {exc}."
    except OSError as exc:
        return f"No repro script written: {target}: {exc.strerror or exc}."
    return f"Wrote {written}: python {shlex.quote(str(written))} re-runs the failing check on your code, outside grind."


def hint_info(state: Progress, exercise: Exercise) -> HintInfo | None:
    """The verdict's hint footer: none while an interview runs."""
    if state.running_interview(exercise.slug):
        return None
    return HintInfo(state.hints_shown(exercise.slug), len(exercise.hints))


# -- grind hint, grind reset ------------------------------------------------------------------


class Shown(NamedTuple):
    """A text grind shows under a title (a hint)."""

    title: str
    text: str


def hint_screens(state: Progress, exercise: Exercise, show_all: bool) -> list[Shown | str]:
    """What ``grind hint`` shows: the next hint (recorded as seen), the last one again, or with
    ``show_all`` every hint revealed so far. A plain str is a line said after (or instead)."""
    hints, total = exercise.hints, len(exercise.hints)
    if show_all:
        revealed = min(total, state.hints_revealed(exercise.slug))  # a pass does not take them back
        if revealed == 0:
            return [f"No hints revealed yet. 'grind hint {exercise.slug}' shows the first."]
        return [Shown(f"Hint {i + 1} of {total}", hints[i]) for i in range(revealed)]
    shown = state.hints_shown(exercise.slug)
    if shown >= total:
        return [Shown(f"Hint {total} of {total} (the last one)", hints[-1]),
                f"That was the last hint. Once you pass, 'grind solution {exercise.slug}' shows the reference."]
    state.record_hint(exercise.slug)
    return [Shown(f"Hint {shown + 1} of {total}", hints[shown])]


def check_reset_args(name: str | None, every: bool) -> None:
    if every == (name is not None):
        raise UsageError("Name one exercise ('grind reset clipping') or use --all, not both."
                         if every else "Which exercise? 'grind reset NAME', or 'grind reset --all' for every one.")


def reset_one(root: Path, exercise: Exercise, state: Callable[[], Progress]) -> list[str]:
    """Put the stub back (the file kept as a backup) and drop an interview left open on it."""
    target = learner_file(root, exercise)
    backup = reset_exercise(root, exercise)
    said = [f"Restored the stub in {target}." + (f" Your previous file is saved as {backup}." if backup else "")]
    progress = state()
    left_open = progress.running_interview(exercise.slug)
    if left_open is not None:  # starting over drops the interview: its hints unlock, nothing is reviewed
        progress.finish_interview(left_open.id, time.time(), "dropped")
        said.append(f"Dropped the interview that was open on {exercise.slug}: its hints are unlocked.")
    return said


def reset_all(root: Path, exercises: list[Exercise]) -> str:
    backups = [b for b in (reset_exercise(root, e) for e in exercises) if b is not None]
    return (f"Restored {len(exercises)} stubs." +
            (f" Your previous files are saved in {backups[0].parent}." if backups else ""))


# -- grind watch, grind practice --------------------------------------------------------------


def first_to_watch(state: Progress, exercises: list[Exercise], named: Exercise | None) -> str:
    """The exercise watch starts with: the named one, else the first not passed, else the first."""
    first = named.slug if named is not None else next(
        (e.slug for e in exercises if not state.passed(e.slug)), exercises[0].slug if exercises else None)
    if first is None:
        raise UsageError("No exercises to practise.")
    return first


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


@dataclass
class Plan:
    """A practice session: the quiz cards asked first, then the exercises; or why there is nothing."""

    picked: list[Exercise] = field(default_factory=list)
    asked: list[Any] = field(default_factory=list)
    nothing: str | None = None  # said instead of a session when nothing is due or new

    def cards_line(self) -> str:
        then = f", then {_plural(len(self.picked), 'exercise')}" if self.picked else ""
        return f"First {_plural(len(self.asked), 'quiz card')}{then}."

    def exercises_line(self) -> str:
        return f"Now the exercises: {', '.join(e.slug for e in self.picked)}."


def plan_practice(state: Progress, exercises: list[Exercise], deck: list[Any], now: float, count: int,
                  topic: str | None, cards: int) -> Plan:
    """``grind practice``'s session: the exercises due (then new), the cards due (then new)."""
    from judge import scheduling
    from judge.quiz import pick_cards

    try:
        picked = scheduling.pick(state, exercises, now, count, topic)
    except UsageError:
        if not deck:  # a topic only cards have (--topic precision) is not an unknown topic
            raise
        picked = []
    # of the new cards, those on this session's exercises first: the reasoning before the code
    session_slugs = {e.slug for e in picked}
    asked = pick_cards(state, sorted(deck, key=lambda c: c.exercise not in session_slugs), now, cards)
    if picked or asked:
        return Plan(picked, asked)
    from judge.text import until_text

    upcoming = scheduling.next_due(state, [e for e in exercises if topic is None or e.topic == topic])
    return Plan(nothing="Nothing is due and every exercise has been tried." +
                (f" Next review: {upcoming[0].slug}, {until_text(upcoming[1], now)}." if upcoming else ""))


def manifest_stamps(folder: Path) -> list[tuple[str, int, int]]:
    """Each exercise folder's manifest, with its modification time and size (-1 when it has none)."""
    stamps = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        try:
            info = os.stat(folder / name / "exercise.toml")
            stamps.append((name, info.st_mtime_ns, info.st_size))
        except OSError:
            stamps.append((name, -1, -1))
    return stamps


class CourseListing:
    """The loop's listing of (exercise, status), asked after every verdict ("x of N passed").
    Parsing every manifest again took 5-20 ms of each save -> verdict, so they are parsed again
    only when one of them changed."""

    def __init__(self, state: Progress) -> None:
        self.state = state
        self.stamp: list[tuple[str, int, int]] | None = None
        self.exercises: list[Exercise] = []

    def __call__(self) -> list[tuple[Exercise, str]]:
        catalog = Catalog()
        stamp = manifest_stamps(catalog.exercises_root)
        if self.stamp != stamp:
            self.stamp, self.exercises = stamp, catalog.load_all()[0]
        return [(e, self.state.status(e.slug)) for e in self.exercises]


# -- grind init, grind progress ---------------------------------------------------------------


def init_lines(directory: Path, report: Any, books: Any = None) -> list[str]:
    """What ``grind init`` says: what it made or kept, and what to do next."""
    said = [f"Workspace ready in {report.root}"]
    if report.created:
        said.append(f"  new stubs: {', '.join(report.created)}")
    if report.kept:
        said.append(f"  kept your existing files: {', '.join(report.kept)}")
    first = (report.created or report.kept or ["clipping"])[0]
    if books is None:
        first_file = learner_file(report.root, Catalog().get(first)).relative_to(report.root)
        return [*said, f"Next: cd {directory}, read {first}/README.md, edit {first_file}, "
                       f"then run 'grind run {first}'."]
    if books.created:
        said.append(f"  new notebooks: {', '.join(p.parent.name + '/' + p.name for p in books.created)}")
    if books.kept:
        said.append(f"  kept your existing notebooks: {', '.join(p.parent.name for p in books.kept)}")
    return [*said, f"Next: open {directory}/{first}/{first}.ipynb in Jupyter and run its cells (the notebook "
                   "extra: pip install '.[notebook]' in grind's folder)."]


def check_export(export: str | None) -> None:
    if export is not None and export not in ("csv", "md"):
        raise UsageError(f"--export {export!r}: choose csv or md")


# -- the quiz ---------------------------------------------------------------------------------


def quiz_cards(exercises: Callable[[], list[Exercise]], topic: str | None, quiet_topic: bool,
               skipped: Callable[[ManifestError], None]) -> list[Any]:
    """Every loadable card narrowed to ``topic`` (each broken deck handed to ``skipped`` first).
    With ``quiet_topic``, a topic no card has gives no cards instead of an error (practice: the
    topic may be an exercise topic only)."""
    from judge.decks import load_cards
    from judge.quiz import select_topic

    cards, problems = load_cards(Catalog().root)
    for problem in problems:
        skipped(problem)
    if topic is None:
        return cards
    topics = {e.slug: e.topic for e in exercises()}
    try:
        return select_topic(cards, topic, topics)
    except UsageError:
        if quiet_topic:
            return []
        raise


def nothing_due_cards(state: Progress, chosen: list[Any], topic: str | None, now: float) -> str:
    from judge.quiz import next_card_due
    from judge.text import until_text

    upcoming = next_card_due(state, chosen)
    return ("Nothing is due and you have answered every card" + (f" on {topic}" if topic else "") + "." +
            (f" Next review: {upcoming[0].id}, {until_text(upcoming[1], now)}." if upcoming else ""))


# -- grind daemon status ----------------------------------------------------------------------


def daemon_status_json(info: dict[str, Any] | None, why_not: str | None, socket: Path | None) -> dict[str, Any]:
    if info is not None:
        return {"running": True, **info}
    return {"running": False, "can_start": why_not is None, "why_not": why_not,
            "socket": str(socket) if socket else None}


def daemon_status_text(info: dict[str, Any] | None, why_not: str | None) -> str:
    if info is None:
        off = (f" and none can start ({why_not}), so grind run grades cold" if why_not is not None
               else ": the next 'grind run' starts it")
        return f"No grind daemon is running{off}."
    ident = info.get("identity") or {}
    stale = "" if info.get("current") else " (another grind or torch: the next 'grind run' replaces it)"
    # Busy: grading a job now (another run then waits up to 5 s for it, and grades cold after that).
    doing = ("grading a job now" if info.get("busy")
             else f"idle {info.get('idle_s')} s of {info.get('idle_limit_s')} s")
    return (f"grind daemon running{stale}: pid {info.get('pid')}, {info.get('jobs')} job(s) graded, "
            f"{doing}, server {'warm' if info.get('warm') else 'starting'}\n  socket {info.get('socket')}\n  grind "
            f"{ident.get('grind')}, torch {ident.get('torch')}, python {ident.get('python')}")
