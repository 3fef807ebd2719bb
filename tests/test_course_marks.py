"""What a course needs from a class's marks (issue 34, point 5): per-case weights declared in
exercise.toml and shown in every format, a gradebook CSV for Canvas and Moodle keyed by a roster,
notebooks graded in batch, and a similarity report across the class."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

from judge.catalog import Catalog
from judge.cli import app
from judge.errors import ManifestError

from .conftest import ADVERSARIAL, SUBMISSIONS

runner = CliRunner()
CORRECT = SUBMISSIONS / "clipping" / "correct_loop.py"
PER_TENSOR = SUBMISSIONS / "clipping" / "pitfall_per_tensor.py"


def _weigh(course: Path, table: str) -> None:
    manifest = course / "exercises" / "clipping" / "exercise.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + f"\n[marks]\nweights = {table}\n", encoding="utf-8")


# -- weights -------------------------------------------------------------------------------------

@pytest.mark.parametrize("table, message", [
    ("{worked_example = -1}", "weight of 'worked_example' must be a number >= 0, got -1"),
    ("{worked_example = true}", "weight of 'worked_example' must be a number >= 0, got True"),
    ("{worked_example = 'two'}", "weight of 'worked_example' must be a number >= 0, got 'two'"),
    ('{"no such" = 1}', "weights names 'no such', which is not a case name"),
    ("3", "weights must be a table of case = points"),
])
def test_malformed_weights_are_refused_with_the_key_and_line(course: Path, table: str, message: str) -> None:
    _weigh(course, table)
    with pytest.raises(ManifestError) as caught:
        Catalog(course).get("clipping")
    assert "key 'marks' (line " in caught.value.message and message in caught.value.message


def test_an_unknown_key_under_marks_is_refused(course: Path) -> None:
    manifest = course / "exercises" / "clipping" / "exercise.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n[marks]\nweight = {random = 2}\n")
    with pytest.raises(ManifestError, match="has a key 'weight'; the keys are weights and partial"):
        Catalog(course).get("clipping")


def test_a_weight_for_a_case_the_checks_do_not_have_stops_grading_before_anyone_runs(course: Path,
                                                                                     tmp_path: Path) -> None:
    _weigh(course, "{worked_exampel = 2}")
    (tmp_path / "class").mkdir()
    shutil.copyfile(CORRECT, tmp_path / "class" / "ann.py")
    result = runner.invoke(app, ["grade", str(tmp_path / "class"), "-e", "clipping", "--allow-weak-isolation",
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code != 0
    assert "[marks] weights names case 'worked_exampel', which the checks do not have" in result.output
    assert not (tmp_path / "out" / "graded" / "ann.json").exists()


def test_weights_make_the_score_in_every_format(course: Path, tmp_path: Path) -> None:
    """worked_example worth 4, random 0.5, the 14 other cases 1 each: 18.5 in all. A correct file
    scores 18.5; the per-tensor mistake fails random (and more), and its score is the sum of the
    weights of the cases it passed, the same in CSV, JSON, JUnit, Gradescope and the terminal."""
    _weigh(course, "{worked_example = 4, random = 0.5}")
    root, out = tmp_path / "class", tmp_path / "out"
    root.mkdir()
    shutil.copyfile(CORRECT, root / "ann.py")
    shutil.copyfile(PER_TENSOR, root / "bob.py")
    shutil.copyfile(ADVERSARIAL / "os_exit_at_import.py", root / "cat.py")
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--allow-weak-isolation", "--time-limit", "10",
                                 "-F", "csv", "-F", "json", "-F", "junit", "-F", "gradescope", "--out", str(out)])
    assert result.exit_code == 0, result.output
    table = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}
    assert {r["max_score"] for r in table.values()} == {"18.5"}
    assert table["ann"]["score"] == "18.5" and table["cat"]["score"] == "0"
    assert table["ann"]["worked_example (4)"] == "4" and table["ann"]["random (0.5)"] == "0.5"
    assert table["bob"]["random (0.5)"] == "0"
    rows = {r["student"]: r for r in json.loads((out / "results.json").read_text())}
    bob_checks = rows["bob"]["verdict"]["checks"]
    expected = sum({"worked_example": 4, "random": 0.5}.get(c["case"], 1) for c in bob_checks if c["status"] == "passed")
    assert 0 < expected < 18.5
    assert float(table["bob"]["score"]) == rows["bob"]["score"] == expected
    assert rows["ann"]["weights"]["worked_example"] == 4 and rows["ann"]["max_score"] == 18.5
    suites = {s.get("name"): s for s in ET.parse(out / "junit.xml").getroot().findall("testsuite")}
    props = {p.get("name"): p.get("value") for p in suites["bob"].find("properties")}
    assert (float(props["score"]), props["max_score"]) == (expected, "18.5")
    assert suites["ann"].find("testcase[@name='worked_example']/properties/property[@name='weight']").get("value") == "4"
    gs = json.loads((out / "gradescope" / "bob" / "results.json").read_text())
    assert gs["max_score"] == 18.5 == sum(t["max_score"] for t in gs["tests"])
    assert gs["score"] == expected == sum(t["score"] for t in gs["tests"])
    assert f"{table['bob']['score']}/18.5" in result.output


def test_partial_credit_earns_the_share_of_a_cases_inputs_passed(course: Path, tmp_path: Path) -> None:
    """[marks] partial: the per-tensor mistake fails some of the random case's inputs, not all;
    with random worth 9 it earns 9 x passed/inputs for it, in the CSV column, the score and the
    Gradescope test, where without partial it earns 0 for the case."""
    manifest = course / "exercises" / "clipping" / "exercise.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n[marks]\nweights = {random = 9}\npartial = true\n")
    root, out = tmp_path / "class", tmp_path / "out"
    root.mkdir()
    shutil.copyfile(PER_TENSOR, root / "bob.py")
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--allow-weak-isolation", "--time-limit", "10",
                                 "-F", "csv", "-F", "json", "-F", "gradescope", "--out", str(out)])
    assert result.exit_code == 0, result.output
    row = json.loads((out / "results.json").read_text())[0]
    random = next(c for c in row["verdict"]["checks"] if c["case"] == "random")
    assert random["status"] == "failed" and 0 < random["inputs_failed"] < random["inputs"]  # the premise
    share = 9 * (random["inputs"] - random["inputs_failed"]) / random["inputs"]
    whole = sum(1 for c in row["verdict"]["checks"] if c["status"] == "passed")
    assert row["score"] == pytest.approx(whole + share) and row["max_score"] == 15 + 9
    table = next(csv.DictReader(io.StringIO((out / "summary.csv").read_text())))
    assert float(table["random (9)"]) == pytest.approx(share, abs=1e-4)
    gs = json.loads((out / "gradescope" / "bob" / "results.json").read_text())
    assert next(t for t in gs["tests"] if t["name"] == "hidden random case 16")["score"] == pytest.approx(share, abs=1e-4)
    manifest.write_text(manifest.read_text().replace("partial = true", "partial = false"))
    runner.invoke(app, ["grade", str(root), "-e", "clipping", "--allow-weak-isolation", "--time-limit", "10",
                        "--out", str(out)])
    assert json.loads((out / "results.json").read_text())[0]["score"] == whole


def test_partial_must_be_a_boolean(course: Path) -> None:
    manifest = course / "exercises" / "clipping" / "exercise.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n[marks]\npartial = 'yes'\n")
    with pytest.raises(ManifestError, match="partial must be true or false, got 'yes'"):
        Catalog(course).get("clipping")


# -- roster and gradebook ------------------------------------------------------------------------

def test_a_roster_with_names_and_emails_makes_a_gradebook_for_canvas_and_moodle(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries named by the email's user name or by the student id are matched; a student on the
    roster with nothing handed in gets 0 and is named; an entry on no roster line is named and
    left out of the gradebook. Canvas's columns (its Points Possible line first), Moodle's."""
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    root, out = tmp_path / "class", tmp_path / "out"
    root.mkdir()
    shutil.copyfile(CORRECT, root / "ann.lee.py")
    (root / "S2").mkdir()
    shutil.copyfile(PER_TENSOR, root / "S2" / "clipping.py")
    shutil.copyfile(CORRECT, root / "zed.py")
    roster = tmp_path / "roster.csv"
    roster.write_text("Student ID,Name,Email\nS1,\"Lee, Ann\",ann.lee@uni.example\nS2,Bob Ray,bob@uni.example\n"
                      "S3,Cat Sun,cat@uni.example\n", encoding="utf-8")
    for kind in ("canvas", "moodle"):
        result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--allow-weak-isolation", "--time-limit", "10",
                                     "--roster", str(roster), "--gradebook", kind, "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert "Cat Sun (S3) has no entry in the class folder" in result.output
        assert "no line for zed; its student_id is left empty" in result.output
        assert f"gradebook-{kind}.csv" in result.output
    table = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}
    assert (table["ann.lee"]["student_id"], table["S2"]["student_id"], table["zed"]["student_id"]) == ("S1", "S2", "")
    total, bob = table["ann.lee"]["max_score"], table["S2"]["score"]
    title = Catalog().get("clipping").title
    canvas = list(csv.reader(io.StringIO((out / "gradebook-canvas.csv").read_text())))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", title]
    assert canvas[1][0].strip() == "Points Possible" and canvas[1][-1] == total
    assert [(r[0], r[2], r[-1]) for r in canvas[2:]] == [("Lee, Ann", "S1", total), ("Bob Ray", "S2", bob),
                                                         ("Cat Sun", "S3", "0")]
    moodle = list(csv.DictReader(io.StringIO((out / "gradebook-moodle.csv").read_text())))
    assert [(r["ID number"], r["Email address"], r[title]) for r in moodle] == [
        ("S1", "ann.lee@uni.example", total), ("S2", "bob@uni.example", bob), ("S3", "cat@uni.example", "0")]


@pytest.mark.parametrize("text, message", [
    ("Name,Email\nAnn,a@x\n", "names no student id column"),
    ("id,name\nS1,Ann\nS1,Bob\n", "roster.csv:3: student id 'S1' is listed twice (first on line 2)"),
    ("ann.py\n", "roster.csv:1: expected 'file or folder name,student id'"),
])
def test_a_bad_roster_is_one_line_before_anything_is_graded(tmp_path: Path, text: str, message: str) -> None:
    from judge.errors import UsageError
    from judge.gradebook import read_people

    (tmp_path / "roster.csv").write_text(text)
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_people(tmp_path / "roster.csv")


def test_a_gradebook_needs_a_roster(tmp_path: Path) -> None:
    (tmp_path / "class").mkdir()
    result = runner.invoke(app, ["grade", str(tmp_path / "class"), "-e", "clipping", "--gradebook", "canvas",
                                 "--allow-weak-isolation"])
    assert result.exit_code == 2 and "--gradebook needs --roster" in result.output


# -- notebooks -----------------------------------------------------------------------------------

def _notebook(*cells: tuple[str, str]) -> bytes:
    """nbformat 4 JSON, written by hand as Jupyter saves it (sources as lists of lines)."""
    return json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True),
                                  **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                 for kind, text in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def _answer_notebook() -> bytes:
    """A learner's scratchpad: imports in their own cell, a helper in another, the answer, then
    experiments that must not run (a print, a shell line, a cell magic, a plot)."""
    body = CORRECT.read_text(encoding="utf-8")
    imports = "\n".join(line for line in body.splitlines() if line.startswith(("import ", "from ")))
    rest = "\n".join(line for line in body.splitlines() if not line.startswith(("import ", "from ")))
    return _notebook(
        ("markdown", "# Clipping\nMy answer."),
        ("code", "!pip install torch\n%matplotlib inline\n" + imports),
        ("code", "SCALE = 1.0\n"),
        ("code", rest),
        ("code", "%%timeit\nclip_grad_norm_([], 1.0)\n"),
        ("code", "raise SystemExit('experiments: not part of the answer')\n"),
    )


def test_the_answer_cells_of_a_notebook_are_extracted_and_ipython_lines_noted() -> None:
    from judge.notebooks import notebook_source

    extracted = notebook_source(_answer_notebook(), "ann.ipynb", ("clip_grad_norm_",))
    assert extracted.problem is None
    assert "def clip_grad_norm_" in extracted.source and "import torch" in extracted.source
    assert "SystemExit" not in extracted.source and "pip install" not in extracted.source
    assert "SCALE" not in extracted.source  # defined, but the answer never uses it
    assert "ann.ipynb, cell 2, line 1: IPython line dropped, not run: !pip install torch" in extracted.notes
    assert "ann.ipynb, cell 2, line 2: IPython line dropped, not run: %matplotlib inline" in extracted.notes
    assert any("cell 5: cell magic %%timeit left out" in n for n in extracted.notes)
    compile(extracted.source, "ann.ipynb", "exec")
    nothing = notebook_source(_notebook(("code", "x = 1\n")), "bob.ipynb", ("clip_grad_norm_",))
    assert nothing.problem == "no code cell of bob.ipynb defines clip_grad_norm_"
    assert notebook_source(b"{}", "cat.ipynb", ("f",)).problem.startswith("cat.ipynb is not a Jupyter notebook")


def test_a_helper_used_by_the_answer_comes_with_it() -> None:
    from judge.notebooks import notebook_source

    extracted = notebook_source(_notebook(("code", "def helper(x):\n    return x\n"),
                                          ("code", "def f(x):\n    return helper(x)\n"),
                                          ("code", "print(f(2))\n")), "n.ipynb", ("f",))
    namespace: dict = {}
    exec(compile(extracted.source, "n.ipynb", "exec"), namespace)  # our own test source, not a learner's
    assert namespace["f"](3) == 3 and "print" not in extracted.source


def test_a_class_of_notebooks_is_graded_with_the_notes_on_the_verdict(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """grind grade: a NAME.ipynb (or NAME/clipping.ipynb, Jupyter's checkpoints ignored) is a
    student, graded on its answer cells; grind run --file grades a notebook the same way."""
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    root, out = tmp_path / "class", tmp_path / "out"
    root.mkdir()
    (root / "ann.ipynb").write_bytes(_answer_notebook())
    (root / "bob" / ".ipynb_checkpoints").mkdir(parents=True)
    (root / "bob" / "clipping.ipynb").write_bytes(_notebook(("code", PER_TENSOR.read_text())))
    (root / "bob" / ".ipynb_checkpoints" / "clipping-checkpoint.ipynb").write_bytes(_answer_notebook())
    (root / "cat.ipynb").write_bytes(_notebook(("code", "print('no answer yet')\n")))
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--allow-weak-isolation", "--time-limit", "10",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = {r["student"]: r["verdict"] for r in json.loads((out / "results.json").read_text())}
    assert (rows["ann"]["status"], rows["bob"]["status"], rows["cat"]["status"]) == ("passed", "failed", "error")
    assert any("!pip install torch" in n for n in rows["ann"]["notices"])
    assert rows["cat"]["message"] == "no code cell of cat.ipynb defines clip_grad_norm_"
    result = runner.invoke(app, ["run", "clipping", "--file", str(root / "ann.ipynb")])
    assert result.exit_code == 0, result.output


def test_the_notebook_front_end_shares_the_extraction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """judge.check(NAME, Path("answer.ipynb")) grades the saved notebook's answer cells, and a
    %%grind cell with a ! line has it dropped with the same note (by cell line), not a SyntaxError."""
    pytest.importorskip("IPython")
    from judge.frontends import notebook

    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    saved = tmp_path / "answer.ipynb"
    saved.write_bytes(_answer_notebook())
    assert notebook.check("clipping", saved).passed
    shown: list = []
    monkeypatch.setattr(notebook, "_display", shown.append)
    notebook.grind_cell("clipping", "!pip install torch\n" + CORRECT.read_text())
    assert shown[0].passed, shown[0]
    assert "cell, line 2: IPython line dropped, not run: !pip install torch" in shown[0].graded.lead


# -- similarity (copydetect: a library no one here wrote; its winnowing finds a copy whose names
# and comments were changed, and does not flag two honest answers written apart) ---------------

def _renamed(text: str) -> str:
    """A near-copy as a student makes one: names changed, comments rewritten, a blank line moved."""
    for old, new in (("grads", "gradient_list"), ("total", "overall_norm"), ("coef", "factor")):
        text = text.replace(old, new)
    return "# my own work, honest\n\n" + text.replace("# expect: passed", "# written from scratch")


def test_a_near_copy_is_found_and_independent_answers_are_not(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("copydetect", reason="grind grade --similarity needs copydetect (pip install 'grind[marks]')")
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    root, out = tmp_path / "class", tmp_path / "out"
    root.mkdir()
    shutil.copyfile(CORRECT, root / "ann.py")
    (root / "bob.py").write_text(_renamed(CORRECT.read_text()))
    shutil.copyfile(CORRECT, root / "cat.py")  # an exact copy: similar, and the same sha256
    shutil.copyfile(SUBMISSIONS / "clipping" / "alt_foreach_vectorised.py", root / "dan.py")
    (root / "eve.ipynb").write_bytes(_notebook(("code", _renamed(CORRECT.read_text()))))  # a copy in a notebook
    assert (root / "bob.py").read_text() != CORRECT.read_text()
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--allow-weak-isolation", "--time-limit", "10",
                                 "--similarity", "0.8", "--out", str(out)])
    assert result.exit_code == 0, result.output
    pairs = {(r["student_a"], r["student_b"]): r for r in csv.DictReader(io.StringIO((out / "similarity.csv").read_text()))}
    assert {("ann", "bob"), ("ann", "cat"), ("bob", "cat"), ("ann", "eve")} <= set(pairs)
    assert not any("dan" in pair for pair in pairs), pairs
    assert pairs[("ann", "cat")]["identical"] == "yes" and pairs[("ann", "bob")]["identical"] == ""
    assert float(pairs[("ann", "bob")]["similarity"]) >= 0.8
    markdown = (out / "similarity.md").read_text()
    assert "| ann | bob |" in markdown and "dan" not in markdown
    assert "pairs of submissions at or above 80% similarity" in result.output


def test_similarity_without_copydetect_says_what_to_install_before_grading(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "copydetect", None)  # import copydetect now raises ImportError
    (tmp_path / "class").mkdir()
    shutil.copyfile(CORRECT, tmp_path / "class" / "ann.py")
    result = runner.invoke(app, ["grade", str(tmp_path / "class"), "-e", "clipping", "--allow-weak-isolation",
                                 "--similarity", "0.8", "--out", str(tmp_path / "out")])
    assert result.exit_code == 5 and "--similarity needs the copydetect package: pip install -e '.[marks]'" in result.output
    assert not (tmp_path / "out" / "graded").exists()
