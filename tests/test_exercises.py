"""Every exercise is adequate, and every golden submission gets its expected verdict.

Golden submissions live in ``tests/submissions/<slug>/<name>.py``; the first line says what the
judge must answer, e.g. ``# expect: passed`` or ``# expect: failed pitfall=per-tensor`` or
``# expect: forbidden``, ``error``, ``timeout``, ``crashed``. They are graded as ``grind watch``
and ``grind grade`` grade: forks of a warm worker, each submission in a fresh, isolated child
(conftest.exercise_worker: one per test process, shared with the corpus and the stubs; a cold
start per file would import torch ~160 times to prove the same verdicts; the cold path is
exercised file by file by the adversarial suite's cold mode and the CLI tests).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from judge.adequacy import AdequacyReport, check_adequacy
from judge.catalog import Catalog
from judge.grade import grade
from judge.models import Status
from judge.worker.sandbox import Limits

from .conftest import SUBMISSIONS, exercise_worker

SLUGS = Catalog().slugs()


@functools.lru_cache(maxsize=None)
def adequacy(slug: str) -> AdequacyReport:
    return check_adequacy(Catalog().get(slug), worker=exercise_worker(slug))


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


@pytest.mark.parametrize("path", GOLDEN, ids=[f"{p.parent.name}/{p.stem}" for p in GOLDEN])
def test_golden_submission(path: Path) -> None:
    """Each golden submission gets exactly the verdict (and pitfall) written on its first line."""
    status, pitfall = _expectation(path)
    exercise = Catalog().get(path.parent.name)
    # A short wall clock keeps the infinite-loop submissions from costing the suite seconds.
    limits = Limits(wall_s=2.0) if status == "timeout" else None
    verdict = grade(exercise, path, limits=limits, worker=exercise_worker(exercise.slug))
    assert verdict.status.value == status, verdict.message or verdict.first_failure
    if status == "failed":
        got = verdict.diagnosis.slug if verdict.diagnosis else None
        assert got == pitfall, verdict.first_failure


def test_clipping_reference_equals_torch_on_200_seeded_random_cases() -> None:
    """micrograd's whole test, at scale: the reference and torch.nn.utils.clip_grad_norm_ agree on
    every case, with the random case widened to 23 seeds at each of its 9 sizes (207 inputs)."""
    from judge.judging import judge_subject
    from judge.trusted import compute_reference

    exercise = Catalog().get("clipping")
    ref = compute_reference(exercise, seeds=23, with_oracle=True, worker=exercise_worker("clipping"))
    randoms = [i for i in ref.instances if i.kind == "random"]
    assert len(randoms) >= 200
    verdict = judge_subject(exercise, ref, ref.subjects["oracle"])
    assert verdict.status is Status.PASSED, verdict.first_failure


def test_lr_schedule_reads_each_lr_from_the_scheduler_without_stepping_the_optimizer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """lr-schedule's cases read the lr LambdaLR writes into the optimizer's param group; an
    SGD.step() per scheduler step changed no observation and was most of the exercise's grading
    time. No step, no warning about the order of the two, and the lr of step i is still
    max_lr * multiplier(i)."""
    import sys
    import warnings

    import torch

    from judge.kit import kit_dir, kit_modules
    from judge.worker.child import sources as runner

    exercise = Catalog().get("lr-schedule")
    finder = runner._Kit(kit_modules(kit_dir(exercise)))
    sys.meta_path.insert(0, finder)
    steps = []
    monkeypatch.setattr(torch.optim.SGD, "step", lambda self, closure=None: steps.append(1))
    try:
        checks = runner.load_source(exercise.checks_path.read_text(), str(exercise.checks_path), "lr_checks")
        reference = runner.load_source(exercise.reference_path.read_text(), str(exercise.reference_path), "lr_ref")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for case in checks.CASES:
                inputs = case["inputs"](size=8, seed=1) if case["kind"] == "random" else case["inputs"]()
                observed = case["call"](reference, **inputs)
                if inputs["num_steps"]:
                    lrs, multipliers = observed["lr per step"], observed["multiplier per step"]
                    assert lrs == pytest.approx([inputs["max_lr"] * m for m in multipliers], rel=1e-12)
    finally:
        sys.meta_path.remove(finder)
        for name in [m for m in sys.modules if m.split(".")[0] in ("grind_kit", "lr_checks", "lr_ref")]:
            del sys.modules[name]
    assert steps == []


def test_exact_resume_trains_each_uninterrupted_run_once_for_the_cases_that_share_it() -> None:
    """exact-resume's ten cases interrupt six distinct training runs (three cases interrupt the
    same one at different steps, and the later cases reuse runs too): the length of each
    uninterrupted run is computed once per run, not once per case, since where a case interrupts
    is no part of the run itself."""
    import sys

    from judge.kit import kit_dir, kit_modules
    from judge.worker.child import sources as runner

    exercise = Catalog().get("exact-resume")
    finder = runner._Kit(kit_modules(kit_dir(exercise)))
    sys.meta_path.insert(0, finder)
    try:
        checks = runner.load_source(exercise.checks_path.read_text(), str(exercise.checks_path), "resume_checks")
        built = []
        build = checks.build
        checks.build = lambda cfg: built.append(cfg["seed"]) or build(cfg)
        lengths = [checks.uninterrupted_length(case["inputs"]()) for case in checks.CASES]
    finally:
        sys.meta_path.remove(finder)
        for name in [m for m in sys.modules if m.split(".")[0] in ("grind_kit", "resume_checks")]:
            del sys.modules[name]
    assert len(checks.CASES) == 10 and len(built) == 6
    assert lengths[:3] == [lengths[0]] * 3 and min(lengths) >= checks.BASE["updates"]


@pytest.mark.parametrize("slug", ["distributed-sampler"])
def test_sampler_reference_equals_torch_on_every_small_configuration(slug: str) -> None:
    """The exercise's cases sample a few configurations; in-process, the reference can be held to
    torch's DistributedSampler on all the small ones at once: every rank of lengths 0 to 9 on 2 to
    4 ranks, with and without shuffle and drop_last, two seeds and two epochs (1,440 calls)."""
    import importlib.util

    from torch.utils.data import DistributedSampler

    exercise = Catalog().get(slug)
    spec = importlib.util.spec_from_file_location("sampler_reference", exercise.reference_path)
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    compared = 0
    for length in range(10):
        for world in (2, 3, 4):
            for rank in range(world):
                for shuffle in (False, True):
                    for drop_last in (False, True):
                        for seed, epoch in ((0, 0), (0, 3), (5, 0), (5, 3)):
                            sampler = DistributedSampler(range(length), num_replicas=world, rank=rank,
                                                         shuffle=shuffle, seed=seed, drop_last=drop_last)
                            sampler.set_epoch(epoch)
                            got = reference.rank_indices(length, world, rank, shuffle=shuffle, seed=seed,
                                                         epoch=epoch, drop_last=drop_last)
                            assert list(got) == list(sampler), (length, world, rank, shuffle, drop_last, seed, epoch)
                            compared += 1
    assert compared == 1440


# Text that gives an exercise's recipe away (how to compute it, not what a caller observes). It
# belongs in the hints, revealed one at a time; the statement and the interview's blanked file
# show only the contract (issue 36, point 3).
RECIPE_MARKERS = {
    "ddp-token-loss": ["R / N", "S_r * R", "all_reduce", "collective", "get_world_size"],
    "adam": ["outside the square root", "sqrt(v_hat)", "1 - beta", "1 - lr * weight_decay", "weight_decay * p",
             "m_hat", "bias-correct"],
    "lr-schedule": ["cos(pi", "step / warmup_steps", "(1 - min_ratio)", "progress =", "clamp"],
}


def one_line(text: str) -> str:
    """Whitespace collapsed, so a marker matches however the text is wrapped."""
    return " ".join(text.split())


@pytest.mark.parametrize("slug", sorted(RECIPE_MARKERS))
def test_statement_and_interview_file_state_the_contract_not_the_recipe(slug: str) -> None:
    """`grind show` and the blanked interview file are all a learner sees while sitting an
    interview: neither may spell the formula, where eps goes, or which collective does the work.
    The hints must still hold each of those facts, so the recipe moved rather than vanished."""
    from judge.interview import blank

    exercise = Catalog().get(slug)
    shown = one_line(exercise.statement_path.read_text(encoding="utf-8")
                     + blank(exercise.stub_path.read_text(encoding="utf-8"))).lower()
    assert [m for m in RECIPE_MARKERS[slug] if m.lower() in shown] == []
    assert len(exercise.hints) >= 3


@pytest.mark.parametrize("slug", SLUGS)
def test_no_statement_repeats_a_hint(slug: str) -> None:
    """A hint the statement already prints is not revealed one at a time: every hint's text is
    absent from the statement (whitespace and case ignored), and there are at least three."""
    exercise = Catalog().get(slug)
    statement = one_line(exercise.statement_path.read_text(encoding="utf-8")).lower()
    assert len(exercise.hints) >= 3
    assert [h for h in exercise.hints if one_line(h).lower() in statement] == []
