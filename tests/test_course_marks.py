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
    with pytest.raises(ManifestError, match="has a key 'weight'; the only one is weights"):
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
