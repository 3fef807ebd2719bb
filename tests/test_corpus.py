"""Diagnoses on code grind's authors did not write as pitfalls.

``tests/corpus/<slug>/*.py`` holds submissions written independently of the exercise's
pitfalls (see judge.corpus for the header format: line 1 says what grind must answer, line 2
where the behaviour comes from; a library look-alike names the library and the behaviour it
imitates and copies no library code).

No correct file may be rejected, no wrong one accepted, and at least ``TARGET`` of the wrong
files that expect a name must get exactly the right one(s), in each exercise: the same figures
``grind validate`` reports.
"""

from __future__ import annotations

from pathlib import Path
import pytest

from judge.catalog import Catalog
from judge.corpus import expectation, grade_corpus, judge_corpus
from judge.corpus import corpus_files as _files
from judge.models import Verdict

from .conftest import exercise_worker

CORPUS = Path(__file__).parent / "corpus"


def corpus_files(slug: str | None = None) -> list[Path]:
    folders = [CORPUS / slug] if slug else sorted(p for p in CORPUS.iterdir() if p.is_dir())
    return [f for folder in folders for f in _files(folder)]


_GRADED: dict[str, dict[Path, Verdict]] = {}


def graded(slug: str) -> dict[Path, Verdict]:
    """One exercise's corpus graded once per xdist worker, with a warm worker (as a class would
    be; conftest.exercise_worker, shared with the golden submissions and the stubs). Per
    exercise rather than all at once, so that the exercises' corpora are spread over the
    xdist workers (see ``XDIST_UNITS`` in conftest.py: one unit per exercise)."""
    if slug not in _GRADED:
        _GRADED[slug] = grade_corpus(Catalog().get(slug), CORPUS / slug, worker=exercise_worker(slug))
    return _GRADED[slug]


def slugs() -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir() if p.is_dir())


def test_every_exercise_has_a_corpus() -> None:
    slugs = {e.slug for e in Catalog().all()}
    have = {p.name for p in CORPUS.iterdir() if p.is_dir() and list(p.glob("*.py"))}
    assert slugs <= have, f"no corpus for {sorted(slugs - have)}"


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_corpus_file_gets_its_status(path: Path) -> None:
    """Correct code is never rejected, and wrong code is never accepted."""
    status, _ = expectation(path)
    verdict = graded(path.parent.name)[path]
    assert verdict.status.value == status, f"{verdict.status.value}: {verdict.message} {verdict.first_failure}"


@pytest.mark.parametrize("path", [p for p in corpus_files() if expectation(p)[0] == "failed"],
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_corpus_file_gets_a_wrong_name(path: Path) -> None:
    """A wrong name is worse than none: it sends the learner after a mistake they did not make.
    Every pitfall a verdict names must be among those the file's header gives; a file whose
    header gives none (a mistake no pitfall describes) must get no name at all."""
    from judge.corpus import named

    _, want = expectation(path)
    verdict = graded(path.parent.name)[path]
    extra = named(verdict) - (want or frozenset())
    assert not extra, (f"named {sorted(named(verdict))}, header gives {sorted(want or [])}: "
                       f"{[d.explains for d in verdict.diagnoses]}")


def test_the_corpus_is_large_enough_to_measure_a_rate() -> None:
    """Each exercise is held to the target below; a share of each at least TARGET makes the share of
    all of them at least TARGET too (a weighted mean), so only the size is checked overall."""
    wrong = [p for p in corpus_files() if expectation(p)[0] == "failed" and expectation(p)[1]]
    assert len(wrong) >= 30, f"only {len(wrong)} wrong files with a name to measure a rate on"


@pytest.mark.parametrize("slug", slugs())
def test_each_exercise_names_its_corpus_at_the_target_rate(slug: str) -> None:
    """The per-exercise figures validate prints: every exercise on its own reaches the target."""
    report = judge_corpus(Catalog().get(slug), graded(slug))
    assert report.to_name >= 5, f"{slug}: too few named files to measure a rate"
    assert report.problems() == [], f"{slug}: {report.summary()}; {report.misses}"


def test_a_share_under_the_target_never_reads_as_the_target() -> None:
    """18 of 19 is 94.7%: rounding it to "95%" would hide that it misses the target."""
    from judge.corpus import CorpusReport

    report = CorpusReport("x", wrong=19, rejected=19, to_name=19, named_right=18,
                          misses=["corpus a.py: named x, should be y"])
    assert "18/19 (94.7%)" in report.summary()
    assert report.problems()[0].startswith("corpus: only 18/19 (94.7%)")
    assert "corpus a.py: named x, should be y" in report.problems()


def test_any_wrong_name_is_a_problem_whatever_the_share() -> None:
    """One wrong name in twenty keeps the share at 95%, yet validate must still report it, with
    the rate beside the share (rounded up, so that it never reads as zero)."""
    from judge.corpus import CorpusReport

    report = CorpusReport("x", wrong=20, rejected=20, to_name=20, named_right=19, wrongly_named=1,
                          misses=["corpus a.py: wrong name x, should be y"])
    assert "19/20 (95%) of the wrong submissions named right, 1/20 (5%) named wrongly" in report.summary()
    assert report.problems() == ["corpus a.py: wrong name x, should be y"]
    assert CorpusReport("x", wrong=3, rejected=3, wrongly_named=1).wrong_name_text() == "1/3 (33.4%)"


def test_an_exercises_graded_tests_form_one_xdist_unit() -> None:
    """Its corpus, golden submissions and adequacy report share one xdist worker (and so its
    cached reference and pairs); two exercises do not."""
    from tests.conftest import xdist_unit

    units = {xdist_unit(n) for n in ("tests/test_corpus.py::test_corpus_file_gets_its_status[adam/x]",
                                     "tests/test_corpus.py::test_each_exercise_names_its_corpus_at_the_target_rate[adam]",
                                     "tests/test_exercises.py::test_golden_submission[adam/y]",
                                     "tests/test_exercises.py::test_stub_fails[adam]")}
    assert units == {"exercise-adam"}
    assert xdist_unit("tests/test_corpus.py::test_corpus_file_gets_its_status[clipping/x]") == "exercise-clipping"
