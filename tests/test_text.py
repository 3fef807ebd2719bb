"""Learner text is data: a BOM, a file in another encoding, or a message no encoder accepts is
graded and reported like any other submission, and never breaks a report or a batch file."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from rich.console import Console
from typer.testing import CliRunner

from judge import formats
from judge.catalog import Catalog
from judge.cli import app
from judge.grade import grade
from judge.models import CheckResult, CheckStatus, Status, Verdict
from judge.render import render_class, render_verdict
from judge.status import ExitStatus
from judge.text import decode_source, safe, safe_data, xml_safe

from .conftest import ADVERSARIAL, SUBMISSIONS

runner = CliRunner()
SURROGATE = "lone surrogate: \ud800, NUL: \x00, bell: \x07"


@pytest.fixture()
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "user-state"))
    monkeypatch.setenv("COLUMNS", "80")
    return tmp_path


def _grind(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real entry point in a child, so stdout is a real strict UTF-8 stream, as in a shell."""
    env = dict(os.environ, GRIND_STATE_DIR=str(cwd / "state"), PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "judge", *args], capture_output=True, text=True,
                          encoding="utf-8", errors="surrogateescape", cwd=cwd, env=env, timeout=300)


# -- decoding -----------------------------------------------------------------------------------

def test_decode_skips_a_bom_and_names_the_first_bad_byte() -> None:
    assert decode_source(b"\xef\xbb\xbfx = 1\n", "a.py") == ("x = 1\n", None)
    text, problem = decode_source(b"x = 1\n# caf\xe9\n", "clipping.py")
    assert problem == "clipping.py is not UTF-8 text (byte 0xe9 at line 2); save it as UTF-8"
    assert text == "x = 1\n# caf\ufffd\n"


def test_a_correct_file_with_a_bom_passes(in_tmp: Path) -> None:
    """A BOM is not a syntax error at U+FEFF: the file is graded, through the API and the CLI."""
    exercise = Catalog().get("clipping")
    assert grade(exercise, ADVERSARIAL / "bom_correct.py").status is Status.PASSED
    result = runner.invoke(app, ["run", "clipping", "--file", str(ADVERSARIAL / "bom_correct.py")])
    assert result.exit_code == ExitStatus.PASSED, result.output


def test_a_latin1_file_gets_one_line_about_its_encoding(tmp_path: Path) -> None:
    """Not a syntax error at U+FFFD: an `error` verdict (exit 3) that says what to do."""
    expected = "latin1_file.py is not UTF-8 text (byte 0xe9 at line 7); save it as UTF-8"
    verdict = grade(Catalog().get("clipping"), ADVERSARIAL / "latin1_file.py")
    assert verdict.status is Status.ERROR and verdict.message == expected
    result = _grind("run", "clipping", "--file", str(ADVERSARIAL / "latin1_file.py"), cwd=tmp_path)
    assert result.returncode == ExitStatus.LEARNER_ERROR, result.stdout + result.stderr
    assert expected in result.stdout and "SyntaxError" not in result.stdout


def test_decode_honours_a_pep263_coding_cookie() -> None:
    """Python's own rule (tokenize.detect_encoding): a cookie on line 1 or 2 names the encoding;
    one Python does not know is one line, not a crash."""
    assert decode_source(b"# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n", "a.py") == (
        "# -*- coding: latin-1 -*-\ns = 'caf\u00e9'\n", None)
    assert decode_source(b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '\x80'\n", "b.py").text.endswith(
        "x = '\u20ac'\n")
    _, problem = decode_source(b"# coding: no-such-codec\nx = 1\n", "c.py")
    assert problem is not None and problem.startswith("c.py: unknown encoding") and "no-such-codec" in problem


def test_a_legal_latin1_file_with_a_coding_cookie_is_graded(tmp_path: Path) -> None:
    """PEP 263: a correct file saved in latin-1 that says so is a correct file, graded as such by
    grind run and by grind grade (the same decoding everywhere)."""
    correct = (SUBMISSIONS / "clipping" / "correct_loop.py").read_text(encoding="utf-8")
    latin = tmp_path / "latin_cookie.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n# r\xe9sum\xe9 du caf\xe9\n" + correct.encode("ascii"))
    with pytest.raises(UnicodeDecodeError):
        latin.read_bytes().decode("utf-8")  # the test's premise: not UTF-8 at all
    assert grade(Catalog().get("clipping"), latin).status is Status.PASSED
    result = _grind("run", "clipping", "--file", str(latin), cwd=tmp_path)
    assert result.returncode == ExitStatus.PASSED, result.stdout + result.stderr
    (tmp_path / "class").mkdir()
    shutil.copyfile(latin, tmp_path / "class" / "ann.py")
    result = _grind("grade", "class", "-e", "clipping", "--allow-weak-isolation", "-o", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert rows[0]["verdict"]["status"] == "passed"


def test_watch_says_a_file_is_not_utf8_and_grades_it_once_it_is(tmp_path: Path) -> None:
    """In watch mode a latin-1 save gets the same one line, and nothing is graded; the next save,
    in UTF-8 with a BOM, is graded without the BOM."""
    from judge.watch import Key
    from judge.workspace import init_workspace

    from .test_watch import FakeGrade, _in_thread, _join, _loop, _sitting

    init_workspace(tmp_path / "ws", Catalog().all())
    grade = FakeGrade()
    loop, view, _ = _loop(tmp_path / "ws", grade)
    sitting = _sitting(tmp_path / "ws")
    running = _in_thread(lambda: loop.run(sitting))
    assert loop.ready.wait(20)
    sitting.path.write_bytes(b"x = 1\n# caf\xe9\n")
    loop.events.put(Key("\n"))
    view.wait_for("message")
    assert view.values("message") == ["clipping.py is not UTF-8 text (byte 0xe9 at line 2); save it as UTF-8"]
    sitting.path.write_bytes(b"\xef\xbb\xbfx = 1\n")
    loop.events.put(Key("\n"))
    view.wait_for("verdict")
    loop.events.put(Key("q"))
    _join(running)
    assert grade.sources == ["x = 1\n"]


# -- escaping -----------------------------------------------------------------------------------

def test_safe_escapes_only_what_cannot_be_encoded() -> None:
    assert safe("café ✔") == "café ✔"
    assert safe("a\ud800b") == "a\\ud800b"
    assert safe("café", "ascii") == "caf\\xe9"
    assert safe_data({"k\udce9": ["\ud800", 1.5, None, ("x",)]}) == {"k\\udce9": ["\\ud800", 1.5, None, ("x",)]}
    assert xml_safe("a\x00\x1b\t\n\ud800") == "a\\x00\\x1b\t\n\\ud800"


def test_verdict_json_escapes_surrogates() -> None:
    check = CheckResult("case", "edge", CheckStatus.ERROR, "ValueError: \ud800", input={"\ud800": "\udce9"})
    verdict = Verdict(exercise="clipping", status=Status.FAILED, checks=[check], message="m\ud800",
                      stdout="\ud800", stderr="\udcff", submission="s\udce9.py", notices=["\ud801"])
    text = json.dumps(verdict.to_json(), ensure_ascii=False)
    text.encode("utf-8")  # would raise on a lone surrogate
    data = json.loads(text)
    assert data["message"] == "m\\ud800" and data["checks"][0]["message"] == "ValueError: \\ud800"
    assert data["checks"][0]["input"] == {"\\ud800": "\\udce9"} and data["submission"] == "s\\udce9.py"


@pytest.mark.parametrize("terminal", [False, True])
def test_the_report_prints_a_surrogate_as_an_escape(terminal: bool) -> None:
    """Messages, inputs and printed output reach a strict UTF-8 stream without raising."""
    check = CheckResult("case", "edge", CheckStatus.FAILED, "bad \ud800", input="\ud800", expected=[1.0],
                        got="\udce9")
    verdict = Verdict(exercise="clipping", status=Status.FAILED, checks=[check], message="0 of 1 \ud800",
                      stdout="printed \ud800\n", stderr="\udcff", notices=["\ud801"])
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    console = Console(file=stream, width=100, force_terminal=terminal, color_system=None)
    render_verdict(console, verdict, Catalog().get("clipping"))
    render_class(console, [{"student": "s\udce9", "verdict": verdict.to_json()}])
    stream.flush()
    out = stream.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    assert "bad \\ud800" in out and "printed \\ud800" in out and "s\\udce9" in out


def test_run_json_on_a_surrogate_message_is_valid_json(tmp_path: Path) -> None:
    """`grind run --json` exits 1 (failed) with JSON whose message holds the escape, not exit 4."""
    result = _grind("run", "clipping", "--file", str(ADVERSARIAL / "surrogate_message.py"), "--json", cwd=tmp_path)
    assert result.returncode == ExitStatus.FAILED, result.stdout + result.stderr
    data = json.loads(result.stdout)
    message = data["checks"][0]["message"]
    assert "\\ud800" in message and "\ud800" not in message
    plain = _grind("run", "clipping", "--file", str(ADVERSARIAL / "surrogate_message.py"), cwd=tmp_path)
    assert plain.returncode == ExitStatus.FAILED, plain.stdout + plain.stderr
    assert "\\ud800" in plain.stdout


def test_grade_a_class_with_hostile_text_writes_every_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A surrogate in one student's message, a latin-1 file and a file name that is not UTF-8
    leave every file well-formed, with every student in it."""
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    submissions = tmp_path / "class"
    submissions.mkdir()
    shutil.copyfile(ADVERSARIAL / "surrogate_message.py", submissions / "hostile.py")
    shutil.copyfile(SUBMISSIONS / "clipping" / "correct_loop.py", submissions / "good.py")
    shutil.copyfile(ADVERSARIAL / "latin1_file.py", submissions / "latin.py")
    shutil.copyfile(SUBMISSIONS / "clipping" / "correct_loop.py", os.fsencode(submissions) + b"/caf\xe9.py")
    students = {"hostile": "failed", "good": "passed", "latin": "error", "caf\\udce9": "passed"}
    out = tmp_path / "out"
    result = runner.invoke(app, ["grade", str(submissions), "--exercise", "clipping", "--jobs", "2",
                                 "-F", "csv", "-F", "json", "-F", "junit", "-F", "gradescope", "--out", str(out)])
    assert result.exit_code == 0, result.output

    junit = ET.parse(out / "junit.xml").getroot()  # well-formed despite \x00 and \x07
    assert {s.get("name") for s in junit.findall("testsuite")} == set(students)
    hostile = next(s for s in junit.findall("testsuite") if s.get("name") == "hostile")
    assert "\\ud800" in hostile.find("testcase/error").get("message")  # type: ignore[union-attr]
    assert "\\x00" in hostile.find("testcase/error").text  # type: ignore[union-attr]

    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {r["student"]: r["verdict"]["status"] for r in data} == students
    latin = next(r for r in data if r["student"] == "latin")["verdict"]
    assert latin["message"] == "latin.py is not UTF-8 text (byte 0xe9 at line 7); save it as UTF-8"

    rows = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text(encoding="utf-8"))))
    assert {r["student"]: r["status"] for r in rows} == students

    for name, status in students.items():
        folder = "caf\udce9" if name == "caf\\udce9" else name  # the file's own name, byte for byte
        gs = json.loads((out / "gradescope" / folder / "results.json").read_text(encoding="utf-8"))
        assert (gs["score"] == gs["max_score"]) == (status == "passed")
    hostile_gs = json.loads((out / "gradescope" / "hostile" / "results.json").read_text(encoding="utf-8"))
    assert "\\ud800" in json.dumps(hostile_gs["tests"], ensure_ascii=False)

    # Rows read back from disk (a resumed run) render the same, surrogates and all.
    again = runner.invoke(app, ["grade", str(submissions), "--exercise", "clipping", "--jobs", "2",
                                "-F", "junit", "-F", "gradescope", "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert ET.parse(out / "junit.xml").getroot().get("tests") == junit.get("tests")


# -- atomic writes ------------------------------------------------------------------------------

def _rows() -> list[dict]:
    verdict = Verdict(exercise="clipping", status=Status.ERROR, message="broken \ud800\x00")
    return [{"student": "alice", "sha256": "0" * 64, "verdict": verdict.to_json()}]


def test_batch_files_are_replaced_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed mid-write, a batch file keeps its previous content and no partial file is left."""
    all_formats = list(formats.FORMATS)
    formats.write_all(_rows(), "clipping", tmp_path, all_formats)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert len(before) == 4

    real_fsync = os.fsync

    def killed(fd: int) -> None:  # the data is in the temp file; the replace never happens
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", killed)
    rows = _rows()
    rows[0]["verdict"]["message"] = "changed"
    for name in all_formats:
        with pytest.raises(KeyboardInterrupt):
            formats.write_all(rows, "clipping", tmp_path, [name])
    monkeypatch.setattr(os, "fsync", real_fsync)
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # the old files intact, and no temp file left beside them


def test_a_stored_result_is_written_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from judge import batch

    verdict = Verdict(exercise="clipping", status=Status.ERROR, message="m").to_json()
    target = tmp_path / "a.b.json"
    batch._save(target, "a.b", "d", "h", verdict)
    before = target.read_bytes()
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        batch._save(target, "a.b", "d2", "h", verdict)
    assert [p.name for p in tmp_path.iterdir()] == ["a.b.json"] and target.read_bytes() == before


def test_the_autograder_writes_its_results_atomically() -> None:
    from judge.autograder import RUN

    script = RUN.format(slug="clipping", max_score=16)
    assert 'mv -f "$RESULTS.tmp" "$RESULTS"' in script and "os.replace" in script
    assert "> \"$RESULTS\"" not in script and "cp \"$work/out/gradescope/submission/results.json\" \"$RESULTS\"\n" \
        not in script


def test_the_adversarial_header_reader_reads_bom_and_latin1() -> None:
    from .test_adversarial import _header

    assert _header(ADVERSARIAL / "bom_correct.py")[0] == {"passed"}
    assert _header(ADVERSARIAL / "latin1_file.py")[0] == {"error"}


def test_terminal_escapes_from_a_submission_are_shown_not_obeyed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A learner's output and exception messages reach the console as text: an ESC or BEL in them
    must not clear the screen, retitle the window or write the clipboard (OSC 52)."""
    import subprocess
    import sys
    from pathlib import Path

    attack = Path(__file__).parent / "adversarial" / "terminal_escapes.py"
    done = subprocess.run([sys.executable, "-m", "judge", "run", "clipping", "--file", str(attack)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "\\x1b]0;title\\x07" in done.stdout
