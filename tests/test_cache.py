"""The reference cache: keyed by the exercise's files, never stale, safe under concurrency."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from judge import cache
from judge.catalog import Catalog
from judge.trusted import reference_for

from .conftest import ROOT, SUBMISSIONS


def test_editing_the_reference_invalidates_the_cache(course: Path) -> None:
    """An instructor who edits a reference never sees stale observations."""
    exercise = Catalog().get("clipping")
    key_before = cache.exercise_key(exercise)
    first = reference_for(exercise)
    assert cache.load("clipping", key_before) is not None

    reference = course / "solutions" / "clipping" / "reference.py"
    # A deliberately different reference: it returns twice the norm.
    reference.write_text(reference.read_text().replace("    return total\n", "    return total * 2\n"))
    key_after = cache.exercise_key(exercise)
    assert key_after != key_before
    second = reference_for(exercise)
    before = first.subjects["reference"].obs["worked_example"]["total_norm"]
    after = second.subjects["reference"].obs["worked_example"]["total_norm"]
    assert float(before) == pytest.approx(13.0, rel=1e-6)
    assert float(after) == pytest.approx(26.0, rel=1e-6)


def test_a_corrupt_entry_is_recomputed(course: Path) -> None:
    """A truncated cache file (a crash mid-write elsewhere) is detected by its hash and rebuilt."""
    exercise = Catalog().get("clipping")
    reference_for(exercise)
    key = cache.exercise_key(exercise)
    entry = cache.cache_root() / f"clipping-{key}"
    obs = entry / cache.OBSERVATIONS
    obs.write_bytes(obs.read_bytes()[:100])
    assert cache.load("clipping", key) is None
    again = reference_for(exercise)
    assert "worked_example" in again.subjects["reference"].obs
    assert cache.load("clipping", key) is not None


def _grade_in_subprocess(args: tuple[str, str, str]) -> str:
    content, cache_dir, submission = args
    env = dict(os.environ, GRIND_CONTENT=content, GRIND_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-m", "judge", "run", "clipping", "--file", submission, "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    return json.loads(out.stdout)["status"]


def test_concurrent_runs_do_not_corrupt_the_cache(course: Path, tmp_path: Path) -> None:
    """Two grinds start at once on a cold cache: both get the right verdict, one valid entry
    remains. Two make the race (both compute the reference and write it); a third adds two more
    torch processes and no new interleaving to the suite's cost."""
    args = (str(course), str(tmp_path / "cache"), str(SUBMISSIONS / "clipping" / "correct_loop.py"))
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        statuses = pool.map(_grade_in_subprocess, [args] * 2)
    assert statuses == ["passed"] * 2
    exercise = Catalog().get("clipping")
    entries = [p for p in (tmp_path / "cache").iterdir() if p.name != cache.TIMINGS]  # timings: not an entry
    assert [p.name for p in entries] == [f"clipping-{cache.exercise_key(exercise)}"]
    assert cache.load("clipping", cache.exercise_key(exercise)) is not None


def test_cache_clear_empties_the_cache(course: Path) -> None:
    reference_for(Catalog().get("clipping"))
    assert cache.clear() == 1
    # every entry goes; how long the reference took here stays, for the next "about N s" notice
    assert [p.name for p in cache.cache_root().iterdir()] == [cache.TIMINGS]


def test_pairs_run_in_the_graders_warm_worker_and_are_cached(course: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A compound diagnosis graded with a warm worker computes its pitfall pairs as one more fork
    of that worker, not in a new process importing torch (the corpus and golden tests, watch and
    batch grading all grade warm); the pairs it computed are cached like cold ones."""
    from judge import trusted
    from judge.worker import sandbox
    from judge.grade import grade, hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    exercise = Catalog().get("clipping")
    reference_for(exercise)  # the reference itself is a cold trusted job, as always
    cold = []
    real_run_job = sandbox.run_job
    monkeypatch.setattr(sandbox, "run_job", lambda *a, **k: cold.append(a) or real_run_job(*a, **k))
    path = ROOT / "tests" / "corpus" / "clipping" / "per_tensor_summed_total.py"
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        verdict = grade(exercise, path, worker=worker)
    assert {d.slug for d in verdict.diagnoses} == {"per-tensor", "sum-of-norms"}, verdict.diagnoses
    assert cold == [], "a pair job started a process of its own"
    key = cache.exercise_key(exercise)
    assert any(cache.load(f"clipping.pair.{name}", key) is not None
               for name in ("per-tensor+sum-of-norms", "sum-of-norms+per-tensor"))


def test_a_missing_reference_is_computed_by_the_graders_warm_worker(course: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """With a warm worker and an empty cache (watch after an edited exercise, the corpus; not the daemon's client), the
    reference is one more fork of that worker, not a second process importing torch; and if the
    worker dies under it, the reference is computed in a process of its own after all."""
    from judge import trusted
    from judge.worker import sandbox
    from judge.grade import grade, hidden_from_learners
    from judge.worker.sandbox import RunOutcome, WarmWorker

    exercise = Catalog().get("clipping")
    key = cache.exercise_key(exercise)
    cold: list[object] = []
    real_run_job = sandbox.run_job
    monkeypatch.setattr(sandbox, "run_job", lambda *a, **k: cold.append(a) or real_run_job(*a, **k))
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        verdict = grade(exercise, SUBMISSIONS / "clipping" / "correct_loop.py", worker=worker)
        assert verdict.status.value == "passed", verdict.message
        assert cold == [] and cache.has("clipping", key)

        cache.clear()
        trusted._LOADED.clear()
        real_warm = worker.run_job
        dying = iter([RunOutcome(status="crashed", message="the warm worker died; it was restarted")])
        monkeypatch.setattr(worker, "run_job", lambda job, limits: next(dying, None) or real_warm(job, limits))
        verdict = grade(exercise, SUBMISSIONS / "clipping" / "correct_loop.py", worker=worker)
    assert verdict.status.value == "passed", verdict.message
    assert len(cold) == 1 and cache.has("clipping", key)


def test_a_reference_read_once_is_reused_until_its_entry_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """watch, grade and daemon-served runs grade one exercise again and again: the checked
    reference is kept in memory while the entry's files are unchanged, and read again (and
    checked again) as soon as either changes."""
    from judge import cache, trusted
    from judge.catalog import Catalog

    exercise = Catalog().get("clipping")
    first = trusted.reference_for(exercise)
    reads: list[str] = []
    real_load = cache.load
    monkeypatch.setattr(cache, "load", lambda slug, key: reads.append(slug) or real_load(slug, key))
    assert trusted.reference_for(exercise) is first and reads == []
    entry = cache.cache_root() / f"{exercise.slug}-{cache.exercise_key(exercise)}" / cache.OBSERVATIONS
    os.utime(entry, ns=(entry.stat().st_atime_ns, entry.stat().st_mtime_ns + 1))
    again = trusted.reference_for(exercise)
    assert reads == ["clipping"] and again is not first
    assert again.instance_names == first.instance_names


def test_validate_reuses_the_cached_reference_and_runs_the_oracle_alone(course: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """After a grade has cached the reference and the pitfalls, `grind validate` compares the
    oracle with that entry and runs only the oracle: not the reference and every pitfall again.
    An oracle that disagrees is still reported; on a cache miss, validate's one run (less the
    oracle) becomes the entry."""
    from judge import trusted as grading
    from judge.adequacy import check_adequacy

    exercise = Catalog().get("clipping")
    reference_for(exercise)
    real_run = grading._run_trusted

    def no_second_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("the reference and the pitfalls ran again")

    monkeypatch.setattr(grading, "_run_trusted", no_second_run)
    report = check_adequacy(exercise, with_stub=False)
    assert report.problems == [] and report.verdicts["oracle"].status.value == "passed"
    assert report.caught == report.pitfalls >= 5

    oracle = course / "solutions" / "clipping" / "oracle.py"
    oracle.write_text(oracle.read_text() + "\n\n_real = clip_grad_norm_\n\n\n"
                      "def clip_grad_norm_(parameters, max_norm, norm_type=2.0):\n"
                      "    return _real(parameters, max_norm, norm_type) * 2\n")
    monkeypatch.setattr(grading, "_run_trusted", real_run)  # the oracle's edit is a new cache key
    exercise = Catalog().get("clipping")
    assert cache.load("clipping", cache.exercise_key(exercise)) is None
    report = check_adequacy(exercise, with_stub=False)
    assert any("the oracle does not pass" in p for p in report.problems), report.problems
    # That miss ran everything in one child, and its run (less the oracle) is now the entry.
    entry = cache.load("clipping", cache.exercise_key(exercise))
    assert entry is not None and "oracle" not in entry[0].subjects and "reference" in entry[0].subjects


def test_every_worker_module_is_in_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only runner.py: child/ranks.py runs the distributed cases and guards.py sits in every learner
    run, so editing either must recompute the reference (validate trusts a cached one)."""
    import shutil

    from judge.worker import isolation

    worker = tmp_path / "worker"
    shutil.copytree(isolation.RUNNER.parent, worker, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "RUNNER", worker / "runner.py")
    kept = tmp_path / "kept.py"  # judge/kept.py rewrites stored observations: in the key too
    shutil.copy(cache.KEPT, kept)
    monkeypatch.setattr(cache, "KEPT", kept)
    exercise = Catalog().get("clipping")
    keys = []
    for edited in (None, "child/ranks.py", "guards.py", "protocol.py", "../kept.py"):
        if edited:
            (worker / edited).write_text((worker / edited).read_text() + "\n# edited\n")
        monkeypatch.setattr(cache, "_WORKER_DIGEST", [])
        keys.append(cache.exercise_key(exercise))
    assert len(set(keys)) == 5, keys


def test_a_process_keeps_only_the_last_few_references_it_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reference is 3-5 MB (every pitfall's observations): a daemon that served every
    exercise once held all of them for its life. The last KEPT_REFERENCES used are kept."""
    from judge import trusted

    monkeypatch.setattr(trusted, "_LOADED", {})
    kept = trusted.KEPT_REFERENCES
    for i in range(kept + 2):
        trusted._keep((f"slug{i}", "key", "root"), (i,), object())  # type: ignore[arg-type]
    assert [where[0] for where in trusted._LOADED] == [f"slug{i}" for i in range(2, kept + 2)]
    trusted._keep(("slug2", "key", "root"), (2,), object())  # used again: now the newest
    trusted._keep(("new", "key", "root"), (9,), object())
    assert [where[0] for where in trusted._LOADED][-2:] == ["slug2", "new"] and len(trusted._LOADED) == kept
