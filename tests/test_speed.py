"""Learner-speed feedback: advice for a correct but slow answer, never a change of verdict."""

from __future__ import annotations

from pathlib import Path

from judge.catalog import Catalog
from judge.grade import grade
from judge.models import Status
from judge.speed import probable_cause, speed_advice

from .conftest import SUBMISSIONS

ELEMENTWISE = '''
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if norm_type == float("inf"):
        total = max(abs(x) for g in grads for x in g.flatten().tolist())
    else:
        total = 0.0
        for g in grads:
            for x in g.flatten():
                total += abs(x.item()) ** norm_type
        total = total ** (1 / norm_type)
    coef = min(1.0, max_norm / (total + 1e-6))
    for g in grads:
        g.mul_(coef)
    return total
'''


def test_a_correct_elementwise_loop_passes_with_advice(tmp_path: Path) -> None:
    """A Python loop over elements is correct (passed) but gets 'N× slower' advice naming the loop."""
    path = tmp_path / "slow.py"
    path.write_text(ELEMENTWISE)
    verdict = grade(Catalog().get("clipping"), path, speed=True)
    assert verdict.status is Status.PASSED
    advice = [n for n in verdict.notices if n.startswith("Correct, but")]
    assert advice and "slower than the reference" in advice[0]
    assert "loop over individual elements" in advice[0]


def test_a_vectorised_answer_gets_no_advice() -> None:
    verdict = grade(Catalog().get("clipping"), SUBMISSIONS / "clipping" / "alt_foreach_vectorised.py", speed=True)
    assert verdict.status is Status.PASSED
    assert not [n for n in verdict.notices if n.startswith("Correct, but")]


def test_advice_threshold_and_causes() -> None:
    assert speed_advice({"reference_s": 0.01, "learner_s": 0.04, "budget_s": 1.0}, "") is None
    assert "6×" in (speed_advice({"reference_s": 0.01, "learner_s": 0.06, "budget_s": 1.0}, "") or "")
    assert "more than 100×" in (speed_advice({"reference_s": 0.01, "learner_s": None, "budget_s": 1.0}, "") or "")
    assert "lists" in probable_cause("def f(x):\n    return sum(x.tolist())\n")
    assert "vectorised" in probable_cause("def f(xs):\n    for x in xs:\n        x.mul_(2)\n")


def test_timing_takes_the_fastest_sample_so_a_loaded_machine_cannot_invent_a_slow_answer() -> None:
    """Two of the first three timed calls are slowed (as a preempted call on a busy machine is):
    the timing is still the call's own cost. A median of three would report the slowed time."""
    import time

    from judge.worker.child.job import time_call

    calls = []

    def call(subject: object, size: int) -> None:
        calls.append(size)
        if len(calls) in (2, 3):  # the first call is the warm-up; then two preempted samples
            time.sleep(0.05)

    timed = time_call({"inputs": lambda: {"size": 1}, "call": call}, None, None)
    assert timed is not None and timed < 0.02
    assert len(calls) >= 4  # a warm-up and at least three samples


def test_timing_stops_at_the_first_call_too_fast_to_earn_advice() -> None:
    """With ``enough`` (SLOWER x the reference's time, sent by the parent), one call under it
    decides that there is no advice: the timing ends there. Calls over it are timed as before."""
    import time

    from judge.worker.child.job import time_call

    calls = []

    def call(subject: object, size: int) -> None:
        calls.append(size)

    timed = time_call({"inputs": lambda: {"size": 1}, "call": call}, None, None, enough=10.0)
    assert timed is not None and timed < 10.0
    assert len(calls) == 1  # the warm-up was fast enough: nothing more to learn

    slow: list[int] = []

    def slow_call(subject: object, size: int) -> None:
        slow.append(size)
        time.sleep(0.002)

    timed = time_call({"inputs": lambda: {"size": 1}, "call": slow_call}, None, None, enough=0.0005)
    assert timed is not None and timed >= 0.002
    assert len(slow) >= 4  # never under the line: a warm-up and at least three samples, as without it


def test_a_slow_answer_gets_its_advice_once_the_reference_is_loaded(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A warm worker's second grade knows the reference's time before the learner runs, and
    sends the advice's threshold with the job: a slow answer is still timed in full and advised,
    a vectorised one still gets none."""
    import judge.pipeline
    from judge import cache
    from judge.trusted import loaded_reference

    from .conftest import warm_worker

    sent: list[dict] = []  # type: ignore[type-arg]

    def job_for(*args, **kwargs):  # type: ignore[no-untyped-def]
        job = real_job_for(*args, **kwargs)
        if job.get("time_speed"):
            sent.append(job)  # run_learner adds the threshold to it
        return job

    real_job_for = judge.pipeline.job_for
    monkeypatch.setattr(judge.pipeline, "job_for", job_for)
    exercise = Catalog().get("clipping")
    worker = warm_worker(exercise)
    slow = tmp_path / "slow.py"
    slow.write_text(ELEMENTWISE)
    for _ in range(2):  # the first grade loads the reference; the second sends the threshold
        verdict = grade(exercise, slow, speed=True, worker=worker)
        assert verdict.status is Status.PASSED
        assert [n for n in verdict.notices if n.startswith("Correct, but")], verdict.notices
    assert loaded_reference(exercise, cache.exercise_key(exercise)) is not None
    assert len(sent) == 2 and sent[1].get("speed_enough_s", 0) > 0  # the second grade sent the threshold
    fast = grade(exercise, SUBMISSIONS / "clipping" / "alt_foreach_vectorised.py", speed=True, worker=worker)
    assert fast.status is Status.PASSED
    assert not [n for n in fast.notices if n.startswith("Correct, but")], fast.notices


def test_a_speed_run_leaves_nothing_of_the_reference_for_the_learner(tmp_path: Path) -> None:
    """`grind run` times the reference for its speed advice. Nothing of it may reach the learner's
    process: the reference used to travel in the job, and linecache kept its text under
    "<reference>" for the learner's code to exec (a wrong answer then passed). The attack looks in
    linecache, sys.modules, live functions, the run folder and the process's own memory; all
    that fails, so its plainly wrong answer fails, cold and in a warm fork. A correct answer
    still gets its advice (the reference was timed)."""
    from .conftest import ROOT, warm_worker

    exercise = Catalog().get("clipping")
    attack = ROOT / "tests" / "hostile_speed" / "reference_from_a_speed_run.py"
    for worker in (None, warm_worker(exercise)):
        verdict = grade(exercise, attack, speed=True, worker=worker)
        assert verdict.status is Status.FAILED, (worker, verdict.status, verdict.message)
    slow = tmp_path / "slow.py"
    slow.write_text(ELEMENTWISE)
    verdict = grade(exercise, slow, speed=True, worker=warm_worker(exercise))
    assert verdict.status is Status.PASSED
    assert [n for n in verdict.notices if n.startswith("Correct, but")], verdict.notices


def test_a_warm_fork_finds_no_classmate_or_reference_in_its_memory(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A fork of the warm server is a copy of its memory, freed memory included: with sources in
    the jobs, a submission scanning /proc/self/mem found the classmate graded just before it on
    the same worker (and, with a cold cache, the reference computed in the same server) and
    passed with it. Sources now reach the child as files of its own run folder."""
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    from .conftest import ROOT

    exercise = Catalog().get("clipping")
    attack = ROOT / "tests" / "hostile_speed" / "classmate_from_memory.py"
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        assert grade(exercise, SUBMISSIONS / "clipping" / "correct_loop.py", worker=worker).passed
        verdict = grade(exercise, attack, worker=worker)
        assert verdict.status is Status.FAILED, verdict.message
    # An empty cache of its own: the reference is computed in this worker's server, just before the attack.
    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "cache"))
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        verdict = grade(exercise, attack, worker=worker)
        assert verdict.status is Status.FAILED, verdict.message


def test_a_speed_run_carries_nothing_of_the_reference_and_is_compared_with_its_cached_time(tmp_path: Path) -> None:
    """The reference is timed once, in the trusted job that computes its observations, and its
    time is kept with them in the cache: a learner's speed run carries neither the reference's
    text nor its file (it used to, to time it in a fork before the learner's code loaded), and
    a slow correct answer still gets its advice."""
    import json

    from judge.grade import hidden_from_learners
    from judge.trusted import reference_for
    from judge.worker.sandbox import run_job

    exercise = Catalog().get("clipping")
    assert reference_for(exercise).speed is not None and reference_for(exercise).speed.reference_s > 0
    jobs: list[str] = []

    class Capturing:
        def run_job(self, job, limits):  # type: ignore[no-untyped-def]
            jobs.append(json.dumps(job))
            return run_job(job, limits, hidden_from_learners(exercise))

    slow = tmp_path / "slow.py"
    slow.write_text(ELEMENTWISE)
    verdict = grade(exercise, slow, speed=True, worker=Capturing())
    assert verdict.status is Status.PASSED
    assert [n for n in verdict.notices if n.startswith("Correct, but")], verdict.notices
    # Lines of the reference's own (not shared with the learner's file, the checks or the kit):
    shared = ELEMENTWISE + exercise.checks_path.read_text() + "".join(p.read_text() for p in (
        exercise.solution_dir.parent / "_kit").glob("*.py"))
    own = [json.dumps(line)[1:-1] for line in exercise.reference_path.read_text().splitlines()
           if len(line.strip()) > 20 and line not in shared]
    assert len(jobs) == 1 and len(own) > 3
    assert not [line for line in own if line in jobs[0]], [line for line in own if line in jobs[0]]
