"""What a front end asks of grind, with the CLI's rules and the CLI's ``--json`` shapes.

The notebook magics and the MCP tools are two more ways in to the judge that ``grind run``,
``grind hint``, ``grind solution``, ``grind list`` and ``grind progress`` already are. They must
not be a second judge: a cell graded in a notebook is the same submission, in the same sandbox,
under the same limits, through the same warm daemon and cache, recorded in the same progress
database, as the file ``grind run --file`` would grade. So every action here calls the very core
functions the CLI calls (``judge.outcome.grade_and_record``, ``Progress``, ``Catalog``), and the
rules the CLI enforces in ``judge/cli/`` are restated here in the same words:

- no hint and no solution while an interview runs on the exercise;
- a hint is recorded as shown the moment it is given (the next verdict counts it);
- the solution before a pass needs an explicit ``force`` (the CLI asks; a front end cannot);
- what ``--json`` prints is what these functions return (``to_json``), errors included:
  ``{"error": {"kind", "message", "exit_code"}}``.

Nothing here imports IPython, mcp, typer or rich; the notebook imports this in its kernel, and
runs the grade itself in a separate process (``grade_in_child``) so that grind's process
handling (a child subreaper that sweeps leftovers) never happens inside the learner's kernel.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator

from judge.catalog import Catalog
from judge.errors import EnvironmentProblem, JudgeError, UsageError
from judge.models import Exercise, Verdict
from judge.progress import Overview, Progress
from judge.views.verdict import HintInfo
from judge.workspace import find_workspace, progress_path

# The longest a front end waits for one grade. The sandbox ends the learner's code at the
# exercise's own limit; this only bounds grind itself (a cold cache computes the reference too).
GRADE_BACKSTOP_S = 900.0


class SolutionLocked(UsageError):
    """The solution was asked for before a pass, without ``force``."""


@dataclass
class Graded:
    """One graded submission: the verdict, what to say before it (``lead``) and after it
    (``after``: what was recorded), and the hint offer the verdict's footer makes."""

    exercise: Exercise
    verdict: Verdict
    lead: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    hints: HintInfo | None = None

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    def shown(self) -> Verdict:
        """The verdict as a renderer shows it: its own notices, then what was recorded."""
        return replace(self.verdict, notices=[*self.verdict.notices, *self.after])

    def to_json(self) -> dict[str, Any]:
        """Exactly ``grind run --json``: the verdict, with every notice (the run's own, where the
        file came from, what was recorded) in its ``notices``."""
        return replace(self.verdict, notices=[*self.verdict.notices, *self.lead, *self.after]).to_json()


def error_json(exc: BaseException) -> dict[str, Any]:
    """The CLI's ``--json`` error object for ``exc`` (``judge/cli/``'s ``_fail``)."""
    if isinstance(exc, JudgeError):
        kind = ("usage" if isinstance(exc, UsageError) else
                "environment" if isinstance(exc, EnvironmentProblem) else "grind")
        return {"error": {"kind": kind, "message": exc.message, "exit_code": int(exc.exit_status)}}
    from judge.status import ExitStatus

    return {"error": {"kind": "grind", "message": f"internal error: {type(exc).__name__}: {exc}",
                      "exit_code": int(ExitStatus.JUDGE_ERROR)}}


@contextmanager
def progress_state(warnings: list[str] | None = None) -> Iterator[tuple[Path | None, Progress]]:
    """The workspace found from the current folder (as every grind command finds it) and its
    progress database, closed afterwards: front ends live long, and a connection held between
    calls would pin a database the learner may reset from a terminal."""
    root = find_workspace()
    state = Progress(progress_path(root), warn=(warnings.append if warnings is not None else _stderr))
    try:
        yield root, state
    finally:
        state.close()


def _stderr(message: str) -> None:
    print(f"grind: warning: {message}", file=sys.stderr)


def exercise(slug: str) -> Exercise:
    """The exercise named ``slug``; an unknown name is a ``UsageError`` that suggests the nearest."""
    if not isinstance(slug, str) or not slug.strip():
        raise UsageError("which exercise? Give its name, e.g. 'clipping' ('grind list' shows them)")
    return Catalog().get(slug.strip())


def _refuse_during_interview(state: Progress, ex: Exercise, what: str) -> None:
    from judge.interview import locked_message

    running = state.running_interview(ex.slug)
    if running is not None:
        raise UsageError(locked_message(running, time.time(), what))


# ---------------------------------------------------------------------------------------------
# Reading: the list, a statement, the progress


def list_json() -> list[dict[str, Any]]:
    """``grind list --json``."""
    exercises, _problems = Catalog().load_all()
    with progress_state([]) as (_root, state):
        return [{"slug": e.slug, "title": e.title, "topic": e.topic, "difficulty": e.difficulty,
                 "status": state.status(e.slug)} for e in exercises]


def statement_json(slug: str) -> dict[str, Any]:
    """What ``grind show`` prints, as data: the statement's Markdown and the manifest's facts."""
    ex = exercise(slug)
    return {"slug": ex.slug, "title": ex.title, "topic": ex.topic, "difficulty": ex.difficulty,
            "entry": list(ex.entry), "time_limit_s": ex.time_limit, "hints": len(ex.hints),
            "statement": ex.statement_path.read_text(encoding="utf-8")}


def overview() -> Overview:
    """The progress overview ``grind progress`` shows (a ``judge.progress.Overview``)."""
    exercises, _problems = Catalog().load_all()
    with progress_state([]) as (_root, state):
        return state.overview([e.slug for e in exercises])


def progress_json() -> dict[str, Any]:
    """``grind progress --json``."""
    return overview().to_json()


# ---------------------------------------------------------------------------------------------
# Hints and the solution, with the learner's rules


def next_hint(slug: str) -> dict[str, Any]:
    """``grind hint NAME``: the next hint, recorded as shown (the next verdict counts it). Past the
    last one, the last is repeated and nothing more is recorded, as the CLI does."""
    ex = exercise(slug)
    with progress_state() as (_root, state):
        _refuse_during_interview(state, ex, "hints")
        shown, total = state.hints_shown(ex.slug), len(ex.hints)
        if total == 0:
            return {"exercise": ex.slug, "number": 0, "total": 0, "hint": None, "last": True, "counted": False,
                    "message": f"'{ex.slug}' has no hints."}
        if shown >= total:
            return {"exercise": ex.slug, "number": total, "total": total, "hint": ex.hints[-1], "last": True,
                    "counted": False, "message": "That was the last hint. Once you pass, the solution shows the "
                                                 "reference."}
        state.record_hint(ex.slug)
        return {"exercise": ex.slug, "number": shown + 1, "total": total, "hint": ex.hints[shown],
                "last": shown + 1 == total, "counted": True, "message": ""}


def solution(slug: str, force: bool = False) -> dict[str, Any]:
    """``grind solution NAME``: the reference after a pass; before one only with ``force`` (the
    CLI asks a yes/no question there, which a notebook cell or a tool call cannot answer)."""
    ex = exercise(slug)
    with progress_state() as (_root, state):
        _refuse_during_interview(state, ex, "solution")
        passed = state.passed(ex.slug)
    if not passed and not force:
        raise SolutionLocked(f"You have not passed '{ex.slug}' yet, so the reference stays hidden: a hint gives a "
                             "nudge instead.")
    return {"exercise": ex.slug, "passed": passed, "source": ex.reference_path.read_text(encoding="utf-8")}


# ---------------------------------------------------------------------------------------------
# Grading


def label_path(ex: Exercise, label: str) -> Path:
    """The name a submission that is not a file is graded under (its tracebacks say it). It sits
    in the current folder, so it reads like the learner's file, and it is never created."""
    return Path.cwd() / f"{ex.slug}_{label}.py"


def grade_submission(slug: str, source: str | None = None, *, path: str | Path | None = None,
                     label: str = "cell", no_daemon: bool = False) -> Graded:
    """Grade ``source`` (or the file at ``path``) as ``grind run NAME --file`` grades a file, in
    this process: through the warm daemon when it can, cold otherwise; recorded in the progress
    of the workspace found from the current folder (or the per-user one outside a workspace)."""
    from judge.daemon import worker_for
    from judge.grade import hidden_from_learners
    from judge.outcome import grade_and_record, pick_file
    from judge.practice import Sitting

    ex = exercise(slug)
    if (source is None) == (path is None):
        raise UsageError("give either the submission's source or the path of its file (one of the two)")
    if source is not None and not isinstance(source, str):
        raise UsageError(f"the source must be text, not {type(source).__name__}")
    warnings: list[str] = []
    with progress_state(warnings) as (root, state):
        if path is not None:
            target, recording, lead = pick_file(ex, root, Path(path).expanduser())
        else:
            target, recording, lead = label_path(ex, label), True, []
        sitting = Sitting(ex, target, "run", None, interview=state.interview(ex.slug) if recording else None)
        worker = worker_for(lambda: hidden_from_learners(ex), opt_out=no_daemon)
        outcome = grade_and_record(state, sitting, record=recording, source=source, lead=lead, speed=True,
                                   worker=worker)
        hints = None if state.running_interview(ex.slug) else HintInfo(state.hints_shown(ex.slug), len(ex.hints))
    return Graded(ex, outcome.verdict, lead=[*outcome.lead, *warnings], after=list(outcome.notices), hints=hints)


# ---------------------------------------------------------------------------------------------
# The notebook's grading process


def grade_in_child(slug: str, source: str | None = None, *, path: str | Path | None = None, label: str = "cell",
                   timeout: float = GRADE_BACKSTOP_S) -> Graded:
    """``grade_submission`` in a separate process, for a Jupyter kernel and the MCP server.

    The learner's code never runs in the caller either way (it runs in grind's sandboxed child).
    What this adds is that grind's own process handling stays out of the kernel: a cold grade
    makes its process a child subreaper and sweeps every unknown child left in another session,
    which in a kernel would reach the learner's own subprocesses. The grading process starts in a
    session of its own; what it answers is parsed field by field (``verdict_from_wire``). A
    long-lived server gains the same: whatever goes wrong in a grade ends that process, not the
    server, and a grade never shares the server's threads (the MCP SDK calls tools on a pool)."""
    from judge.models import verdict_from_wire

    ex = exercise(slug)  # an unknown name is said here, without a process
    package_parent = str(Path(__file__).resolve().parents[2])
    code = (f"import sys; sys.path.insert(0, {package_parent!r}); "
            "from judge.frontends.actions import child_main; child_main()")
    if (source is None) == (path is None):
        raise UsageError("give either the submission's source or the path of its file (one of the two)")
    if source is not None and not isinstance(source, str):
        raise UsageError(f"the source must be text, not {type(source).__name__}")
    request = json.dumps({"exercise": ex.slug, "source": source, "label": label,
                          "path": None if path is None else str(path)})
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(request.encode("utf-8", "surrogatepass"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise JudgeError(f"grading took longer than {timeout:g} s, so grind stopped it (the learner's own code "
                         "is stopped at the exercise's time limit: this was grind)") from None
    except BaseException:  # the learner pressing Interrupt: the grade stops with the cell
        _stop(proc)
        raise
    try:
        answer = json.loads(out.decode("utf-8", "surrogatepass"))
        if not answer.get("ok"):
            raise _answered_error(answer["error"])
        hints = answer.get("hints")
        return Graded(ex, verdict_from_wire(answer["verdict"]), lead=[str(n) for n in answer["lead"]],
                      after=[str(n) for n in answer["after"]],
                      hints=HintInfo(int(hints[0]), int(hints[1])) if hints else None)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise JudgeError(f"grind's grading process ended without a verdict (exit code {proc.returncode}: "
                         f"{tail[0]})") from None


def _stop(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """Stop a grading process as Ctrl-C stops ``grind run``: SIGINT first, so that grind ends its
    run (the sandboxed child, its temp folder) on the way out; SIGKILL to its group after
    ``grace_s``."""
    try:
        proc.send_signal(signal.SIGINT)
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
    except OSError:
        pass


def confined_path(path: str | Path) -> Path:
    """``path`` for a tool call: a ``.py`` file inside the workspace (or, outside one, the current
    folder). A tutor grades the learner's files; it has no reason to make grind read, and quote
    back in a SyntaxError, any other file the user can read."""
    folder = (find_workspace() or Path.cwd()).resolve()
    target = (folder / Path(path).expanduser()).resolve()
    if target.suffix != ".py" or not target.is_relative_to(folder):
        raise UsageError(f"{path}: give a .py file inside {folder} (the workspace this server serves)")
    return target


def _answered_error(error: dict[str, Any]) -> JudgeError:
    kinds = {"usage": UsageError, "environment": EnvironmentProblem}
    return kinds.get(str(error.get("kind")), JudgeError)(str(error.get("message")))


def child_main() -> None:
    """The grading process of ``grade_in_child``: one request on stdin, one JSON answer on the
    stdout it started with. Everything else that would reach stdout (a stray print) goes to
    stderr, so the answer cannot be corrupted by it."""
    from judge.models import verdict_to_wire

    answer_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        request = json.loads(sys.stdin.buffer.read().decode("utf-8", "surrogatepass"))
        graded = grade_submission(request["exercise"], request.get("source"), path=request.get("path"),
                                  label=request.get("label", "cell"))
        hints = [graded.hints.shown, graded.hints.total] if graded.hints is not None else None
        answer: dict[str, Any] = {"ok": True, "verdict": verdict_to_wire(graded.verdict), "lead": graded.lead,
                                  "after": graded.after, "hints": hints}
    except Exception as exc:  # noqa: BLE001 - the boundary: any failure is one answer, never a traceback
        answer = {"ok": False, **error_json(exc)}
    with os.fdopen(answer_fd, "wb") as handle:
        handle.write(json.dumps(answer).encode("utf-8", "surrogatepass"))
