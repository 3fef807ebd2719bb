"""Instructor tools: validate (mutation testing of the checks), new, batch grading, autograder."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

from judge.adequacy import check_adequacy
from judge.batch import grade_class
from judge.catalog import Catalog
from judge.cli import app
from judge.scaffold import KINDS, TEMPLATES
from judge.status import ExitStatus
from judge.worker.sandbox import Limits

from .conftest import ADVERSARIAL, ROOT, SUBMISSIONS

runner = CliRunner()


def test_validate_names_the_pitfall_no_case_catches(course: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove the all-zero case: the NaN-on-zero pitfall then passes everything, and validate says so.
    The report check_adequacy returns is read as `grind validate` gets it (one computation, not two)."""
    import judge.adequacy

    checks = course / "solutions" / "clipping" / "checks.py"
    text = checks.read_text()
    line = next(line for line in text.splitlines() if 'case("all_zero_grads"' in line)
    checks.write_text(text.replace(line + "\n", ""))
    reports = []

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        reports.append(check_adequacy(*args, **kwargs))
        return reports[-1]

    monkeypatch.setattr(judge.adequacy, "check_adequacy", recorded)
    result = runner.invoke(app, ["validate", "clipping"])
    [report] = reports
    assert report.exercise == "clipping" and not report.ok
    assert any("'nan-on-zero'" in p and "no case catches it" in p for p in report.problems), report.problems
    assert result.exit_code == ExitStatus.FAILED
    assert "nan-on-zero" in result.output and "no case catches it" in result.output


def test_validate_passes_an_adequate_exercise(course: Path) -> None:
    """...and writes nothing into the course: this one has no corpus or golden folders, and
    validate hides only the folders that exist (it once created both, and crashed with exit 4
    on a read-only course)."""
    before = sorted(str(p.relative_to(course)) for p in course.rglob("*"))
    result = runner.invoke(app, ["validate", "--all"])
    assert result.exit_code == ExitStatus.PASSED, result.output
    assert sorted(str(p.relative_to(course)) for p in course.rglob("*")) == before
    pitfalls = (ROOT / "solutions" / "clipping" / "pitfalls.py").read_text().count('"slug":')
    assert "adequate" in result.output and f"{pitfalls}/{pitfalls}" in result.output


def test_validate_reports_the_share_of_the_corpus_it_names(course: Path) -> None:
    """Three corpus files, one with a header naming the wrong pitfall: validate grades them all,
    reports 1 of 2 named (50%, under the 95% target), 1 of 2 named wrongly beside it, and says
    which file got the wrong name."""
    folder = course / "tests" / "corpus" / "clipping"
    folder.mkdir(parents=True)
    corpus = ROOT / "tests" / "corpus" / "clipping"
    for name in ("correct_numpy_norm.py", "per_tensor_class.py"):
        shutil.copy(corpus / name, folder / name)
    text = (corpus / "per_tensor_class.py").read_text().replace("pitfall=per-tensor", "pitfall=sum-of-norms", 1)
    (folder / "mislabelled.py").write_text(text)
    result = runner.invoke(app, ["validate", "clipping"])
    assert result.exit_code == ExitStatus.FAILED, result.output
    output = " ".join(result.output.split())
    assert ("1/2 (50%) of the wrong submissions named right, 1/2 (50%) named wrongly, 1/1 correct ones accepted, "
            "2/2 wrong ones rejected") in output, output
    assert "corpus mislabelled.py: wrong name per-tensor, should be sum-of-norms" in output
    assert "named wrongly" in output.split("Exercise validation")[1].split("clipping")[0]  # the column


@pytest.mark.parametrize("kind", KINDS)
def test_new_then_validate_reports_exactly_the_todos(course: Path, kind: str) -> None:
    """A fresh scaffold of each kind is a working exercise on the author kit: its reference (and
    oracle) pass, its stub fails, its pitfalls are caught and named, and validate lists its TODOs
    and nothing else."""
    made = runner.invoke(app, ["new", "demo", "--kind", kind])
    assert made.exit_code == 0, made.output
    assert "Copied grind's author kit" not in made.output  # the course has one: it is left alone
    templates = (TEMPLATES / kind).rglob("*.tmpl")
    todos = sum(line.count("TODO") > 0 for t in templates for line in t.read_text().splitlines())
    report = check_adequacy(Catalog().get("demo"))
    # A training scaffold has no oracle and no GOLDEN values yet: nothing independent checks its
    # reference, and validate says so until the author states some (issue 34).
    independent = [p for p in report.problems if "nothing independent checks the reference" in p]
    assert len(independent) == (kind == "training"), report.problems
    problems = [p for p in report.problems if p not in independent]
    assert len(problems) == todos
    assert all(p.startswith("TODO left in") for p in problems), report.problems
    assert report.pitfalls >= 1 and report.caught == report.pitfalls
    assert report.verdicts["stub"].status.value == "failed"
    assert (course / "solutions" / "demo" / "oracle.py").is_file() == (kind != "training")
    again = runner.invoke(app, ["new", "demo", "--kind", kind])
    assert again.exit_code == ExitStatus.USAGE and "already exists" in again.output


def test_a_kit_built_pitfall_without_a_slug_is_named_in_words(course: Path) -> None:
    """The scaffold's pitfalls go through the kit's Deltas, which reads the slug first: a missing
    one is said as the judge says it (it read "KeyError: 'slug'")."""
    assert runner.invoke(app, ["new", "demo", "--kind", "optimizer"]).exit_code == 0
    pitfalls = course / "solutions" / "demo" / "pitfalls.py"
    _break(pitfalls, '"slug": "none-grad-as-zero",', "")
    result = runner.invoke(app, ["validate", "demo"])
    output = " ".join(result.output.split())
    assert result.exit_code == ExitStatus.FAILED, output
    assert f"{pitfalls}:" in output and "is missing key 'slug'; add it" in output, output
    assert "KeyError" not in output


def test_new_copies_the_kit_into_a_course_without_one(course: Path) -> None:
    """A course from before the kit gets grind's own copy, which the scaffold's checks import."""
    shutil.rmtree(course / "solutions" / "_kit")
    made = runner.invoke(app, ["new", "demo", "--kind", "optimizer"])
    assert made.exit_code == 0, made.output
    assert "Copied grind's author kit" in made.output
    golden = course / "tests" / "submissions" / "demo" / "README.md"  # validate grades the files put here
    assert "# expect: failed pitfall=SLUG" in golden.read_text() and str(golden) in made.output
    assert (course / "solutions" / "_kit" / "__init__.py").read_text() == \
        (ROOT / "solutions" / "_kit" / "__init__.py").read_text()
    unknown = runner.invoke(app, ["new", "other", "--kind", "scheduler"])
    assert unknown.exit_code == ExitStatus.USAGE and "function, optimizer, training" in unknown.output


def _class_folder(root: Path) -> dict[str, tuple[str, str | None]]:
    """~30 students: correct answers, every pitfall, crashes, timeouts, a syntax error, a missing file.
    Returns the expected (status, pitfall slug) per student."""
    expected: dict[str, tuple[str, str | None]] = {}
    sources = {p.stem: p for p in SUBMISSIONS.glob("clipping/*.py")}
    n = 0

    def add(src: Path, status: str, pitfall: str | None, as_folder: bool) -> None:
        nonlocal n
        n += 1
        name = f"s{n:02d}"
        if as_folder:
            (root / name).mkdir()
            shutil.copyfile(src, root / name / "clipping.py")
        else:
            shutil.copyfile(src, root / f"{name}.py")
        expected[name] = (status, pitfall)

    for i in range(8):
        for stem in ("correct_loop", "alt_foreach_vectorised", "alt_out_of_place_assignment", "alt_without_epsilon"):
            if len([s for s in expected.values() if s[0] == "passed"]) < 9:
                add(sources[stem], "passed", None, as_folder=i % 2 == 0)
    for stem, slug in (("pitfall_per_tensor", "per-tensor"), ("pitfall_no_clamp", "no-clamp"),
                       ("pitfall_norm_after", "norm-after-clipping"), ("pitfall_sum_of_norms", "sum-of-norms"),
                       ("pitfall_nan_on_zero", "nan-on-zero"), ("pitfall_new_tensors", "new-tensors")):
        add(sources[stem], "failed", slug, as_folder=False)
        add(sources[stem], "failed", slug, as_folder=True)
    # segfault_ctypes imports ctypes: grading for marks refuses it before it runs (introspection.py)
    for stem, status in (("os_exit_at_import", "crashed"), ("segfault_ctypes", "forbidden"),
                         # killing the parent imports signal: grading for marks refuses it (handlers get frames)
                         ("kill_parent", "forbidden"), ("forge_results_and_exit", "crashed"),
                         ("infinite_loop", "timeout"), ("sleep_forever", "timeout"),
                         ("syntax_error", "error"), ("forbidden_getattr", "forbidden")):
        add(ADVERSARIAL / f"{stem}.py", status, None, as_folder=False)
    (root / "s99-empty").mkdir()
    expected["s99-empty"] = ("error", None)
    return expected


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_grade_a_class_in_every_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One row per student, right statuses and pitfalls in CSV, JSON, JUnit and Gradescope;
    learners' files untouched; a re-run reuses every unchanged result."""
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    submissions = tmp_path / "class"
    submissions.mkdir()
    expected = _class_folder(submissions)
    assert len(expected) >= 30
    before = _hashes(submissions)
    out = tmp_path / "out"
    args = ["grade", str(submissions), "--exercise", "clipping", "--jobs", "2", "--time-limit", "2",
            "-F", "csv", "-F", "json", "-F", "junit", "-F", "gradescope", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert _hashes(submissions) == before
    # The closing line names every entry the run left under OUT, and no more.
    closing = result.output.strip().splitlines()[-1]
    entries = sorted(entry.name for entry in out.iterdir())
    assert entries == ["grade.log", "graded", "gradescope", "junit.xml", "results.json", "summary.csv"]
    for entry in entries:
        assert entry in closing, (entry, closing)
    assert f"({len(expected)} student files)" in closing, closing

    rows = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text())))
    assert [r["student"] for r in rows] == sorted(expected)
    for row in rows:
        status, pitfall = expected[row["student"]]
        assert row["status"] in status.split("|"), row
        if pitfall:
            assert row["pitfall"], row
        assert set(row) == {"student", "status", "score", "max_score", "pitfall", "message", "sha256", "duration_s"}

    data = json.loads((out / "results.json").read_text())
    by_student = {r["student"]: r for r in data}
    for name, (status, pitfall) in expected.items():
        verdict = by_student[name]["verdict"]
        assert verdict["status"] in status.split("|")
        assert (verdict["pitfall"] or {}).get("slug") == pitfall

    junit = ET.parse(out / "junit.xml").getroot()
    assert junit.tag == "testsuites"
    suites = junit.findall("testsuite")
    assert sorted(s.get("name") for s in suites) == sorted(expected)
    total = 0
    for suite in suites:
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases) > 0
        assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases)
        assert int(suite.get("errors")) == sum(c.find("error") is not None for c in cases)
        for case in cases:
            assert case.get("classname") and case.get("name")
            for bad in case.findall("failure") + case.findall("error"):
                assert bad.get("message") is not None
        total += len(cases)
        status = expected[suite.get("name")][0]
        if status == "passed":
            assert int(suite.get("failures")) == int(suite.get("errors")) == 0
        else:
            assert int(suite.get("failures")) + int(suite.get("errors")) > 0
    assert int(junit.get("tests")) == total

    for name, (status, _) in expected.items():
        gs = json.loads((out / "gradescope" / name / "results.json").read_text())
        assert isinstance(gs["score"], float) and gs["tests"]
        assert (gs["score"] == gs["max_score"]) == (status == "passed")
        for test in gs["tests"]:
            assert {"name", "score", "max_score", "status", "visibility"} <= set(test)
            assert test["status"] in ("passed", "failed") and test["visibility"] in ("visible", "hidden")
        if status in ("passed", "failed"):
            example = next(t for t in gs["tests"] if t["name"] == "worked_example")
            assert example["visibility"] == "visible"
            assert all(t["visibility"] == "hidden" for t in gs["tests"] if t["name"] != "worked_example")

    reused: list[bool] = []
    exercise = Catalog().get("clipping")
    same_limits = Limits(wall_s=2.0, memory_mb=exercise.memory_mb)  # what --time-limit 2 meant
    grade_class(exercise, submissions, out, limits=same_limits, on_done=lambda s, r, kept: reused.append(kept))
    assert reused == [True] * len(expected)


def _check_results_spec(results: dict) -> None:
    """Gradescope's results.json: score and max_score, and tests[] each with name, score,
    max_score, output and visibility."""
    assert isinstance(results["score"], (int, float)) and isinstance(results["max_score"], (int, float))
    assert results["tests"], results
    for test in results["tests"]:
        assert isinstance(test["name"], str) and test["name"]
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], (int, float))
        assert isinstance(test["output"], str)
        assert test["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    assert sum(t["max_score"] for t in results["tests"]) == results["max_score"]
    assert sum(t["score"] for t in results["tests"]) == results["score"]


def test_autograder_bundle_end_to_end_under_its_root(tmp_path: Path) -> None:
    """The zip unpacked as Gradescope does (source/, submission/, results/ under a root given by
    GRIND_AUTOGRADER_ROOT): run_autograder writes a results.json that follows the spec, for a
    good submission and for one that crashes the worker, from the bundle's own source, and the
    reference comes from the cache shipped in the bundle (never recomputed per submission).
    setup.sh installs only what grading needs, with torch pinned."""
    out = tmp_path / "bundles"
    result = runner.invoke(app, ["autograder", "build", "clipping", "--out", str(out)])
    assert result.exit_code == 0, result.output
    archive = zipfile.ZipFile(out / "clipping-autograder.zip")
    names = archive.namelist()
    for needed in ("setup.sh", "run_autograder", "grind/judge/autograder.py", "requirements.txt", "constraints.txt",
                   "grind/exercises/clipping/exercise.toml", "grind/solutions/clipping/checks.py",
                   "grind/solutions/clipping/sealed.json", "grind/solutions/_kit/__init__.py"):
        assert needed in names
    # Sealed: no reference, pitfalls or oracle to run (tests/test_bundle.py runs the attack).
    assert not [n for n in names if n.rsplit("/", 1)[-1] in ("reference.py", "pitfalls.py", "oracle.py")], names
    # setup.sh: torch pinned to this machine's version, from the CPU index; requirements.txt lists
    # none of the CLI-only packages, and there is no pyproject to build (so no hatchling).
    from importlib import metadata

    setup = (out / "clipping-autograder" / "setup.sh").read_text()
    assert f'TORCH_VERSION="{metadata.version("torch").split("+")[0]}"' in setup
    assert '"${PIP[@]}" --index-url "$TORCH_INDEX_URL" "torch==$TORCH_PIN"' in setup  # +cpu: see test_bundle.py
    install = (out / "clipping-autograder" / "requirements.txt").read_text()
    for cli_only in ("typer", "rich", "fsrs", "plotext", "watchfiles", "hatchling"):
        assert cli_only not in install, install
    for needed in ("numpy", "safetensors", "platformdirs"):
        assert needed in install, install
    assert "grind/pyproject.toml" not in names
    shipped = sorted({n.split("/")[2] for n in names if n.startswith("grind/cache/clipping-")})
    assert len(shipped) == 1, names  # the reference, precomputed at build time
    for source, want_full in ((SUBMISSIONS / "clipping" / "correct_loop.py", True),
                              (ADVERSARIAL / "os_exit_at_import.py", False)):
        root = tmp_path / f"ag-{source.stem}"
        archive.extractall(root / "source")
        for script in ("run_autograder", "setup.sh"):
            (root / "source" / script).chmod(0o755)
        (root / "submission").mkdir()
        shutil.copyfile(source, root / "submission" / "clipping.py")
        cache = root / "source" / "grind" / "cache"
        before = sorted(p.name for p in cache.iterdir())
        env = {k: v for k, v in os.environ.items() if k not in ("GRIND_CACHE_DIR", "GRIND_CONTENT", "PYTHONPATH")}
        env.update(GRIND_AUTOGRADER_ROOT=str(root), GRIND_PYTHON=sys.executable)
        ran = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, check=True,
                             timeout=300, capture_output=True, text=True, cwd=tmp_path)
        assert f"from {root / 'source' / 'grind' / 'judge'}" in ran.stdout, ran.stdout + ran.stderr
        assert "reference: cache hit" in ran.stdout, ran.stdout + ran.stderr
        assert sorted(p.name for p in cache.iterdir()) == before  # nothing computed, nothing added
        results = json.loads((root / "results" / "results.json").read_text())
        _check_results_spec(results)
        assert (results["score"] == results["max_score"]) is want_full, results


def test_autograder_grading_core_needs_no_cli_package(tmp_path: Path) -> None:
    """The bundle's entry point (python -m judge.autograder) and everything grading imports work
    with typer, rich, fsrs, plotext and watchfiles absent: setup.sh does not install them."""
    code = ("import runpy, sys\n"
            "for name in ('typer', 'rich', 'fsrs', 'plotext', 'watchfiles'): sys.modules[name] = None\n"
            "import judge.batch, judge.formats, judge.grade\n"
            "sys.argv = ['judge.autograder']\n"
            "runpy.run_module('judge.autograder', run_name='__main__')\n")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert ran.returncode == 2 and "usage: python -m judge.autograder" in ran.stderr, ran.stderr


def test_autograder_torch_version_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--torch-version X.Y.Z is the one line setup.sh pins; anything else is refused up front."""
    from types import SimpleNamespace

    import judge.adequacy

    monkeypatch.setattr(judge.adequacy, "check_adequacy", lambda exercise: SimpleNamespace(problems=[]))
    out = tmp_path / "bundles"
    result = runner.invoke(app, ["autograder", "build", "clipping", "--out", str(out), "--torch-version", "2.5.1"])
    assert result.exit_code == 0, result.output
    assert 'TORCH_VERSION="2.5.1"' in (out / "clipping-autograder" / "setup.sh").read_text()
    result = runner.invoke(app, ["autograder", "build", "clipping", "--out", str(out), "--torch-version", "latest"])
    assert result.exit_code == ExitStatus.USAGE, result.output
    assert "grind: --torch-version 'latest'" in result.output


# --- validate catches an author's real mistakes (issue 13): one line each, naming file, key or case, and fix.

def _break(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("mistake", ["duplicate_case", "unknown_kind", "pitfall_without_slug", "checks_syntax",
                                     "reference_syntax"])
def test_validate_names_the_file_and_case_of_a_broken_checks_or_pitfalls(course: Path, mistake: str) -> None:
    """Mistakes in the trusted files stop the reference's child before it runs anything: validate
    fails with one line naming the file, the case or pitfall, and what to do, not 'did the
    submission call exit?'."""
    solutions = course / "solutions" / "clipping"
    checks, pitfalls = solutions / "checks.py", solutions / "pitfalls.py"
    zero = 'case("all_zero_grads", inputs=fixed([[0.0, 0.0], [0.0]], 1.0), call=run_clip),\n'
    if mistake == "duplicate_case":
        _break(checks, zero, zero + "    " + zero.replace("[0.0]]", "[0.0, 0.0]]"))
        want = [f"{checks}: two cases are named 'all_zero_grads'", "its own name"]
    elif mistake == "unknown_kind":
        _break(checks, 'case("all_zero_grads", ', 'case("all_zero_grads", "egde", ')
        # the kit's case() refuses it as it is written (file:line); a plain dict is refused by the child
        want = [f"{checks}:", "case 'all_zero_grads'", "'egde'", "example, edge, random"]
    elif mistake == "pitfall_without_slug":
        _break(pitfalls, '"slug": "no-clamp",', "")
        want = [f"{pitfalls}: PITFALLS[1] ('", "is missing key 'slug'; add it"]
    elif mistake == "reference_syntax":  # named as the reference's, not as incomplete observations of checks.py
        reference = solutions / "reference.py"
        reference.write_text(reference.read_text() + "\ndef broken(:\n")
        want = [f"{reference}:", "the reference does not load: SyntaxError"]
    else:
        lines = checks.read_text().splitlines()
        number = lines.index("CASES = [") + 1
        lines[number - 1] = "CASES = [("
        checks.write_text("\n".join(lines) + "\n")
        want = [f"{checks}:", "syntax error"]
    result = runner.invoke(app, ["validate", "clipping"])
    output = " ".join(result.output.split())
    assert result.exit_code == ExitStatus.FAILED, output
    for needed in want:
        assert needed in output, output
    assert "did the submission call exit" not in output and "KeyError" not in output


def _adequacy_of_broken_copy(course: Path) -> list[str]:
    exercise = Catalog().get("clipping")
    return check_adequacy(exercise, with_stub=False).problems


def test_validate_flags_a_forbidden_name_that_names_nothing(course: Path) -> None:
    """A typo in `forbidden` would let the learner call the real function: the trusted child
    resolves each name, and validate names the entry and the fix."""
    manifest = course / "exercises" / "clipping" / "exercise.toml"
    _break(manifest, '"torch.nn.utils.clip_grad_norm_",', '"torch.nn.utilz.clip_grad_norm_",')
    problems = _adequacy_of_broken_copy(course)
    assert any(p.startswith(f"{manifest}: forbidden entry 'torch.nn.utilz.clip_grad_norm_' names no torch object")
               for p in problems), problems


def test_validate_flags_exact_tolerance_without_an_oracle(course: Path) -> None:
    """rtol = atol = 0 fails correct code on float noise; without an oracle proving an
    independent version matches bit for bit, validate says so and suggests a tolerance."""
    manifest = course / "exercises" / "clipping" / "exercise.toml"
    _break(manifest, "float32 = { rtol = 1e-5, atol = 1e-7 }", "float32 = { rtol = 0, atol = 0 }")
    (course / "solutions" / "clipping" / "oracle.py").unlink()
    problems = _adequacy_of_broken_copy(course)
    assert any(p.startswith(f"{manifest}: key 'tolerance' entry 'float32' has rtol = atol = 0") and "rtol = 1e-6" in p
               for p in problems), problems


def test_validate_flags_a_wrong_number_in_the_worked_example(course: Path) -> None:
    """0.9 for 0.9231 was accepted (within half a unit of its one decimal); a number must now be
    exact or correctly rounded to 3 significant digits, and follow the example's name."""
    statement = course / "exercises" / "clipping" / "README.md"
    _break(statement, "g2 -> [0.9231]", "g2 -> [0.9]")
    problems = _adequacy_of_broken_copy(course)
    assert any(p.startswith(f"{statement}: worked example 'worked_example' observes") and "0.923077" in p
               for p in problems), problems


def test_validate_grades_the_golden_submissions(course: Path) -> None:
    """Golden files in tests/submissions/<slug>/ are graded with one warm worker; a file whose
    verdict or pitfall differs from its header is reported by name."""
    from judge.adequacy import golden_problems

    folder = course / "tests" / "submissions" / "clipping"
    folder.mkdir(parents=True)
    shutil.copy(SUBMISSIONS / "clipping" / "correct_loop.py", folder / "correct_loop.py")
    shutil.copy(SUBMISSIONS / "clipping" / "pitfall_per_tensor.py", folder / "per_tensor.py")
    _break(folder / "per_tensor.py", "pitfall=per-tensor", "pitfall=sum-of-norms")
    problems = golden_problems(Catalog().get("clipping"), folder)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{folder / 'per_tensor.py'}: golden submission expects 'failed "
                                  "pitfall=sum-of-norms', got 'failed pitfall=per-tensor'"), problems
    assert ".;" not in problems[0], problems  # the verdict's sentence, then the advice
    # Right again, validate says the files were graded: silence read as "none were".
    _break(folder / "per_tensor.py", "pitfall=sum-of-norms", "pitfall=per-tensor")
    result = runner.invoke(app, ["validate", "clipping"])
    assert result.exit_code == 0, result.output
    assert f"clipping: 2 golden submission(s) in {folder} got the verdict their line 1 states" in result.output


def test_a_wrong_type_in_the_manifest_reads_as_words(course: Path) -> None:
    manifest = course / "exercises" / "clipping" / "exercise.toml"
    _break(manifest, "time_limit = 10", 'time_limit = "ten"')
    from judge.errors import ManifestError

    with pytest.raises(ManifestError, match="key 'time_limit' .*must be int or float, got str"):
        Catalog().get("clipping")


def test_autograder_build_refuses_an_exercise_that_fails_validate(course: Path, tmp_path: Path) -> None:
    checks = course / "solutions" / "clipping" / "checks.py"
    checks.write_text(checks.read_text() + "def broken(:\n")
    out = tmp_path / "bundles"
    result = runner.invoke(app, ["autograder", "build", "clipping", "--out", str(out)])
    output = " ".join(result.output.split())
    assert result.exit_code == ExitStatus.JUDGE_ERROR, output
    assert "refusing to build clipping" in output and f"{checks}:" in output and "syntax error" in output
    assert not (out / "clipping-autograder.zip").exists()


def test_the_child_refuses_plain_dict_cases_with_an_unknown_kind_or_a_duplicate_name() -> None:
    """Checks written without the kit (plain dicts) get the same one-line refusal as the kit's case()."""
    from judge.worker.child.checks import AuthoringError, check_cases, check_pitfalls

    with pytest.raises(AuthoringError, match=r"^checks.py: case 'zero' has kind 'egde'; use one of example, edge, random$"):
        check_cases([{"name": "zero", "kind": "egde"}], "checks.py")
    with pytest.raises(AuthoringError, match=r"^checks.py: two cases are named 'zero'"):
        check_cases([{"name": "zero"}, {"name": "one", "kind": "random"}, {"name": "zero", "kind": "example"}],
                    "checks.py")
    with pytest.raises(AuthoringError, match=r"^pitfalls.py: PITFALLS\[0\] \('Off by one'\) is missing key 'slug'"):
        check_pitfalls([{"name": "Off by one", "explanation": "", "hint": "", "impl": None}], "pitfalls.py")
    check_cases([{"name": "zero"}, {"name": "one", "kind": "random"}], "checks.py")  # fine


def test_a_compound_diagnosis_shows_every_pitfall_in_the_class_summaries() -> None:
    """A verdict naming two mistakes (per-tensor clipping and a sum of norms, made together)
    shows both in summary.csv and in the Gradescope output, not only the first."""
    from judge.formats import to_csv, to_gradescope

    pitfalls = [{"slug": "per-tensor", "name": "per-tensor clipping", "explanation": "each tensor alone."},
                {"slug": "sum-of-norms", "name": "a sum of norms", "explanation": "norms added."}]
    verdict = {"status": "failed", "message": "0 of 1 checks passed.", "pitfall": pitfalls[0],
               "pitfalls": pitfalls, "checks": [{"name": "worked_example", "kind": "example", "status": "failed",
                                                 "message": "grad[0]: values differ"}], "duration_s": 0.1}
    csv_text = to_csv([{"student": "ann", "verdict": verdict, "sha256": "x"}])
    assert "per-tensor clipping + a sum of norms" in csv_text
    output = to_gradescope({"student": "ann", "verdict": verdict, "sha256": "x"})["output"]
    assert "Diagnosis: per-tensor clipping." in output and "Diagnosis: a sum of norms." in output


def test_the_gradescope_output_says_what_a_notebook_left_out() -> None:
    """On Gradescope the output is all a student sees: a notebook's dropped `!pip` line and its
    cells left out (notices on the verdict) are said there, as `grind run` says them."""
    from judge.formats import to_gradescope

    notices = ["bob.ipynb, cell 2, line 1: IPython line dropped, not run: !pip install torch",
               "bob.ipynb: 2 code cells not part of the answer (they define none of Lion nor anything it uses) "
               "left out, not run"]
    verdict = {"status": "passed", "message": "All checks passed.", "notices": notices, "duration_s": 0.1,
               "checks": [{"name": "worked_example", "kind": "example", "status": "passed", "message": ""}]}
    output = to_gradescope({"student": "bob", "verdict": verdict, "sha256": "x"})["output"]
    assert output.splitlines() == ["All checks passed.", *(f"Note: {n}" for n in notices)]
