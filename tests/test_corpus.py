"""Diagnoses on code grind's authors did not write as pitfalls.

``tests/corpus/<slug>/*.py`` holds submissions written independently of the exercise's
pitfalls (see judge.corpus for the header format: line 1 says what grind must answer, line 2
where the behaviour comes from; a library look-alike names the library and the behaviour it
imitates and copies no library code).

No correct file may be rejected, no wrong one accepted, and at least ``TARGET`` of the wrong
files that expect a name must get exactly the right one(s), overall and per exercise: the
same figures ``grind validate`` reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from judge.catalog import Catalog
from judge.corpus import TARGET, expectation, grade_corpus, judge_corpus, named
from judge.corpus import corpus_files as _files
from judge.models import Verdict

CORPUS = Path(__file__).parent / "corpus"


def corpus_files(slug: str | None = None) -> list[Path]:
    folders = [CORPUS / slug] if slug else sorted(p for p in CORPUS.iterdir() if p.is_dir())
    return [f for folder in folders for f in _files(folder)]


@pytest.fixture(scope="module")
def verdicts() -> Iterator[dict[Path, Verdict]]:
    """Every corpus file graded once, one warm worker per exercise (as a class would be)."""
    results: dict[Path, Verdict] = {}
    catalog = Catalog()
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        results.update(grade_corpus(catalog.get(folder.name), folder))
    yield results


def test_every_exercise_has_a_corpus() -> None:
    slugs = {e.slug for e in Catalog().all()}
    have = {p.name for p in CORPUS.iterdir() if p.is_dir() and list(p.glob("*.py"))}
    assert slugs <= have, f"no corpus for {sorted(slugs - have)}"


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_corpus_file_gets_its_status(path: Path, verdicts: dict[Path, Verdict]) -> None:
    """Correct code is never rejected, and wrong code is never accepted."""
    status, _ = expectation(path)
    verdict = verdicts[path]
    assert verdict.status.value == status, f"{verdict.status.value}: {verdict.message} {verdict.first_failure}"


def test_the_corpus_is_named_at_the_target_rate(verdicts: dict[Path, Verdict]) -> None:
    wrong = {p: expectation(p)[1] for p in verdicts if expectation(p)[0] == "failed" and expectation(p)[1]}
    assert len(wrong) >= 30, "the corpus is too small to measure a rate"
    misses = {f"{p.parent.name}/{p.stem}": (sorted(want or ()), sorted(named(verdicts[p])))
              for p, want in wrong.items() if named(verdicts[p]) != want}
    rate = 1 - len(misses) / len(wrong)
    assert rate >= TARGET, f"named {rate:.0%} of {len(wrong)}; misses (wanted, got): {misses}"


def test_each_exercise_names_its_corpus_at_the_target_rate(verdicts: dict[Path, Verdict]) -> None:
    """The per-exercise figures validate prints: every exercise on its own reaches the target."""
    catalog = Catalog()
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        mine = {p: v for p, v in verdicts.items() if p.parent == folder}
        report = judge_corpus(catalog.get(folder.name), mine)
        assert report.to_name >= 5, f"{folder.name}: too few named files to measure a rate"
        assert report.problems() == [], f"{folder.name}: {report.summary()}; {report.misses}"


def test_a_share_under_the_target_never_reads_as_the_target() -> None:
    """18 of 19 is 94.7%: rounding it to "95%" would hide that it misses the target."""
    from judge.corpus import CorpusReport

    report = CorpusReport("x", wrong=19, rejected=19, to_name=19, named_right=18,
                          misses=["corpus a.py: named x, should be y"])
    assert "18/19 (94.7%)" in report.summary()
    assert report.problems()[0].startswith("corpus: only 18/19 (94.7%)")
    assert "corpus a.py: named x, should be y" in report.problems()
