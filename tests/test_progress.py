"""Progress in SQLite: what an attempt records, the schema and its migrations, the progress
table, and that kill -9 and concurrent writers lose and corrupt nothing."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from judge.cli import app
from judge.errors import JudgeError
from judge.models import CheckResult, CheckStatus, Diagnosis, Status, Verdict
from judge.progress import MIGRATIONS, SCHEMA_VERSION, Attempt, Progress, streak
from judge.render import render_progress
from judge.status import ExitStatus

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
DAY = 86400.0


def verdict(status: Status = Status.FAILED, passed: int = 4, total: int = 12, pitfall: str | None = "per-tensor",
            exercise: str = "clipping") -> Verdict:
    checks = [CheckResult(f"c{i}", "edge", CheckStatus.PASSED if i < passed else CheckStatus.FAILED)
              for i in range(total)]
    diagnosis = Diagnosis(pitfall, "per-tensor clipping", "...", "...") if pitfall else None
    return Verdict(exercise, status, checks, diagnosis=diagnosis)


def attempt(slug: str = "clipping", at: float = 1_700_000_000.0, status: str = "failed", mode: str = "run",
            sitting: float | None = None, tag: str = "x") -> Attempt:
    return Attempt(slug, at - 2, at, status, 0, 12, None, 0, mode, tag, sitting)


def test_an_attempt_records_every_field(tmp_path: Path) -> None:
    """A graded run is stored with exercise, start, end, verdict, checks passed/total, the diagnosed
    pitfall, hints used, mode and the sha256 of the graded source, and reads back unchanged."""
    source = "def clip_grad_norm_(parameters, max_norm):\n    return 0\n"
    made = Attempt.of(verdict(), source, started_at=100.0, ended_at=102.5, hints_used=2, mode="watch",
                      sitting_started_at=40.0)
    with Progress(tmp_path / "p.db") as progress:
        progress.record_attempt(made)
        (stored,) = progress.attempts("clipping")
    assert (stored.exercise, stored.started_at, stored.ended_at, stored.verdict) == ("clipping", 100.0, 102.5, "failed")
    assert (stored.checks_passed, stored.checks_total, stored.pitfall) == (4, 12, "per-tensor")
    assert (stored.hints_used, stored.mode, stored.sitting_started_at) == (2, "watch", 40.0)
    assert stored.submission_hash == hashlib.sha256(source.encode()).hexdigest()
    assert stored.time_to_pass is None  # a failure has no time to pass


def test_the_database_is_wal_and_versioned(tmp_path: Path) -> None:
    """The file is in WAL mode and carries its schema version in PRAGMA user_version."""
    with Progress(tmp_path / "p.db") as progress:
        progress.record_hint("clipping")
    conn = sqlite3.connect(tmp_path / "p.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == len(MIGRATIONS)


def test_an_old_schema_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    """A database at schema 1 (attempts and hints only) is brought up to date on open, and the
    attempts already in it survive; the new tables work."""
    db = tmp_path / "p.db"
    conn = sqlite3.connect(db)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("INSERT INTO attempts (exercise, started_at, ended_at, verdict, checks_passed, checks_total, "
                 "hints_used, mode, submission_hash) VALUES ('clipping', 1, 2, 'passed', 12, 12, 0, 'run', 'h')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Progress(db) as progress:
        assert progress.passed("clipping") and len(progress.attempts()) == 1
        progress.save_review("clipping", "{}", 10.0, "good", 2.0)
        assert progress.card("clipping") is not None
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_newer_schema_is_refused_in_one_line(tmp_path: Path) -> None:
    """A database from a newer grind is not touched: a judge error says to upgrade."""
    db = tmp_path / "p.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(JudgeError, match="newer grind"):
        Progress(db).record_hint("clipping")


def test_a_corrupt_database_is_moved_aside_and_a_fresh_one_started(tmp_path: Path) -> None:
    """A damaged file is kept (renamed, named in one warning), and grind goes on with a fresh one."""
    db = tmp_path / "p.db"
    db.write_bytes(b"this is not sqlite" * 100)
    said: list[str] = []
    with Progress(db, warn=said.append) as progress:
        assert progress.status("clipping") == "new"
        progress.record_hint("clipping")
        assert progress.hints_shown("clipping") == 1
    (kept,) = tmp_path.glob("p.db.corrupt-*")
    assert kept.read_bytes() == b"this is not sqlite" * 100
    assert len(said) == 1 and kept.name in said[0] and "\n" not in said[0]


def test_a_corrupt_database_does_not_stop_grading_or_reset(workspace: Path) -> None:
    """`grind run` grades and records, and `grind progress --reset` works, on a damaged progress.db."""
    db = workspace / ".grind" / "progress.db"
    db.parent.mkdir(exist_ok=True)
    db.write_bytes(b"garbage" * 500)
    ran = runner.invoke(app, ["run", "clipping"])
    assert ran.exit_code == ExitStatus.FAILED, ran.output
    assert "kept it as progress.db.corrupt-" in ran.output and "FAILED" in ran.output
    assert Progress(db).status("clipping") == "attempted"
    for wal in db.parent.glob("progress.db-*"):
        wal.unlink()
    db.write_bytes(b"garbage" * 500)
    reset = runner.invoke(app, ["progress", "--reset", "--yes"])
    assert reset.exit_code == 0 and "Progress cleared" in reset.output
    assert len(list(db.parent.glob("progress.db.corrupt-*"))) == 2


def test_hints_revealed_stay_readable_after_a_pass(tmp_path: Path) -> None:
    """The hints seen in a sitting stay revealed once it ends with a pass (for `grind hint --all`)."""
    with Progress(tmp_path / "p.db") as progress:
        progress.record_hint("clipping", at=10.0)
        progress.record_hint("clipping", at=20.0)
        progress.record_attempt(attempt(at=30.0, status="passed"))
        assert progress.hints_revealed("clipping") == 2
        progress.record_hint("clipping", at=40.0)
        assert progress.hints_revealed("clipping") == 2 and progress.hints_shown("clipping") == 1


def test_reads_do_not_create_the_database(tmp_path: Path) -> None:
    """Listing or checking status before anything is recorded leaves no file behind."""
    progress = Progress(tmp_path / "sub" / "p.db")
    assert progress.status("clipping") == "new" and progress.hints_shown("clipping") == 0
    assert progress.attempts() == [] and progress.card("clipping") is None
    assert not (tmp_path / "sub").exists()


def test_hints_restart_after_a_pass(tmp_path: Path) -> None:
    """Hints count within a sitting: after a pass, a later review starts again from hint 1."""
    with Progress(tmp_path / "p.db") as progress:
        progress.record_hint("clipping", at=10.0)
        progress.record_hint("clipping", at=20.0)
        assert progress.hints_shown("clipping") == 2
        progress.record_attempt(attempt(at=30.0, status="passed"))
        assert progress.hints_shown("clipping") == 0
        progress.record_hint("clipping", at=40.0)
        assert progress.hints_shown("clipping") == 1


def test_a_sitting_spans_activity_until_a_pause_or_a_pass(tmp_path: Path) -> None:
    """The sitting's start is its first hint or run; an hour's pause or a pass starts a new one,
    and a run that starts a sitting has no known start (a first-try pass is not timed)."""
    t = 1_700_000_000.0
    with Progress(tmp_path / "p.db") as progress:
        assert progress.sitting_start("clipping", t) is None
        progress.record_hint("clipping", at=t)
        progress.record_attempt(attempt(at=t + 600))
        assert progress.sitting_start("clipping", t + 900) == t
        assert progress.sitting_start("clipping", t + 600 + 2 * 3600) is None  # after a long pause
        progress.record_attempt(attempt(at=t + 1200, status="passed", sitting=t))
        assert progress.sitting_start("clipping", t + 1300) is None  # a pass closes the sitting
        assert progress.attempts("clipping")[-1].time_to_pass == 1200


def test_streak_counts_consecutive_days() -> None:
    """Days in a row with practice, ending today or yesterday; a missed day breaks it."""
    today = datetime(2025, 3, 10).date()
    days = {today - timedelta(days=n) for n in (0, 1, 2, 4)}
    assert streak(days, today) == 3
    assert streak(days - {today}, today) == 2  # yesterday still counts until today is over
    assert streak({today - timedelta(days=2)}, today) == 0


def _seeded(progress: Progress, now: float) -> None:
    progress.record_attempt(attempt(at=now - 2 * DAY, tag="a"))
    progress.record_attempt(attempt(at=now - 2 * DAY + 300, status="passed", sitting=now - 2 * DAY - 600, tag="b"))
    progress.record_attempt(attempt(at=now - DAY, status="passed", mode="interview", sitting=now - DAY - 420, tag="c"))
    progress.record_attempt(attempt("adam", at=now - 60, tag="d"))
    progress.save_review("clipping", "{}", now + 2 * DAY, "good", now - DAY)
    progress.save_review("adam", "{}", now - 10, "again", now - 60)


def test_overview_has_status_best_time_attempts_last_practised_next_review_and_totals(tmp_path: Path) -> None:
    """Per exercise: status, best time to pass (interview too), attempts, last practised and next
    review; totals count passes, attempts and what is due; the streak counts the days."""
    now = time.time()
    with Progress(tmp_path / "p.db") as progress:
        _seeded(progress, now)
        overview = progress.overview(["clipping", "adam", "lr-schedule"], now)
    clipping, adam, lr = overview.exercises
    assert (clipping.status, clipping.attempts, clipping.best_time_s, clipping.best_interview_s) == \
        ("passed", 3, 420, 420)
    assert clipping.last_practised == pytest.approx(now - DAY) and clipping.next_review == pytest.approx(now + 2 * DAY)
    assert (adam.status, adam.attempts, adam.best_time_s) == ("attempted", 1, None)
    assert (lr.status, lr.attempts, lr.last_practised, lr.next_review) == ("new", 0, None, None)
    assert (overview.passed, overview.attempts, overview.due, overview.streak_days) == (1, 4, 1, 3)
    data = overview.to_json()
    assert data["totals"] == {"exercises": 3, "passed": 1, "attempts": 4, "due": 1} and data["streak_days"] == 3
    assert data["exercises"][0]["best_time_s"] == 420 and data["exercises"][0]["next_review"].startswith("20")


def test_progress_table_renders_each_column(tmp_path: Path) -> None:
    """The plain rendering (pipes, logs) shows every column and the totals line with the streak."""
    now = time.time()
    with Progress(tmp_path / "p.db") as progress:
        _seeded(progress, now)
        overview = progress.overview(["clipping", "adam", "lr-schedule"], now)
    out = StringIO()
    render_progress(Console(file=out, width=100), overview)
    lines = out.getvalue().splitlines()
    clipping = next(line for line in lines if line.startswith("clipping"))
    assert "passed" in clipping and "7:00" in clipping and "yesterday" in clipping and "in 2 days" in clipping
    adam = next(line for line in lines if line.startswith("adam"))
    assert "attempted" in adam and "today" in adam and adam.rstrip().endswith("now")
    assert "1 of 3 passed · 4 attempts · 1 due now · streak: 3 days" in lines[-1]
    rich_out = StringIO()
    render_progress(Console(file=rich_out, width=100, force_terminal=True), overview)
    assert "best time" in rich_out.getvalue() and "next review" in rich_out.getvalue()


@pytest.fixture()
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "user-state"))
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["init", "ws"]).exit_code == 0
    monkeypatch.chdir(tmp_path / "ws")
    return tmp_path / "ws"


def test_grind_progress_command_table_json_and_reset_with_confirmation(workspace: Path) -> None:
    """`grind progress` prints the table, `--json` the same data, and `--reset` asks first."""
    with Progress(workspace / ".grind" / "progress.db") as progress:
        _seeded(progress, time.time())
    table = runner.invoke(app, ["progress"])
    assert table.exit_code == 0 and "streak: 3 days" in table.output
    data = json.loads(runner.invoke(app, ["progress", "--json"]).output)
    assert next(e for e in data["exercises"] if e["slug"] == "clipping")["attempts"] == 3
    kept = runner.invoke(app, ["progress", "--reset"], input="n\n")
    assert kept.exit_code == ExitStatus.USAGE and "Nothing changed" in kept.output
    assert json.loads(runner.invoke(app, ["progress", "--json"]).output)["totals"]["attempts"] == 4
    cleared = runner.invoke(app, ["progress", "--reset"], input="y\n")
    assert cleared.exit_code == 0
    assert json.loads(runner.invoke(app, ["progress", "--json"]).output)["totals"]["attempts"] == 0


def test_grind_reset_all_asks_then_restores_every_stub(workspace: Path) -> None:
    """`grind reset --all` confirms first, then puts every stub back and backs up every file."""
    mine = workspace / "clipping" / "clipping.py"
    mine.write_text("# my work\n")
    refused = runner.invoke(app, ["reset", "--all"], input="n\n")
    assert refused.exit_code == ExitStatus.USAGE and mine.read_text() == "# my work\n"
    done = runner.invoke(app, ["reset", "--all"], input="y\n")
    assert done.exit_code == 0 and "NotImplementedError" in mine.read_text()
    assert any(b.read_text() == "# my work\n" for b in (workspace / ".grind" / "backups").glob("clipping-*.py"))
    assert runner.invoke(app, ["reset"]).exit_code == ExitStatus.USAGE  # neither a name nor --all
    assert runner.invoke(app, ["reset", "clipping", "--all"]).exit_code == ExitStatus.USAGE


# -- crash safety and concurrency -----------------------------------------------------------------

WRITER = """
import sys, time
from pathlib import Path
from judge.progress import Attempt, Progress
db, tag, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
while time.time() < go:
    time.sleep(0.001)
progress = Progress(Path(db))
i = 0
while count < 0 or i < count:
    now = time.time()
    progress.record_attempt(Attempt("clipping", now, now, "failed", 3, 12, "per-tensor", 0, "run", f"{tag}:{i}"))
    print(i, flush=True)
    i += 1
"""


def _writer(*args: str) -> list[str]:
    # -S (no site): judge.progress needs only the standard library, and skipping site makes each
    # of the 50 children start faster; PYTHONPATH points at this checkout.
    return [sys.executable, "-S", "-c", WRITER, *args]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def _stored_tags(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return [row[0] for row in conn.execute("SELECT submission_hash FROM attempts")]
    finally:
        conn.close()


def test_kill_9_in_the_middle_of_writes_loses_and_corrupts_nothing(tmp_path: Path) -> None:
    """A child writes attempts in a loop and is killed with SIGKILL 50 times at random moments:
    the database passes integrity_check, holds every attempt a child reported committed, and
    nothing else (at most the one in flight per kill), and it still takes writes afterwards."""
    db = tmp_path / "progress.db"
    rng = random.Random(6)
    acked: set[str] = set()
    for k in range(50):
        child = subprocess.Popen(_writer(str(db), f"k{k}", "-1", "0"),
                                 stdout=subprocess.PIPE, text=True, env=_env())
        assert child.stdout is not None
        first = child.stdout.readline()  # at least one write committed: the next one is under way
        assert first.strip() == "0", first
        time.sleep(rng.uniform(0, 0.03))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL
        acked |= {f"k{k}:{line.strip()}" for line in [first, *child.stdout.readlines()] if line.strip()}
        child.stdout.close()
    tags = _stored_tags(db)
    assert len(tags) == len(set(tags))
    assert acked <= set(tags)
    assert len(tags) - len(acked) <= 50
    with Progress(db) as progress:
        progress.record_attempt(attempt(tag="after"))
    assert "after" in _stored_tags(db)


def test_eight_concurrent_writers_lose_no_rows(tmp_path: Path) -> None:
    """Eight processes open a new database at the same instant (racing to create and migrate it)
    and each writes 40 attempts: all 320 are there, once each, and the file is intact."""
    db = tmp_path / "progress.db"
    go = time.time() + 1.5  # every writer has started and waits for the same instant
    writers = [subprocess.Popen(_writer(str(db), f"w{n}", "40", str(go)),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env())
               for n in range(8)]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err[-2000:]
    tags = _stored_tags(db)
    assert sorted(tags) == sorted(f"w{n}:{i}" for n in range(8) for i in range(40))


# -- what counts as a try, and as a best time -------------------------------------------------------


def test_an_identical_regrade_is_not_another_try_and_a_known_answer_sets_no_best_time(tmp_path: Path) -> None:
    """Tries count graded changes, not re-grades of the same file; re-saving a file that passed
    before, in a sitting grind did not reset, times nothing. A practice sitting from the stub does."""
    from judge.catalog import Catalog
    from judge.practice import Sitting, record_verdict

    clipping = Catalog().get("clipping")
    passed = verdict(Status.PASSED, 12, 12, None)
    t0 = 1_700_000_000.0
    with Progress(tmp_path / "p.db") as progress:
        watch = Sitting(clipping, tmp_path / "c.py", "watch", t0)
        record_verdict(progress, watch, verdict(), "v1", started_at=t0 + 10, ended_at=t0 + 11)
        assert record_verdict(progress, watch, verdict(), "v1", started_at=t0 + 20, ended_at=t0 + 21).repeat
        record_verdict(progress, watch, passed, "v2", started_at=t0 + 600, ended_at=t0 + 601)
        record_verdict(progress, watch, passed, "v2", started_at=t0 + 700, ended_at=t0 + 701)
        assert len(progress.attempts("clipping")) == 2
        assert progress.overview(["clipping"]).exercises[0].best_time_s == 601

        later = t0 + 5 * DAY  # a new watch session, the known answer saved again at once
        again = Sitting(clipping, tmp_path / "c.py", "watch", later)
        record_verdict(progress, again, passed, "v2", started_at=later + 1, ended_at=later + 2)
        assert len(progress.attempts("clipping")) == 3
        assert progress.overview(["clipping"]).exercises[0].best_time_s == 601

        review = t0 + 9 * DAY  # a practice sitting starts from the stub: typing it again counts
        fresh = Sitting(clipping, tmp_path / "c.py", "practice", review, fresh=True)
        record_verdict(progress, fresh, passed, "v2", started_at=review + 100, ended_at=review + 120)
        assert progress.overview(["clipping"]).exercises[0].best_time_s == 120
