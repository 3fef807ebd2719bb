"""Grade many submissions to one exercise, in parallel, with warm workers.

Each of ``jobs`` threads owns one warm worker (a forkserver that imported torch once), so a
class of 100 submissions costs 2 torch imports on 2 cores, not 100. One submission's crash or
timeout is its own verdict and never stops the others.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, TextIO

from judge.cache import exercise_key
from judge.errors import ManifestError, UsageError
from judge.formats import weigh, write_atomic
from judge.trusted import case_count, case_names, reference_for
from judge.models import Exercise, Status, Verdict
from judge.grade import grade, hidden_from_learners
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
            verdict = grade(exercise, path, limits=limits, worker=worker(), marked=True)
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
    path: Path | None  # None: nothing gradable was found; ``problem`` says why
    problem: str = ""


def find_students(submissions: Path, exercise: Exercise) -> list[Student]:
    """One student per entry of the class folder, always: a ``NAME.py`` file, a ``NAME.ipynb``
    notebook or a ``NAME/`` folder (holding ``<slug>.py``, ``<slug>.ipynb``, a single .py or a
    single notebook) is graded; anything else (another kind of file, an empty folder, a folder
    with several .py files) is a student too, marked not gradable, so no one who handed
    something in is left out of the marks. ``NAME.py`` beside ``NAME/`` would be two students with
    one name: refused up front, naming both. So are two names a reader cannot tell apart (see
    ``lookalike_key``): ``ann.py`` and ``Ann.py``, ``josé`` composed and decomposed, a Latin and
    a Cyrillic ``a``. Their rows would look like one student's twice, and on a file system that
    folds case or Unicode forms (macOS, a USB stick) their stored results are one file, so one
    could be given the other's marks."""
    if not submissions.is_dir():
        raise UsageError(f"{submissions}: not a folder of submissions")
    students: list[Student] = []
    entries: dict[str, str] = {}
    lookalikes: dict[str, tuple[str, str]] = {}
    for entry in sorted(submissions.iterdir()):
        if entry.name.startswith("."):
            continue
        try:
            student = _gradable(_student(entry, exercise))
        except (OSError, RecursionError) as exc:  # a folder too deep, or unreadable, to look through
            student = Student(entry.name, None, f"not gradable: {entry.name} could not be read ({type(exc).__name__})")
        shown = entry.name + ("/" if entry.is_dir() else "")
        if student.name in entries:
            raise UsageError(f"{submissions}: {entries[student.name]} and {shown} would both be student "
                             f"{student.name!r}; rename or remove one, then grade again")
        entries[student.name] = shown
        key = lookalike_key(student.name)
        if key in lookalikes:
            other_shown, other_name = lookalikes[key]
            raise UsageError(f"{submissions}: {ascii(other_shown)} and {ascii(shown)} would be students "
                             f"{ascii(other_name)} and {ascii(student.name)}, which look the same (names that "
                             "differ only in case, Unicode form or look-alike letters); rename one, then grade again")
        lookalikes[key] = (shown, student.name)
        students.append(student)
    return students


# Letters of other scripts drawn like Latin ones (the common part of Unicode's confusables: a
# reader of a marks table cannot tell these names apart). NFKC already folds the compatibility
# forms (fullwidth letters, ligatures, superscripts).
_LOOKALIKES = str.maketrans({
    **dict(zip("АВЕКМНОРСТХУаеорсухіјѕһԁԛԝ", "ABEKMHOPCTXYaeopcyxijshdqw")),  # Cyrillic
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινκρτυχ", "ABEZHIKMNOPTYXoivkptux")),  # Greek
    "\u0131": "i", "\u0261": "g", "\u0578": "n", "\u057d": "u",  # dotless i, script g, Armenian
})
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u034f\u200b\u200c\u200d\u200e\u200f\u2060\ufeff"))


def lookalike_key(name: str) -> str:
    """What a student's name looks like to a reader: NFKC (composed, compatibility forms
    folded), invisible characters dropped, look-alike letters of other scripts made Latin, and
    case folded. Two entries with one key are refused (find_students)."""
    import unicodedata

    text = unicodedata.normalize("NFKC", name).translate(_INVISIBLE).translate(_LOOKALIKES)
    return unicodedata.normalize("NFKC", text.casefold())


def _student(entry: Path, exercise: Exercise) -> Student:
    """What one entry of the class folder is: a gradable file, or why it is not gradable."""
    links, files = _contents(entry)
    if links:
        # A link is not the student's work: unpacked from a tar or zip it can name the reference,
        # a classmate's file or /etc/passwd (whose first line a syntax error would then show in
        # the results). It is never followed, and the row says why.
        name = entry.stem if entry.suffix == ".py" and not entry.is_dir() else entry.name
        return Student(name, None, f"not gradable: {links[0]} is a symbolic link; hand in the file itself")
    if entry.is_file() and entry.suffix in GRADABLE:
        return Student(entry.stem, entry)
    if entry.is_dir():
        for suffix in GRADABLE:  # a .py file first: a notebook beside it is the learner's scratchpad
            preferred = entry / f"{exercise.slug}{suffix}"
            if preferred.is_file():
                return Student(entry.name, preferred)
        for suffix in GRADABLE:
            these = [f for f in files if f.suffix == suffix]
            if len(these) == 1:
                return Student(entry.name, these[0])
            if these:
                return Student(entry.name, None, f"not gradable: {len(these)} {suffix} files and none named "
                                                 f"{exercise.slug}{suffix} in {entry.name}/")
        return Student(entry.name, None, f"not gradable: no .py or .ipynb file in {entry.name}/")
    if entry.is_file():
        return Student(entry.name, None, f"not gradable: {entry.name} is not a .py file or a notebook")
    return Student(entry.name, None, f"not gradable: {entry.name} is not a file or a folder")


GRADABLE = (".py", ".ipynb")  # a notebook's answer cells are graded (judge/notebooks.py)


def _contents(entry: Path) -> tuple[list[str], list[Path]]:
    """One walk of an entry of the class folder, following no link: the symbolic links it is or
    holds, as paths below the class folder (``ann.py``, ``bob/clipping.py``), and the regular
    ``.py`` files in it (for a folder)."""
    if entry.is_symlink():
        return [entry.name + ("/" if entry.is_dir() else "")], []
    if not entry.is_dir():
        return [], []
    links, files = [], []
    for root, folders, names in os.walk(entry):  # os.walk never descends into a linked folder
        for name in folders + names:
            path = Path(root) / name
            if path.is_symlink():
                links.append(str(path.relative_to(entry.parent)))
            elif name.endswith(GRADABLE) and path.is_file():
                files.append(path)
        folders[:] = [f for f in folders if f != ".ipynb_checkpoints"]  # Jupyter's autosaves: not the answer
    return sorted(links), sorted(files)


def read_roster(path: Path) -> dict[str, str]:
    """A two-column roster, ``file or folder name,student id``, as {name: student id} (see
    judge.gradebook.read_people, which also reads a roster with name and email columns)."""
    from judge.gradebook import read_people

    return {person.keys[0]: person.student_id for person in read_people(path)}


def apply_roster(rows: list[dict[str, Any]], roster: dict[str, str], source: str = "roster") -> list[str]:
    """Set ``student_id`` on every row the roster names (by file or folder name, ``ann.py``,
    ``ann`` or ``ann/``); return one line per roster name with no entry and per entry with no
    roster line, so nobody is dropped from the marks in silence."""
    students = {row["student"] for row in rows}
    ids: dict[str, str] = {}
    problems = []
    for name, student_id in roster.items():
        student = name if name in students else name[:-3] if name.endswith(".py") and name[:-3] in students else None
        if student is None:
            problems.append(f"{source}: {name} ({student_id}) has no entry in the class folder")
        else:
            ids[student] = student_id
    for row in rows:
        row["student_id"] = ids.get(row["student"], "")
        if row["student"] not in ids:
            problems.append(f"{source}: no line for {row['student']}; its student_id is left empty")
    return problems


def _sha256(path: Path | None) -> str:
    """The file's digest, or "" when there is no file or it can no longer be read (a row with
    no digest is graded again next time, never reused)."""
    if path is None:
        return ""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return ""
    return digest.hexdigest()


MAX_SUBMISSION_BYTES = 4 << 20  # far above any answer to these exercises; a 10 GB file is no submission
MAX_NOTEBOOK_BYTES = 64 << 20  # a notebook carries its outputs (plots as base64): only its code cells are graded


def _gradable(student: Student) -> Student:
    """A student whose file is too big or unreadable is a row saying so, not grind's error (a
    10 GB sparse file, or one locked with chmod 0, stopped a whole class before anyone was graded)."""
    if student.path is None:
        return student
    shown = student.path.name
    try:
        size = student.path.stat().st_size
        with open(student.path, "rb"):
            pass
    except OSError as exc:
        return Student(student.name, None, f"not gradable: {shown} could not be read ({exc.strerror or exc})")
    cap = MAX_NOTEBOOK_BYTES if student.path.suffix == ".ipynb" else MAX_SUBMISSION_BYTES
    if size > cap:
        return Student(student.name, None, f"not gradable: {shown} is {size / (1 << 20):.0f} MB, over the "
                                           f"{cap >> 20} MB a submission may be")
    return student


# Where a class's submissions are graded: ``executor(exercise, paths, *, limits, on_done, hidden)``
# is called once with every submission still to grade and calls ``on_done(path, verdict_json)``
# as each lands (from one thread or several: grade_class locks); ``hidden`` are folders no
# submission may read. ``local_executor`` below, or ``judge.cluster.DaskExecutor``.
Executor = Callable[..., None]


def local_executor(jobs: int = 2) -> Executor:
    """Grade on this machine, ``jobs`` warm workers at once (``grade_many``)."""

    def run(exercise: Exercise, paths: list[Path], *, limits: Limits | None,
            on_done: Callable[[Path, dict[str, Any]], None], hidden: tuple[Path, ...]) -> None:
        grade_many(exercise, paths, jobs=jobs, limits=limits, hidden=hidden,
                   on_done=lambda path, verdict: on_done(path, verdict.to_json()))

    return run


def grade_class(
    exercise: Exercise,
    submissions: Path,
    out_dir: Path,
    *,
    jobs: int = 2,
    limits: Limits | None = None,
    on_done: Callable[[str, dict[str, Any], bool], None] | None = None,
    executor: Executor | None = None,
    regrade: frozenset[str] | set[str] = frozenset(),
    force: bool = False,
) -> list[dict[str, Any]]:
    """Grade every student, resumably: a student whose submission hash (and the exercise's own
    hash) match a stored result is not graded again. Learners' files are only ever read.
    ``regrade`` (statuses, e.g. ``{"timeout"}``) grades again a stored result with one of those
    statuses, and ``force`` every stored result: a timeout on a busy machine is not the
    student's final mark, yet its hashes match, so resuming alone would keep it forever.

    ``executor`` grades what is left (default: this machine, ``jobs`` at once); whichever it is,
    each verdict lands here and is stored here, one file per student, so a Dask cluster's results
    merge into the same resumable store as a local run's, each student written once.

    Every row carries the exercise's ``max_score`` (its number of cases, or the sum of its cases'
    ``[marks] weights``, which then ride on every row as ``weights``), the same for a crash as for
    a pass. Each student landing appends one line to ``OUT/grade.log``, flushed at once,
    so a run stopped by SIGTERM (or worse) still says how far it got."""
    students = find_students(submissions, exercise)
    problem = weights_problem(exercise)  # before anyone is graded: marks that cannot add up
    if problem is not None:
        raise ManifestError(problem)
    store = out_dir / "graded"
    store.mkdir(parents=True, exist_ok=True)
    # A stored result is reused only if the submission, the exercise and the limits are the same.
    exercise_hash = exercise_key(exercise, extra=repr(limits))
    with open(out_dir / "grade.log", "a", encoding="utf-8", errors="backslashreplace") as log:
        log.write(f"{_now()} grading {len(students)} entries of {submissions} against {exercise.slug}\n")
        log.flush()
        run = _ClassRun(exercise, store, exercise_hash, len(students), log, on_done)
        for student in students:
            run.resume(student, regrade, force)
        if run.todo:
            # The class folder and the outputs are out of every submission's reach: no copying a
            # classmate, no planting a new "student", no editing stored results.
            grade_rest = executor or local_executor(jobs)
            grade_rest(exercise, list(run.todo), limits=limits, on_done=run.landed,
                       hidden=(submissions.resolve(), out_dir.resolve()))
        log.write(f"{_now()} done: {len(students)} entries\n")
    result = [run.rows[s.name] for s in students]
    _mark_out_of(exercise, result)
    return result


class _ClassRun:
    """One class being graded: the rows so far, the students left to grade, and the log each
    landing student is written to (from the executor's threads, hence the lock)."""

    def __init__(self, exercise: Exercise, store: Path, exercise_hash: str, total: int, log: TextIO,
                 on_done: Callable[[str, dict[str, Any], bool], None] | None) -> None:
        self.exercise, self.store, self.exercise_hash = exercise, store, exercise_hash
        self.total, self.log, self.on_done = total, log, on_done
        self.rows: dict[str, dict[str, Any]] = {}
        self.todo: dict[Path, Student] = {}
        self.digests: dict[Path, str] = {}  # the digest of each file to grade, taken before it is graded
        self.answered: set[Path] = set()
        self.lock = threading.Lock()
        self.done = 0

    def report(self, name: str, row: dict[str, Any], reused: bool) -> None:
        with self.lock:
            self.done += 1
            note = " (unchanged, kept)" if reused else ""
            self.log.write(f"{_now()} graded {self.done}/{self.total} {name}: {row['verdict']['status']}{note}\n")
            self.log.flush()
        if self.on_done:
            self.on_done(name, row, reused)

    def resume(self, student: Student, regrade: frozenset[str] | set[str], force: bool) -> None:
        """Keep the student's stored result if it still stands, store an entry that is no
        submission as an error, or leave the student to grade."""
        digest = _sha256(student.path)
        saved = self.store / f"{student.name}.json"
        try:
            old = json.loads(saved.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = None
        again = force or (old is not None and (old.get("verdict") or {}).get("status") in regrade)
        if old and not again and old.get("sha256") == digest and old.get("exercise_hash") == self.exercise_hash:
            self.rows[student.name] = old
            self.report(student.name, old, True)
        elif student.path is None:
            verdict = Verdict(exercise=self.exercise.slug, status=Status.ERROR, message=student.problem)
            self.rows[student.name] = _save(saved, student.name, digest, self.exercise_hash, verdict.to_json())
            self.report(student.name, self.rows[student.name], False)
        else:
            self.todo[student.path] = student
            self.digests[student.path] = digest  # of what is graded: the file may change meanwhile

    def landed(self, path: Path, verdict: dict[str, Any]) -> None:
        student = self.todo[path]
        with self.lock:
            if path in self.answered:  # an executor that answered twice: the first answer stands
                return
            self.answered.add(path)
        row = _save(self.store / f"{student.name}.json", student.name, self.digests.get(path, ""), self.exercise_hash,
                    verdict)
        self.rows[student.name] = row
        self.report(student.name, row, False)


def _mark_out_of(exercise: Exercise, result: list[dict[str, Any]]) -> None:
    """Every row's ``max_score``: from the weights, or the number of cases graded."""
    if exercise.weights or exercise.partial:
        weigh(result, dict(exercise.weights), case_names(exercise), exercise.partial)
        return
    graded = [len(r["verdict"].get("checks") or []) for r in result if r["verdict"]["status"] in ("passed", "failed")]
    max_score = max(graded) if graded else (case_count(exercise) if result else 1)
    for row in result:
        row["max_score"] = max_score


def weights_problem(exercise: Exercise) -> str | None:
    """Why the exercise's ``[marks] weights`` cannot mark a class, or None: a weight for a case
    its checks do not have (a typo would silently leave that case worth 1), or nothing worth
    anything. Needs the cases, so the reference (cached after the first run)."""
    if not exercise.weights:
        return None
    cases = case_names(exercise)
    for case, _ in exercise.weights:
        if case not in cases:
            return (f"{exercise.exercise_dir / 'exercise.toml'}: [marks] weights names case '{case}', which "
                    f"the checks do not have (cases: {', '.join(cases)})")
    if not sum(dict(exercise.weights).get(case, 1.0) for case in cases):
        return f"{exercise.exercise_dir / 'exercise.toml'}: [marks] weights make every case worth 0"
    return None


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _save(path: Path, student: str, digest: str, exercise_hash: str, verdict: dict[str, Any]) -> dict[str, Any]:
    """Store one student's result, atomically: a run killed here leaves the previous result (or
    none), never a truncated one. The temporary name is unique to the writer: ``with_suffix``
    gave students ``a.b`` and ``a.c`` the same ``a.tmp``, written by two threads at once."""
    row = {"student": student, "sha256": digest, "exercise_hash": exercise_hash, "verdict": verdict}
    write_atomic(path, json.dumps(row))
    return row
