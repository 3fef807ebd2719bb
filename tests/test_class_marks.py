"""Batch grading fit for marks (issue 13, item 3): a row for every entry of the class folder, one
max_score per exercise, a roster's student IDs, progress and a log without a terminal, and JUnit
test names that do not change when a check fails."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

from judge.batch import apply_roster, find_students, grade_class, read_roster
from judge.catalog import Catalog
from judge.cli import app
from judge.errors import UsageError
from judge.formats import to_csv, to_junit
from judge.status import ExitStatus
from judge.worker.sandbox import Limits

from .conftest import ADVERSARIAL, SUBMISSIONS

runner = CliRunner()


def _entries(root: Path) -> None:
    """A correct file, a wrong one that fails the random case, a crash, a notebook only, an empty
    folder, a folder with two .py files and none named after the exercise."""
    root.mkdir()
    shutil.copyfile(SUBMISSIONS / "clipping" / "correct_loop.py", root / "ann.py")
    shutil.copyfile(SUBMISSIONS / "clipping" / "pitfall_per_tensor.py", root / "bob.py")
    shutil.copyfile(ADVERSARIAL / "os_exit_at_import.py", root / "cat.py")
    (root / "d03_notebook.ipynb").write_text("{}")  # a notebook is graded; this one is no notebook
    (root / "empty").mkdir()
    (root / "two").mkdir()
    (root / "two" / "a.py").write_text("x = 1\n")
    (root / "two" / "b.py").write_text("y = 2\n")


def test_every_entry_of_the_class_folder_is_a_student(tmp_path: Path) -> None:
    """A notebook, an empty folder or a folder of several .py files is a row marked not gradable,
    never a student left out."""
    _entries(tmp_path / "class")
    students = {s.name: s for s in find_students(tmp_path / "class", Catalog().get("clipping"))}
    assert sorted(students) == ["ann", "bob", "cat", "d03_notebook", "empty", "two"]
    assert students["d03_notebook"].path == tmp_path / "class" / "d03_notebook.ipynb"  # graded: judge/notebooks.py
    assert students["empty"].problem == "not gradable: no .py or .ipynb file in empty/"
    assert students["two"].problem == "not gradable: 2 .py files and none named clipping.py in two/"


def test_a_symbolic_link_is_never_followed_into_a_grade(tmp_path: Path) -> None:
    """Unpacked from a tar or zip, a submission can be a link: to the reference (it passed), to a
    classmate's file, or to /etc/passwd (its first line then appeared in the results as a syntax
    error). Each is a row marked not gradable, naming the link; a real file beside them is graded.
    In the Gradescope bundle, the upload is copied with its links kept as links."""
    root = tmp_path / "class"
    root.mkdir()
    shutil.copyfile(SUBMISSIONS / "clipping" / "correct_loop.py", root / "alice.py")
    reference = Catalog().get("clipping").reference_path
    (root / "mallory.py").symlink_to(reference)
    (root / "zed.py").symlink_to("/etc/passwd")
    (root / "trudy").mkdir()
    (root / "trudy" / "clipping.py").symlink_to(root / "alice.py")
    (root / "linked").symlink_to(root / "trudy", target_is_directory=True)
    students = {s.name: s for s in find_students(root, Catalog().get("clipping"))}
    assert students["alice"].path == root / "alice.py"
    assert students["mallory"].path is None and "mallory.py is a symbolic link" in students["mallory"].problem
    assert students["zed"].path is None and "zed.py is a symbolic link" in students["zed"].problem
    assert students["trudy"].path is None and "trudy/clipping.py is a symbolic link" in students["trudy"].problem
    assert students["linked"].path is None and "linked/ is a symbolic link" in students["linked"].problem

    import judge.autograder

    results, work = tmp_path / "results.json", tmp_path / "work"
    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "clipping.py").symlink_to(reference)
    judge.autograder.grade_one("clipping", upload, results, work)
    graded = json.loads(results.read_text())
    assert graded["score"] == 0 and "symbolic link" in json.dumps(graded), graded


def test_a_huge_or_unreadable_file_is_a_row_not_the_end_of_the_class(tmp_path: Path) -> None:
    """A 10 GB sparse file was read whole to hash it (MemoryError), and a file locked with chmod 0
    (when grading as a user) raised PermissionError: grind's error, nobody graded. Each is now a
    row marked not gradable, and the class is graded."""
    import os

    root = tmp_path / "class"
    root.mkdir()
    shutil.copyfile(SUBMISSIONS / "clipping" / "correct_loop.py", root / "alice.py")
    with open(root / "zz.py", "wb") as handle:
        handle.truncate(10 << 30)  # sparse: no disk used
    students = {s.name: s for s in find_students(root, Catalog().get("clipping"))}
    assert students["alice"].path is not None
    assert students["zz"].path is None and "zz.py is 10240 MB, over the 4 MB" in students["zz"].problem
    if os.geteuid() != 0:  # root reads a chmod 0 file anyway
        (root / "locked.py").write_text("x = 1\n")
        os.chmod(root / "locked.py", 0)
        students = {s.name: s for s in find_students(root, Catalog().get("clipping"))}
        assert students["locked"].path is None and "could not be read" in students["locked"].problem


def test_a_file_gone_while_it_was_graded_keeps_its_row_and_the_class(tmp_path: Path) -> None:
    """A review's submission made the class folder's files unreadable from inside its run (a
    chmod the sandbox now refuses): hashing a file after its grade then raised PermissionError,
    grind's internal error with no summary. The row keeps the digest of what was graded, taken
    before, and the class finishes."""
    import hashlib

    root = tmp_path / "class"
    root.mkdir()
    for name in ("alice", "bob"):
        shutil.copyfile(SUBMISSIONS / "clipping" / "correct_loop.py", root / f"{name}.py")
    graded = (root / "alice.py").read_bytes()

    def vanishing(exercise, paths, *, limits, on_done, hidden):  # type: ignore[no-untyped-def]
        for path in paths:
            path.unlink()  # gone (or unreadable) by the time its verdict lands
            on_done(path, {"exercise": "clipping", "status": "passed", "message": "ok"})

    rows = grade_class(Catalog().get("clipping"), root, tmp_path / "out", executor=vanishing)
    assert sorted(row["student"] for row in rows) == ["alice", "bob"]
    stored = json.loads((tmp_path / "out" / "graded" / "alice.json").read_text())
    assert stored["sha256"] == hashlib.sha256(graded).hexdigest()


def test_a_file_and_a_folder_with_one_name_are_refused_up_front(tmp_path: Path) -> None:
    """dup_name.py beside dup_name/ gave two identical rows, which one won changing between runs."""
    root = tmp_path / "class"
    root.mkdir()
    (root / "dup_name.py").write_text("x = 1\n")
    (root / "dup_name").mkdir()
    (root / "dup_name" / "clipping.py").write_text("x = 1\n")
    with pytest.raises(UsageError, match=r"dup_name/ and dup_name.py would both be student 'dup_name'"):
        find_students(root, Catalog().get("clipping"))
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--allow-weak-isolation",
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code == ExitStatus.USAGE, result.output
    assert "dup_name/ and dup_name.py" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()  # refused before anything was graded or written


def test_a_roster_adds_student_ids_and_reports_every_mismatch(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student id\nann.py,S1\nbob/,S2\nzed.py,S9\n")
    ids = read_roster(roster)
    assert ids == {"ann.py": "S1", "bob": "S2", "zed.py": "S9"}
    verdict = {"status": "passed", "message": "ok", "checks": [], "duration_s": 0.1}
    rows = [{"student": name, "sha256": "x", "verdict": verdict} for name in ("ann", "bob", "cat")]
    problems = apply_roster(rows, ids, "roster.csv")
    assert problems == ["roster.csv: zed.py (S9) has no entry in the class folder",
                        "roster.csv: no line for cat; its student_id is left empty"]
    table = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert [(r["student"], r["student_id"]) for r in table] == [("ann", "S1"), ("bob", "S2"), ("cat", "")]
    suites = ET.fromstring(to_junit(rows, "clipping").split("\n", 1)[1]).findall("testsuite")
    assert [s.find("properties/property[@name='student_id']") is not None for s in suites] == [True, True, False]
    assert [s.find("properties/property").get("value") for s in suites[:2]] == ["S1", "S2"]
    roster.write_text("ann.py,S1\nann.py,S2\n")
    with pytest.raises(UsageError, match="roster.csv:2: 'ann.py' is listed twice"):
        read_roster(roster)


def test_junit_names_a_failing_random_case_as_it_names_a_passing_one() -> None:
    """Results stored before ``case`` existed are renamed too; the failing input moves into the message."""
    check = {"name": "random[size=1, seed=0]", "kind": "random", "status": "failed",
             "message": "fails on 3 of 9 inputs; smallest shown. grad[0]: values differ"}
    for stored in (dict(check, case="random"), check):
        rows = [{"student": "ann", "sha256": "x", "verdict": {"status": "failed", "message": "",
                                                               "checks": [stored], "duration_s": 0.1}}]
        case = ET.fromstring(to_junit(rows, "clipping").split("\n", 1)[1]).find("testsuite/testcase")
        assert case.get("name") == "random"
        assert "failing input: random[size=1, seed=0]" in case.find("failure").text


def test_grading_a_class_for_marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the CLI: a row per entry with one max_score, student IDs from the roster and a line
    per mismatch, plain progress lines on stderr (no terminal here), a log flushed per student, and
    the same JUnit test names for a failing student as for a passing one."""
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "class"
    _entries(root)
    roster = tmp_path / "roster.csv"
    roster.write_text("ann.py,S1\nbob.py,S2\ncat.py,S3\nd03_notebook.ipynb,S4\nempty/,S5\nzed.py,S9\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--time-limit", "5", "--allow-weak-isolation",
                                 "--roster", str(roster), "-F", "csv", "-F", "json", "-F", "junit",
                                 "-F", "gradescope", "--out", str(out)])
    assert result.exit_code == 0, result.output
    table = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}
    assert sorted(table) == ["ann", "bob", "cat", "d03_notebook", "empty", "two"]
    assert {r["max_score"] for r in table.values()} == {table["ann"]["max_score"]} and \
        int(table["ann"]["max_score"]) > 1
    assert (table["ann"]["status"], table["cat"]["status"], table["empty"]["status"]) == ("passed", "crashed", "error")
    assert table["cat"]["score"] == "0" and table["empty"]["message"] == "not gradable: no .py or .ipynb file in empty/"
    assert [table[n]["student_id"] for n in sorted(table)] == ["S1", "S2", "S3", "S4", "S5", ""]
    assert json.loads((out / "results.json").read_text())[0]["student_id"] == "S1"
    assert "roster.csv: zed.py (S9) has no entry in the class folder" in result.output
    assert "roster.csv: no line for two; its student_id is left empty" in result.output
    for n in range(1, 7):
        assert f"graded {n}/6 " in result.output
    gs = json.loads((out / "gradescope" / "cat" / "results.json").read_text())
    assert gs["max_score"] == float(table["ann"]["max_score"]) == sum(t["max_score"] for t in gs["tests"])

    suites = {s.get("name"): s for s in ET.parse(out / "junit.xml").getroot().findall("testsuite")}
    names = {n: [c.get("name") for c in suites[n].findall("testcase")] for n in ("ann", "bob")}
    assert names["ann"] == names["bob"] and "random" in names["ann"]
    assert suites["bob"].find("testcase[@name='random']/failure") is not None

    log = (out / "grade.log").read_text().splitlines()
    assert sum(" graded " in line for line in log) == 6 and log[-1].endswith("done: 6 entries")
    seen: list[bool] = []  # each student's line is on disk before the next one is graded

    def flushed(student: str, row: dict, kept: bool) -> None:
        seen.append((out / "grade.log").read_text().splitlines()[-1].endswith(f" {student}: "
                                                                              f"{row['verdict']['status']} (unchanged, kept)"))

    exercise = Catalog().get("clipping")
    rows = grade_class(exercise, root, out, limits=Limits(wall_s=5.0, memory_mb=exercise.memory_mb), on_done=flushed)
    assert seen == [True] * 6 and {r["max_score"] for r in rows} == {int(table["ann"]["max_score"])}


def test_the_grade_log_survives_sigterm(tmp_path: Path) -> None:
    """Stopped by SIGTERM mid-class (as a batch scheduler does), grind leaves a log of every student
    graded so far; without a terminal it printed no progress at all and the log was empty."""
    import os
    import signal
    import subprocess
    import sys
    import time

    root = tmp_path / "class"
    root.mkdir()
    shutil.copyfile(SUBMISSIONS / "clipping" / "correct_loop.py", root / "ann.py")
    for name in ("bob", "cat", "dan", "eve"):
        shutil.copyfile(ADVERSARIAL / "sleep_forever.py", root / f"{name}.py")
    out = tmp_path / "out"
    env = dict(os.environ, GRIND_STATE_DIR=str(tmp_path / "state"))
    child = subprocess.Popen([sys.executable, "-m", "judge", "grade", str(root), "-e", "clipping", "-j", "1",
                              "--time-limit", "1", "--allow-weak-isolation", "--out", str(out)],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    log = out / "grade.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and " graded 2/5 " not in (log.read_text() if log.exists() else ""):
        time.sleep(0.2)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=60)
    lines = log.read_text().splitlines()
    assert any(line.endswith(" graded 1/5 ann: passed") for line in lines), lines
    assert any(" graded 2/5 bob: timeout" in line for line in lines), lines
    assert "graded 1/5 ann: passed" in stderr and "graded 5/5" not in stderr


@pytest.mark.parametrize("first, second", [
    ("ann.py", "Ann.py"),  # case: one file on macOS, two on Linux
    ("jos\u00e9.py", "jose\u0301.py"),  # one name composed, one decomposed (NFC and NFD)
    ("ann.py", "\u0430nn.py"),  # a Cyrillic a
    ("ann.py", "an\u200bn.py"),  # a zero-width space
    ("ann.py", "\uff21nn"),  # a fullwidth A, as a folder
])
def test_students_whose_names_look_the_same_are_refused_up_front(tmp_path: Path, first: str, second: str) -> None:
    """Two entries a reader cannot tell apart would be two rows that look like one student's twice
    (which mark is whose?), and where the file system folds case or Unicode forms their stored
    results are one file: with the same submission, the second reused the first's row, name
    included. Refused before anything is graded, naming both entries with their differences
    escaped; names that only look alike in a loose sense (ann and anne) are two students."""
    root = tmp_path / "class"
    root.mkdir()
    for name in (first, second):
        if name.endswith(".py"):
            shutil.copyfile(SUBMISSIONS / "clipping" / "correct_loop.py", root / name)
        else:
            (root / name).mkdir()
            shutil.copyfile(SUBMISSIONS / "clipping" / "correct_loop.py", root / name / "clipping.py")
    (root / "anne.py").write_text("x = 1\n")
    with pytest.raises(UsageError, match="look the same") as caught:
        find_students(root, Catalog().get("clipping"))
    assert ascii(first) in str(caught.value) or ascii(first + "/") in str(caught.value), caught.value
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--allow-weak-isolation",
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code == ExitStatus.USAGE, result.output
    assert "look the same" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_a_folder_named_like_a_file_and_links_to_folders_keep_their_verdicts(tmp_path: Path) -> None:
    """A folder named ``eve.py`` is a student's folder (graded by what it holds), never opened as
    a file; a ``clipping.py`` that is a folder is not the answer; a link to a folder, to the
    class folder itself or to a folder outside it, and a link loop, are rows naming the link."""
    root = tmp_path / "class"
    root.mkdir()
    correct = SUBMISSIONS / "clipping" / "correct_loop.py"
    (root / "eve.py").mkdir()
    shutil.copyfile(correct, root / "eve.py" / "clipping.py")
    (root / "fay.py").mkdir()
    (root / "gus").mkdir()
    (root / "gus" / "clipping.py").mkdir()
    shutil.copyfile(correct, root / "gus" / "answer.py")
    (root / "hal").symlink_to(root, target_is_directory=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copyfile(Catalog().get("clipping").reference_path, outside / "clipping.py")
    (root / "ivy").symlink_to(outside, target_is_directory=True)
    (root / "jo").mkdir()
    (root / "jo" / "loop").symlink_to(root / "jo", target_is_directory=True)
    students = {s.name: s for s in find_students(root, Catalog().get("clipping"))}
    assert students["eve.py"].path == root / "eve.py" / "clipping.py"
    assert students["fay.py"].path is None and "no .py or .ipynb file in fay.py/" in students["fay.py"].problem
    assert students["gus"].path == root / "gus" / "answer.py"
    assert students["hal"].path is None and "hal/ is a symbolic link" in students["hal"].problem
    assert students["ivy"].path is None and "ivy/ is a symbolic link" in students["ivy"].problem
    assert students["jo"].path is None and "jo/loop is a symbolic link" in students["jo"].problem
    rows = {r["student"]: r["verdict"] for r in grade_class(Catalog().get("clipping"), root, tmp_path / "out",
                                                             jobs=1, limits=Limits(wall_s=30))}
    assert rows["eve.py"]["status"] == "passed" and rows["gus"]["status"] == "passed", rows
    assert {rows[n]["status"] for n in ("fay.py", "hal", "ivy", "jo")} == {"error"}, rows


def test_regrade_grades_stored_timeouts_again_and_force_grades_everyone(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A timeout stored on a busy machine has the same hashes as the file it timed out on, so a
    resumed run kept it for good. --regrade timeout grades exactly those again, --force grades
    everyone, and an unknown status is refused before anything runs."""
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    root, out = tmp_path / "class", tmp_path / "out"
    root.mkdir()
    shutil.copyfile(SUBMISSIONS / "clipping" / "correct_loop.py", root / "ann.py")
    shutil.copyfile(SUBMISSIONS / "clipping" / "pitfall_per_tensor.py", root / "bob.py")
    exercise = Catalog().get("clipping")
    limits = Limits(wall_s=5.0, memory_mb=exercise.memory_mb)
    grade_class(exercise, root, out, limits=limits)
    stored = out / "graded" / "ann.json"
    row = json.loads(stored.read_text())
    row["verdict"]["status"] = "timeout"  # as if the machine had been too busy for ann's run
    stored.write_text(json.dumps(row))

    def statuses(**options: object) -> dict[str, tuple[str, bool]]:
        seen: dict[str, tuple[str, bool]] = {}
        grade_class(exercise, root, out, limits=limits,
                    on_done=lambda name, r, kept: seen.__setitem__(name, (r["verdict"]["status"], kept)), **options)
        return seen

    assert statuses() == {"ann": ("timeout", True), "bob": ("failed", True)}
    assert statuses(regrade={"timeout", "crashed"}) == {"ann": ("passed", False), "bob": ("failed", True)}
    assert statuses(force=True) == {"ann": ("passed", False), "bob": ("failed", False)}
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--allow-weak-isolation", "--out", str(out),
                                 "--regrade", "slow"])
    assert result.exit_code == ExitStatus.USAGE and "--regrade 'slow': choose from" in result.output
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--allow-weak-isolation", "--out", str(out),
                                 "--time-limit", "5", "--regrade", "failed"])
    assert result.exit_code == 0, result.output
    log = (out / "grade.log").read_text().splitlines()
    assert log[-3].endswith(" ann: passed (unchanged, kept)") and log[-2].endswith(" bob: failed"), log[-3:]
