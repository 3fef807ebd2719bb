"""Every exercise is adequate, and every golden submission gets its expected verdict.

Golden submissions live in ``tests/submissions/<slug>/<name>.py``; the first line says what the
judge must answer, e.g. ``# expect: passed`` or ``# expect: failed pitfall=per-tensor`` or
``# expect: forbidden``, ``error``, ``timeout``, ``crashed``. They are graded as ``grind watch``
and ``grind grade`` grade: forks of one warm worker per exercise, each submission in a fresh,
isolated child (a cold start per file would import torch ~80 times to prove the same verdicts;
the cold path is exercised file by file by the adversarial suite's cold mode and the CLI tests).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Iterator

import pytest

from judge.adequacy import AdequacyReport, check_adequacy
from judge.catalog import Catalog
from judge.grade import grade, hidden_from_learners
from judge.models import Exercise, Status
from judge.worker.sandbox import Limits, WarmWorker

from .conftest import SUBMISSIONS

SLUGS = Catalog().slugs()


@functools.lru_cache(maxsize=None)
def adequacy(slug: str) -> AdequacyReport:
    return check_adequacy(Catalog().get(slug))


@pytest.mark.parametrize("slug", SLUGS)
def test_reference_passes_and_equals_the_torch_oracle(slug: str) -> None:
    """The reference passes its own cases, and the torch-driven oracle agrees on every one."""
    report = adequacy(slug)
    assert report.verdicts["reference"].status is Status.PASSED
    assert "oracle" in report.verdicts, f"{slug} has no oracle.py"
    oracle = report.verdicts["oracle"]
    assert oracle.status is Status.PASSED, oracle.first_failure


@pytest.mark.parametrize("slug", SLUGS)
def test_every_pitfall_is_rejected_and_named_as_itself(slug: str) -> None:
    """Mutation testing of the checks: each known-wrong variant fails and is diagnosed as itself."""
    report = adequacy(slug)
    pitfalls = {k: v for k, v in report.verdicts.items() if k.startswith("pitfall:")}
    assert len(pitfalls) >= 5
    for subject, verdict in pitfalls.items():
        assert verdict.status is Status.FAILED, subject
        assert verdict.diagnosis is not None and f"pitfall:{verdict.diagnosis.slug}" == subject, subject
    assert report.problems == []


@pytest.mark.parametrize("slug", SLUGS)
def test_untouched_stub_fails_and_shows_the_worked_example(slug: str) -> None:
    """The stub is rejected, and the worked example is among the checks, by name."""
    stub = adequacy(slug).verdicts["stub"]
    assert stub.status is Status.FAILED
    assert any(c.kind == "example" for c in stub.checks)


def _expectation(path: Path) -> tuple[str, str | None]:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.match(r"#\s*expect:\s*(\w+)(?:\s+pitfall=(\S+))?", first)
    assert match, f"{path}: first line must be '# expect: STATUS [pitfall=SLUG]'"
    return match.group(1), match.group(2)


GOLDEN = sorted(SUBMISSIONS.glob("*/*.py"))


@pytest.fixture(scope="module")
def warm_workers() -> Iterator[dict[str, WarmWorker]]:
    """The warm worker of the exercise being graded (tests/conftest.py keeps an exercise's golden
    submissions together on one xdist worker, so each exercise's server imports torch once)."""
    workers: dict[str, WarmWorker] = {}
    yield workers
    for worker in workers.values():
        worker.close()


def _warm_worker(workers: dict[str, WarmWorker], exercise: Exercise) -> WarmWorker:
    if exercise.slug not in workers:
        for done in workers.values():  # the previous exercise's files are graded: one server at a time
            done.close()
        workers.clear()
        workers[exercise.slug] = WarmWorker(hidden_from_learners(exercise))
    return workers[exercise.slug]


@pytest.mark.parametrize("path", GOLDEN, ids=[f"{p.parent.name}/{p.stem}" for p in GOLDEN])
def test_golden_submission(path: Path, warm_workers: dict[str, WarmWorker]) -> None:
    """Each golden submission gets exactly the verdict (and pitfall) written on its first line."""
    status, pitfall = _expectation(path)
    exercise = Catalog().get(path.parent.name)
    # A short wall clock keeps the infinite-loop submissions from costing the suite seconds.
    limits = Limits(wall_s=2.0) if status == "timeout" else None
    verdict = grade(exercise, path, limits=limits, worker=_warm_worker(warm_workers, exercise))
    assert verdict.status.value == status, verdict.message or verdict.first_failure
    if status == "failed":
        got = verdict.diagnosis.slug if verdict.diagnosis else None
        assert got == pitfall, verdict.first_failure


def test_clipping_reference_equals_torch_on_200_seeded_random_cases() -> None:
    """micrograd's whole test, at scale: the reference and torch.nn.utils.clip_grad_norm_ agree on
    every case, with the random case widened to 23 seeds at each of its 9 sizes (207 inputs)."""
    from judge.grade import compute_reference, judge_subject

    exercise = Catalog().get("clipping")
    ref = compute_reference(exercise, seeds=23, with_oracle=True)
    randoms = [i for i in ref.instances if i.kind == "random"]
    assert len(randoms) >= 200
    verdict = judge_subject(exercise, ref, ref.subjects["oracle"])
    assert verdict.status is Status.PASSED, verdict.first_failure
