"""Grade many submissions to one exercise, in parallel, with warm workers.

Each of ``jobs`` threads owns one warm worker (a forkserver that imported torch once), so a
class of 100 submissions costs 2 torch imports on 2 cores, not 100. One submission's crash or
timeout is its own verdict and never stops the others.
"""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from judge.cache import exercise_key
from judge.errors import UsageError
from judge.formats import write_atomic
from judge.grade import grade, hidden_from_learners, reference_for
from judge.models import Exercise, Status, Verdict
from judge.worker.sandbox import Limits, WarmWorker


def grade_many(
    exercise: Exercise,
    paths: list[Path],
    *,
    jobs: int = 2,
    limits: Limits | None = None,
    on_done: Callable[[Path, Verdict], None] | None = None,
    hidden: tuple[Path, ...] = (),
) -> dict[Path, Verdict]:
    """Verdicts for every path, in any order of completion; ``on_done`` is called as each lands."""
    from judge.environment import require_torch

    require_torch()  # with a cached reference nothing else would notice: every student would "crash"
    reference_for(exercise)  # compute (or load) the reference once, before the workers race for it
    local = threading.local()
    workers: list[WarmWorker] = []
    lock = threading.Lock()

    def worker() -> WarmWorker:
        if not hasattr(local, "worker"):
            local.worker = WarmWorker(hidden_from_learners(exercise, *hidden))
            with lock:
                workers.append(local.worker)
        return local.worker  # type: ignore[no-any-return]

    def one(path: Path) -> tuple[Path, Verdict]:
        try:
            verdict = grade(exercise, path, limits=limits, worker=worker())
        except Exception as exc:  # noqa: BLE001 - one bad file must not stop a class
            verdict = Verdict(exercise=exercise.slug, status=Status.CRASHED, submission=str(path),
                              message=f"grind could not grade this submission: {exc}")
        if on_done is not None:
            on_done(path, verdict)
        return path, verdict

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return dict(pool.map(one, paths))
    finally:
        for w in workers:
            w.close()


@dataclass
class Student:
    name: str
    path: Path | None  # None: no submission file could be found
    problem: str = ""


def find_students(submissions: Path, exercise: Exercise) -> list[Student]:
    """One student per ``NAME.py`` file or ``NAME/`` folder (holding ``<slug>.py`` or a single .py)."""
    if not submissions.is_dir():
        raise UsageError(f"{submissions}: not a folder of submissions")
    students = []
    for entry in sorted(submissions.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix == ".py":
            students.append(Student(entry.stem, entry))
        elif entry.is_dir():
            preferred = entry / f"{exercise.slug}.py"
            files = sorted(p for p in entry.rglob("*.py") if p.is_file())
            if preferred.is_file():
                students.append(Student(entry.name, preferred))
            elif len(files) == 1:
                students.append(Student(entry.name, files[0]))
            else:
                why = "no .py file" if not files else f"{len(files)} .py files and none named {exercise.slug}.py"
                students.append(Student(entry.name, None, f"no submission found ({why})"))
    return students


def _sha256(path: Path | None) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path is not None else ""


def grade_class(
    exercise: Exercise,
    submissions: Path,
    out_dir: Path,
    *,
    jobs: int = 2,
    limits: Limits | None = None,
    on_done: Callable[[str, dict[str, Any], bool], None] | None = None,
) -> list[dict[str, Any]]:
    """Grade every student, resumably: a student whose submission hash (and the exercise's own
    hash) match a stored result is not graded again. Learners' files are only ever read."""
    students = find_students(submissions, exercise)
    store = out_dir / "graded"
    store.mkdir(parents=True, exist_ok=True)
    # A stored result is reused only if the submission, the exercise and the limits are the same.
    exercise_hash = exercise_key(exercise, extra=repr(limits))
    rows: dict[str, dict[str, Any]] = {}
    todo: dict[Path, Student] = {}
    for student in students:
        digest = _sha256(student.path)
        saved = store / f"{student.name}.json"
        try:
            old = json.loads(saved.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = None
        if old and old.get("sha256") == digest and old.get("exercise_hash") == exercise_hash:
            rows[student.name] = old
            if on_done:
                on_done(student.name, old, True)
        elif student.path is None:
            verdict = Verdict(exercise=exercise.slug, status=Status.ERROR, message=student.problem)
            rows[student.name] = _save(saved, student.name, digest, exercise_hash, verdict)
            if on_done:
                on_done(student.name, rows[student.name], False)
        else:
            todo[student.path] = student

    def landed(path: Path, verdict: Verdict) -> None:
        student = todo[path]
        row = _save(store / f"{student.name}.json", student.name, _sha256(path), exercise_hash, verdict)
        rows[student.name] = row
        if on_done:
            on_done(student.name, row, False)

    if todo:
        # The class folder and the outputs are out of every submission's reach: no copying a
        # classmate, no planting a new "student", no editing stored results.
        grade_many(exercise, list(todo), jobs=jobs, limits=limits, on_done=landed,
                   hidden=(submissions.resolve(), out_dir.resolve()))
    return [rows[s.name] for s in students]


def _save(path: Path, student: str, digest: str, exercise_hash: str, verdict: Verdict) -> dict[str, Any]:
    """Store one student's result, atomically: a run killed here leaves the previous result (or
    none), never a truncated one. The temporary name is unique to the writer: ``with_suffix``
    gave students ``a.b`` and ``a.c`` the same ``a.tmp``, written by two threads at once."""
    row = {"student": student, "sha256": digest, "exercise_hash": exercise_hash, "verdict": verdict.to_json()}
    write_atomic(path, json.dumps(row))
    return row
