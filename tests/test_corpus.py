"""Diagnoses on code grind's authors did not write as pitfalls.

``tests/corpus/<slug>/*.py`` holds submissions written independently of the exercise's
pitfalls: correct answers in unusual styles, single mistakes made the way people make them,
pairs of mistakes, and look-alikes of real libraries' conventions (each file's header names the
library and the behaviour it imitates; none copies library code). Line 1 says what grind must
answer:

    # expect: passed
    # expect: failed pitfall=per-tensor            (named with exactly this pitfall)
    # expect: failed pitfall=a+b                   (named with both, in any order)
    # expect: failed                               (a real difference no pitfall describes)

Line 2 says where the behaviour comes from (``# source: ...``).

No correct file may be rejected, and at least ``TARGET`` of the wrong files that expect a
name must get exactly the right one(s).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import pytest

from judge.catalog import Catalog
from judge.grade import grade, hidden_from_learners
from judge.models import Verdict
from judge.worker.sandbox import WarmWorker

CORPUS = Path(__file__).parent / "corpus"
TARGET = 0.95
HEADER = re.compile(r"#\s*expect:\s*(passed|failed)(?:\s+pitfall=(\S+))?\s*$")


def corpus_files(slug: str | None = None) -> list[Path]:
    folders = [CORPUS / slug] if slug else sorted(p for p in CORPUS.iterdir() if p.is_dir())
    return sorted(f for folder in folders if folder.is_dir() for f in folder.glob("*.py"))


def expectation(path: Path) -> tuple[str, frozenset[str] | None]:
    lines = path.read_text(encoding="utf-8").splitlines() + ["", ""]
    match = HEADER.match(lines[0])
    assert match, f"{path}: line 1 must be '# expect: passed' or '# expect: failed [pitfall=a+b]'"
    assert lines[1].startswith("# source:"), f"{path}: line 2 must say '# source: ...'"
    names = frozenset(match.group(2).split("+")) if match.group(2) else None
    return match.group(1), names


def named(verdict: Verdict) -> frozenset[str]:
    """Every pitfall the verdict names (a compound diagnosis names several)."""
    found = getattr(verdict, "diagnoses", None) or ([verdict.diagnosis] if verdict.diagnosis else [])
    return frozenset(d.slug for d in found)


@pytest.fixture(scope="module")
def verdicts() -> Iterator[dict[Path, Verdict]]:
    """Every corpus file graded once, one warm worker per exercise (as a class would be)."""
    results: dict[Path, Verdict] = {}
    catalog = Catalog()
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        exercise = catalog.get(folder.name)
        with WarmWorker(hidden_from_learners(exercise)) as worker:
            for path in corpus_files(folder.name):
                results[path] = grade(exercise, path, worker=worker)
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
