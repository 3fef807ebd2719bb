"""The learner's progress: every graded run, every hint, every review, every quiz answer, in one
SQLite file.

Why SQLite (the stdlib ``sqlite3``) rather than a JSON file: learners run ``grind watch`` in one
terminal and ``grind run`` or ``grind hint`` in another, and a JSON file rewritten by two
processes loses whichever write lands first. Here:

- the database is in WAL mode, so readers never block the writer and a process killed in the
  middle of a write (kill -9, a closed laptop) leaves the last committed state intact;
- each record is one short ``BEGIN IMMEDIATE`` transaction, so concurrent ``grind`` processes
  queue for the write lock (``timeout``) instead of failing or overwriting each other;
- ``synchronous=FULL`` because a record is written once per grade (seconds apart): the cost of
  one fsync is nothing next to losing the attempt that finally passed;
- the schema is versioned with ``PRAGMA user_version`` and append-only migrations, applied in
  the same transaction that checks the version, so two processes opening an old file at once
  migrate it exactly once.

Times are Unix seconds (UTC). Nothing here imports rich, typer or fsrs: the card a review
produces is stored as the opaque JSON that ``judge.scheduling`` gives it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from judge.sha import sha256
from pathlib import Path
from typing import Any, Callable, Iterator

from judge.errors import EnvironmentProblem, JudgeError
from judge.models import CheckStatus, Verdict

# Append-only: a released migration is never edited, a change is a new entry. Entry i brings
# the schema from version i to i + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 1: attempts and hints
        """CREATE TABLE attempts (
            id INTEGER PRIMARY KEY,
            exercise TEXT NOT NULL,
            started_at REAL NOT NULL,          -- grading began
            ended_at REAL NOT NULL,            -- the verdict arrived
            verdict TEXT NOT NULL,             -- a models.Status value
            checks_passed INTEGER NOT NULL,
            checks_total INTEGER NOT NULL,
            pitfall TEXT,                      -- the diagnosed pitfall's slug
            hints_used INTEGER NOT NULL,       -- hints revealed in this sitting so far
            mode TEXT NOT NULL,                -- run | watch | practice | interview | imported
            submission_hash TEXT NOT NULL,     -- sha256 of the graded source
            sitting_started_at REAL            -- when work on it began, where grind knows
        )""",
        "CREATE INDEX attempts_by_exercise ON attempts (exercise, ended_at)",
        "CREATE TABLE hints (id INTEGER PRIMARY KEY, exercise TEXT NOT NULL, shown_at REAL NOT NULL)",
        "CREATE INDEX hints_by_exercise ON hints (exercise, shown_at)",
    ),
    (  # 2: spaced repetition (the card is judge.scheduling's JSON)
        "CREATE TABLE cards (exercise TEXT PRIMARY KEY, card TEXT NOT NULL, due REAL NOT NULL, "
        "reviewed_at REAL NOT NULL)",
        "CREATE TABLE reviews (id INTEGER PRIMARY KEY, exercise TEXT NOT NULL, reviewed_at REAL NOT NULL, "
        "rating TEXT NOT NULL, due REAL NOT NULL)",
    ),
    (  # 3: interview mode
        """CREATE TABLE interviews (
            id INTEGER PRIMARY KEY,
            exercise TEXT NOT NULL,
            started_at REAL NOT NULL,
            deadline REAL NOT NULL,
            ended_at REAL,
            outcome TEXT                       -- passed | timeout, NULL while it runs
        )""",
        "CREATE INDEX interviews_by_exercise ON interviews (exercise, started_at)",
    ),
    (  # 4: quiz answers (judge.quiz); a card's schedule is in cards/reviews as "quiz:<id>"
        """CREATE TABLE quiz_answers (
            id INTEGER PRIMARY KEY,
            card TEXT NOT NULL,                -- the card's id
            answered_at REAL NOT NULL,
            answer TEXT NOT NULL,              -- what the learner typed
            correct INTEGER NOT NULL,
            mistake TEXT,                      -- the named wrong answer it matched
            mode TEXT NOT NULL                 -- quiz | answer | practice
        )""",
        "CREATE INDEX quiz_answers_by_card ON quiz_answers (card, answered_at)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
TABLES = ("attempts", "hints", "cards", "reviews", "interviews", "quiz_answers")
SITTING_GAP_S = 3600.0  # an hour without activity on an exercise ends a sitting


@dataclass(frozen=True)
class Attempt:
    """One graded run, as stored."""

    exercise: str
    started_at: float
    ended_at: float
    verdict: str
    checks_passed: int
    checks_total: int
    pitfall: str | None
    hints_used: int
    mode: str
    submission_hash: str
    sitting_started_at: float | None = None
    id: int | None = None

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"

    @property
    def time_to_pass(self) -> float | None:
        """Seconds from the start of the sitting to this pass; None when grind cannot know
        (a first-try ``grind run`` pass: grind did not see the learner start)."""
        if not self.passed or self.sitting_started_at is None:
            return None
        return max(0.0, self.ended_at - self.sitting_started_at)

    @classmethod
    def of(cls, verdict: Verdict, source: str, *, started_at: float, ended_at: float, hints_used: int,
           mode: str, sitting_started_at: float | None) -> Attempt:
        """The attempt a verdict stands for. ``source`` is the text that was graded (not the
        file re-read afterwards, which may have changed while grading ran)."""
        return cls(
            exercise=verdict.exercise,
            started_at=started_at,
            ended_at=ended_at,
            verdict=verdict.status.value,
            checks_passed=sum(1 for c in verdict.checks if c.status is CheckStatus.PASSED),
            checks_total=len(verdict.checks),
            pitfall=verdict.diagnosis.slug if verdict.diagnosis else None,
            hints_used=hints_used,
            mode=mode,
            submission_hash=source_hash(source),
            sitting_started_at=sitting_started_at,
        )


def source_hash(source: str) -> str:
    return sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Interview:
    id: int
    exercise: str
    started_at: float
    deadline: float
    ended_at: float | None
    outcome: str | None

    def remaining(self, now: float) -> float:
        return max(0.0, self.deadline - now)

    def running(self, now: float) -> bool:
        """Still on: not passed and the clock has not run out."""
        return self.ended_at is None and now < self.deadline


@dataclass(frozen=True)
class QuizAnswer:
    """One answer to a quiz card, as stored."""

    card: str
    answered_at: float
    answer: str
    correct: bool
    mistake: str | None
    mode: str


@dataclass(frozen=True)
class StoredCard:
    card: str
    due: float
    reviewed_at: float


@dataclass
class ExerciseProgress:
    """One row of ``grind progress``."""

    slug: str
    status: str  # new | attempted | passed
    attempts: int
    best_time_s: float | None
    best_interview_s: float | None
    last_practised: float | None
    next_review: float | None
    hints_shown: int

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("last_practised", "next_review"):
            data[key] = iso(data[key])
        return data


@dataclass
class Overview:
    """Everything ``grind progress`` shows."""

    exercises: list[ExerciseProgress]
    now: float
    streak_days: int

    @property
    def attempts(self) -> int:
        return sum(e.attempts for e in self.exercises)

    @property
    def passed(self) -> int:
        return sum(1 for e in self.exercises if e.status == "passed")

    @property
    def due(self) -> int:
        return sum(1 for e in self.exercises if e.next_review is not None and e.next_review <= self.now)

    def to_json(self) -> dict[str, Any]:
        return {
            "exercises": [e.to_json() for e in self.exercises],
            "totals": {"exercises": len(self.exercises), "passed": self.passed, "attempts": self.attempts,
                       "due": self.due},
            "streak_days": self.streak_days,
        }


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """A damaged or foreign file, as opposed to a busy one (locked) or one we may not open."""
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError):
        return "malformed" in text or "not a database" in text
    return "locked" not in text and "busy" not in text


def iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def streak(days: set[date], today: date) -> int:
    """Consecutive days with practice, ending today, or yesterday when today has none yet (the
    streak is not broken until the day is over)."""
    day = today if today in days else today - timedelta(days=1)
    count = 0
    while day in days:
        count += 1
        day -= timedelta(days=1)
    return count


class Progress:
    """The progress database at ``path``. Reads of a database that does not exist yet return
    the empty answers without creating it, so ``grind list`` leaves no file behind."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time, timeout: float = 30.0,
                 warn: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.clock = clock
        self.timeout = timeout
        self.warn = warn
        self.warnings: list[str] = []  # what was said through ``warn`` (kept when there is none)
        self._conn: sqlite3.Connection | None = None

    # -- connection and schema ---------------------------------------------------------------

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        if self._conn is not None:
            return self._conn
        if not create and not self.path.exists():
            return None
        self._check_in_the_way()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = self._open()
        except sqlite3.DatabaseError as exc:
            if not _corrupt(exc):
                raise JudgeError(f"{self.path}: cannot use the progress database ({exc})") from None
            # A damaged file must not stop grading, and must not be lost either: keep it beside
            # the fresh one, and say so once.
            kept = self._move_aside()
            self._say(f"{self.path} was damaged ({exc}); kept it as {kept.name} and started a fresh one.")
            try:
                conn = self._open()
            except sqlite3.DatabaseError as again:
                raise JudgeError(f"{self.path}: cannot use the progress database ({again})") from None
        self._conn = conn
        return conn

    def _check_in_the_way(self) -> None:
        """A file where grind's folder goes, or a folder where the database goes: not a bug in
        grind (exit 4) nor damage to move aside, but something on this machine to move away."""
        folder = self.path.parent
        if folder.exists() and not folder.is_dir():
            raise EnvironmentProblem(f"{folder} is not a folder, and grind keeps its progress in a folder "
                                     "there: move it away (nothing of grind's is in it)")
        if self.path.is_dir():
            raise EnvironmentProblem(f"{self.path} is a folder, and grind keeps its progress in a file there: "
                                     "move it away")

    def _open(self) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; every write below says where its
        # transaction begins and ends.
        conn = sqlite3.connect(str(self.path), timeout=self.timeout, isolation_level=None)
        try:
            self._wal(conn)
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _move_aside(self) -> Path:
        """Rename the damaged database (and its WAL files) to ``progress.db.corrupt-TIME``."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.clock()))
        kept, n = self.path.with_name(f"{self.path.name}.corrupt-{stamp}"), 1
        while kept.exists():
            kept, n = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}"), n + 1
        for suffix in ("", "-wal", "-shm"):
            try:
                os.replace(f"{self.path}{suffix}", f"{kept}{suffix}")
            except FileNotFoundError:  # another grind moved it first, or there was no WAL
                pass
        return kept

    def _say(self, message: str) -> None:
        self.warnings.append(message)
        if self.warn is not None:
            self.warn(message)

    @staticmethod
    def _wal(conn: sqlite3.Connection) -> None:
        # Switching to WAL needs a moment of exclusive access; a second process doing the same
        # at the same instant sees "locked" without the busy handler being consulted. WAL is
        # persistent, so whoever wins has done it for everyone.
        for delay in (0.0, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0):
            time.sleep(delay)
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                    return
                conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
        conn.execute("PRAGMA journal_mode=WAL")

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        with self._tx(conn):
            version = conn.execute("PRAGMA user_version").fetchone()[0]  # re-read under the lock
            if version > SCHEMA_VERSION:
                raise JudgeError(f"{self.path} was written by a newer grind (schema {version}, this one knows "
                                 f"{SCHEMA_VERSION}); upgrade grind")
            for statements in MIGRATIONS[version:]:
                for statement in statements:
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @staticmethod
    @contextmanager
    def _tx(conn: sqlite3.Connection) -> Iterator[None]:
        # IMMEDIATE takes the write lock up front, so two writers queue here rather than both
        # reading and then one failing to upgrade its lock.
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._connect(create=True)
        assert conn is not None
        with self._tx(conn):
            yield conn

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        conn = self._connect(create=False)
        return [] if conn is None else conn.execute(sql, args).fetchall()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes: one transaction each --------------------------------------------------------

    def record_attempt(self, attempt: Attempt) -> int:
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO attempts (exercise, started_at, ended_at, verdict, checks_passed, checks_total, "
                "pitfall, hints_used, mode, submission_hash, sitting_started_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (attempt.exercise, attempt.started_at, attempt.ended_at, attempt.verdict, attempt.checks_passed,
                 attempt.checks_total, attempt.pitfall, attempt.hints_used, attempt.mode, attempt.submission_hash,
                 attempt.sitting_started_at),
            )
            return int(cursor.lastrowid or 0)

    def record_hint(self, slug: str, at: float | None = None) -> None:
        with self._write() as conn:
            conn.execute("INSERT INTO hints (exercise, shown_at) VALUES (?, ?)",
                         (slug, self.clock() if at is None else at))

    def save_review(self, slug: str, card: str, due: float, rating: str, at: float) -> None:
        with self._write() as conn:
            self._save_review(conn, slug, card, due, rating, at)

    @staticmethod
    def _save_review(conn: sqlite3.Connection, slug: str, card: str, due: float, rating: str, at: float) -> None:
        conn.execute("INSERT INTO cards (exercise, card, due, reviewed_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT (exercise) DO UPDATE SET card = excluded.card, due = excluded.due, "
                     "reviewed_at = excluded.reviewed_at", (slug, card, due, at))
        conn.execute("INSERT INTO reviews (exercise, reviewed_at, rating, due) VALUES (?, ?, ?, ?)",
                     (slug, at, rating, due))

    def record_quiz_answer(self, card_id: str, answer: str, correct: bool, mistake: str | None, mode: str,
                           at: float, key: str, schedule: tuple[str, float, str] | None) -> None:
        """Store one quiz answer and, when it counted as a review, the card's new schedule
        (``schedule`` is the FSRS card's JSON, its due time and the rating; ``key`` names it in
        ``cards``): one transaction, so an answer is never kept without its schedule or the reverse."""
        with self._write() as conn:
            conn.execute("INSERT INTO quiz_answers (card, answered_at, answer, correct, mistake, mode) "
                         "VALUES (?, ?, ?, ?, ?, ?)", (card_id, at, answer, int(correct), mistake, mode))
            if schedule is not None:
                card, due, rating = schedule
                self._save_review(conn, key, card, due, rating, at)

    def start_interview(self, slug: str, started_at: float, deadline: float) -> Interview:
        with self._write() as conn:
            cursor = conn.execute("INSERT INTO interviews (exercise, started_at, deadline) VALUES (?, ?, ?)",
                                  (slug, started_at, deadline))
            return Interview(int(cursor.lastrowid or 0), slug, started_at, deadline, None, None)

    def finish_interview(self, interview_id: int, at: float, outcome: str) -> None:
        with self._write() as conn:
            conn.execute("UPDATE interviews SET ended_at = ?, outcome = ? WHERE id = ? AND ended_at IS NULL",
                         (at, outcome, interview_id))

    def reset(self) -> None:
        """Forget everything (the schema stays)."""
        with self._write() as conn:
            for table in TABLES:
                conn.execute(f"DELETE FROM {table}")  # noqa: S608 - table names are constants

    # -- reads -------------------------------------------------------------------------------

    def attempts(self, slug: str | None = None) -> list[Attempt]:
        columns = ("exercise, started_at, ended_at, verdict, checks_passed, checks_total, pitfall, hints_used, "
                   "mode, submission_hash, sitting_started_at, id")
        if slug is None:
            rows = self._rows(f"SELECT {columns} FROM attempts ORDER BY ended_at, id")
        else:
            rows = self._rows(f"SELECT {columns} FROM attempts WHERE exercise = ? ORDER BY ended_at, id", (slug,))
        return [Attempt(*row) for row in rows]

    def last_attempt(self, slug: str) -> Attempt | None:
        rows = self._rows("SELECT exercise, started_at, ended_at, verdict, checks_passed, checks_total, pitfall, "
                          "hints_used, mode, submission_hash, sitting_started_at, id FROM attempts "
                          "WHERE exercise = ? ORDER BY ended_at DESC, id DESC LIMIT 1", (slug,))
        return Attempt(*rows[0]) if rows else None

    def last_exercise(self) -> str | None:
        """The exercise of the latest graded attempt (what a bare ``grind run`` runs)."""
        rows = self._rows("SELECT exercise FROM attempts ORDER BY ended_at DESC, id DESC LIMIT 1")
        return rows[0][0] if rows else None

    def passed_with(self, slug: str, submission_hash: str) -> bool:
        """Whether exactly this source has passed ``slug`` before."""
        return bool(self._rows("SELECT 1 FROM attempts WHERE exercise = ? AND verdict = 'passed' AND "
                               "submission_hash = ? LIMIT 1", (slug, submission_hash)))

    def last_pass(self, slug: str) -> float | None:
        """When ``slug`` was last passed (None: never)."""
        return self._last_pass(slug)

    def _last_pass(self, slug: str) -> float | None:
        rows = self._rows("SELECT MAX(ended_at) FROM attempts WHERE exercise = ? AND verdict = 'passed'", (slug,))
        return rows[0][0] if rows else None

    def hints_shown(self, slug: str, since: float | None = None) -> int:
        """Hints revealed since the last pass (and since ``since``, when given). A pass closes
        a sitting, so a review weeks later starts again from hint 1 instead of where the first
        sitting stopped."""
        floor = max(t for t in (self._last_pass(slug), since, -1.0) if t is not None)
        rows = self._rows("SELECT COUNT(*) FROM hints WHERE exercise = ? AND shown_at >= ?", (slug, floor))
        return int(rows[0][0]) if rows else 0

    def hints_revealed(self, slug: str) -> int:
        """How many hints the learner has seen on ``slug``: the most revealed in any one sitting
        (the hints are revealed in order, so this many stay readable with ``grind hint --all``
        even after a pass has closed the sitting they were revealed in)."""
        passes = [t for (t,) in self._rows("SELECT ended_at FROM attempts WHERE exercise = ? AND verdict = 'passed' "
                                            "ORDER BY ended_at", (slug,))]
        counts = [0] * (len(passes) + 1)
        for (shown_at,) in self._rows("SELECT shown_at FROM hints WHERE exercise = ?", (slug,)):
            counts[sum(1 for t in passes if t <= shown_at)] += 1  # the sitting it was revealed in
        return max(counts)

    def passed(self, slug: str) -> bool:
        return self._last_pass(slug) is not None

    def status(self, slug: str) -> str:
        rows = self._rows("SELECT COUNT(*), SUM(verdict = 'passed') FROM attempts WHERE exercise = ?", (slug,))
        count, passes = rows[0] if rows else (0, 0)
        if passes:
            return "passed"
        return "attempted" if count else "new"

    def card(self, slug: str) -> StoredCard | None:
        rows = self._rows("SELECT card, due, reviewed_at FROM cards WHERE exercise = ?", (slug,))
        return StoredCard(*rows[0]) if rows else None

    def reviews(self, slug: str) -> list[tuple[float, str, float]]:
        """(reviewed_at, rating, due) for each review of ``slug``, oldest first."""
        return [(r[0], r[1], r[2]) for r in self._rows(
            "SELECT reviewed_at, rating, due FROM reviews WHERE exercise = ? ORDER BY reviewed_at, id", (slug,))]

    def quiz_answers(self, card_id: str | None = None) -> list[QuizAnswer]:
        """Every answer to quiz cards (or to one card), oldest first."""
        columns = "card, answered_at, answer, correct, mistake, mode"
        rows = (self._rows(f"SELECT {columns} FROM quiz_answers ORDER BY answered_at, id") if card_id is None else
                self._rows(f"SELECT {columns} FROM quiz_answers WHERE card = ? ORDER BY answered_at, id", (card_id,)))
        return [QuizAnswer(c, t, a, bool(ok), m, mode) for c, t, a, ok, m, mode in rows]

    def interview(self, slug: str) -> Interview | None:
        """The latest interview on ``slug``, finished or not."""
        rows = self._rows("SELECT id, exercise, started_at, deadline, ended_at, outcome FROM interviews "
                          "WHERE exercise = ? ORDER BY started_at DESC, id DESC LIMIT 1", (slug,))
        return Interview(*rows[0]) if rows else None

    def running_interview(self, slug: str, now: float | None = None) -> Interview | None:
        interview = self.interview(slug)
        now = self.clock() if now is None else now
        return interview if interview is not None and interview.running(now) else None

    def sitting_start(self, slug: str, now: float, gap: float = SITTING_GAP_S) -> float | None:
        """When the learner began the sitting that ``now`` belongs to, or None when ``now``
        starts a new one. A sitting is the activity (runs, hints) on one exercise since its
        last pass, with no pause longer than ``gap``."""
        since = self._last_pass(slug)
        floor = -1.0 if since is None else since
        events = [(s if s is not None else a, e) for a, e, s in self._rows(
            "SELECT started_at, ended_at, sitting_started_at FROM attempts WHERE exercise = ? AND ended_at > ?",
            (slug, floor))]
        events += [(t, t) for (t,) in self._rows("SELECT shown_at FROM hints WHERE exercise = ? AND shown_at > ?",
                                                 (slug, floor))]
        start, cursor = None, now
        for begun, ended in sorted(events, key=lambda ev: ev[1], reverse=True):
            if cursor - ended > gap:
                break
            start = begun if start is None else min(start, begun)
            cursor = min(cursor, begun)
        return start

    def overview(self, slugs: list[str], now: float | None = None) -> Overview:
        now = self.clock() if now is None else now
        by_slug: dict[str, list[Attempt]] = {}
        for attempt in self.attempts():
            by_slug.setdefault(attempt.exercise, []).append(attempt)
        rows = [self._exercise_progress(slug, by_slug.get(slug, [])) for slug in slugs]
        days = {datetime.fromtimestamp(a.ended_at).date() for group in by_slug.values() for a in group}
        days |= {datetime.fromtimestamp(t).date() for (t,) in self._rows("SELECT answered_at FROM quiz_answers")}
        return Overview(rows, now, streak(days, datetime.fromtimestamp(now).date()))

    def _exercise_progress(self, slug: str, attempts: list[Attempt]) -> ExerciseProgress:
        times = [a.time_to_pass for a in attempts if a.time_to_pass is not None]
        interview_times = [a.time_to_pass for a in attempts if a.time_to_pass is not None and a.mode == "interview"]
        card = self.card(slug)
        return ExerciseProgress(
            slug=slug,
            status="passed" if any(a.passed for a in attempts) else "attempted" if attempts else "new",
            attempts=len(attempts),
            best_time_s=min(times) if times else None,
            best_interview_s=min(interview_times) if interview_times else None,
            last_practised=max(a.ended_at for a in attempts) if attempts else None,
            next_review=card.due if card else None,
            hints_shown=self.hints_shown(slug),
        )
