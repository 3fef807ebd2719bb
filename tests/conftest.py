"""Shared fixtures. Every test gets its own cache folder unless it asks for the shared one,
so no test can pass because another one left a cache entry behind."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterator

import pytest

# No test starts the per-user warm daemon unless it asks to (tests/test_daemon.py does, in a
# runtime folder of its own): every other test grades cold, as it always did, and no daemon
# outlives the suite or answers another test's `grind run`.
os.environ["GRIND_NO_DAEMON"] = "1"

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "tests" / "submissions"
ADVERSARIAL = ROOT / "tests" / "adversarial"


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    # One cache per test session, shared by its xdist workers: reference observations are computed
    # once per exercise, like a learner's second run, but never leak in from a real user cache.
    # Sharing is safe because grind publishes an entry by an atomic rename (a second writer's copy
    # is dropped, see judge/cache.py); the tests that edit an exercise or break an entry use the
    # private cache of the ``course`` fixture (or a copy, as the adversarial suite does).
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the controller's folder for this run: every worker's basetemp is in it
    shared = base / "grind-cache"
    shared.mkdir(exist_ok=True)
    os.environ["GRIND_CACHE_DIR"] = str(shared)
    os.environ.pop("GRIND_CONTENT", None)


# Tests that share one costly fixture (a module-scoped one, or a warm worker per exercise) run on
# one xdist worker, so it is built once rather than once per worker that draws one of its tests.
# xdist's own xdist_group mark cannot do this here (with pytest >= 9 it no longer reaches the
# node ids the scheduler sees), so the scheduler groups node ids itself: first match wins, and a
# test matching nothing is a unit of its own, as with plain ``-n``.
XDIST_UNITS = [
    # Everything graded per exercise is one unit: its corpus (``graded(slug)``, one warm worker),
    # its golden submissions (one warm worker) and its adequacy report. The unit's tests then share
    # the reference and the pitfall pairs a diagnosis computes, instead of two xdist workers
    # computing the same cache entries side by side; with one unit per exercise the exercises
    # still spread over the workers.
    (re.compile(r"tests/test_corpus\.py::test_corpus_file_gets_its_status\[([\w-]+)/"), "exercise-{0}"),
    (re.compile(r"tests/test_corpus\.py::test_each_exercise_names_its_corpus_at_the_target_rate\[([\w-]+)\]"),
     "exercise-{0}"),
    (re.compile(r"tests/test_exercises\.py::test_golden_submission\[([\w-]+)/"), "exercise-{0}"),
    (re.compile(r"tests/test_exercises\.py::test_\w+\[([\w-]+)\]$"), "exercise-{0}"),
    (re.compile(r"tests/test_landlock\.py::"), "landlock"),  # ``confined``, ``unprivileged``: torch children
    (re.compile(r"tests/test_report\.py::"), "report"),  # two graded verdicts the module renders
    (re.compile(r"tests/test_cluster\.py::"), "cluster"),  # one LocalCluster (two worker processes)
]


_HOSTILE = re.compile(r"tests/test_adversarial\.py::test_hostile_submission_gets_its_verdict_and_leaves_no_trace"
                      r"\[([\w-]+)-(cold|warm)\]$")


def xdist_unit(nodeid: str) -> str:
    hostile = _HOSTILE.match(nodeid)
    if hostile:  # the attacks graded by one harness (tests/test_adversarial.py, BATCHES)
        from tests.test_adversarial import batch_of

        stem, mode = hostile.groups()
        return f"adversarial-{mode}-{batch_of(stem, mode)}"
    for pattern, unit in XDIST_UNITS:
        match = pattern.match(nodeid)
        if match:
            return unit.format(*match.groups())
    return nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``-n N`` (xdist's "load" distribution) with the units above; the largest units are handed
    out first. Any explicit ``--dist`` other than load keeps xdist's own scheduler."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_unit(nodeid)

    return SharedFixtureScheduling(config, log)


_WARM_WORKERS: dict[tuple[str, ...], Any] = {}
WARM_WORKERS_KEPT = 2  # a test with a course of its own hides other folders: its worker is another


def warm_worker(exercise: Any = None) -> Any:
    """One warm worker per test process for every test that grades learner code warm (as
    ``grind watch`` and ``grind grade`` do) and is not about the cold path: every exercise's
    corpus, golden submissions and adequacy report, the repro and report tests. One server
    start (one torch import) per test process instead of one per exercise or test; a server
    killed by a submission is restarted by the next job, as in a class. It hides what grading
    always hides (the solutions, the reference cache) and, for every exercise at once, the
    corpus and golden folders, whose files reach the child as text."""
    from judge.catalog import Catalog
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    hidden = hidden_from_learners(exercise or Catalog().get("clipping"), ROOT / "tests" / "corpus", SUBMISSIONS)
    key = tuple(str(path) for path in hidden)
    if key not in _WARM_WORKERS:
        while len(_WARM_WORKERS) >= WARM_WORKERS_KEPT:
            _WARM_WORKERS.pop(next(iter(_WARM_WORKERS))).close()
        _WARM_WORKERS[key] = WarmWorker(hidden)
    return _WARM_WORKERS[key]


def exercise_worker(slug: str) -> Any:
    """The warm worker that grades ``slug``'s corpus, golden submissions and adequacy report."""
    from judge.catalog import Catalog

    return warm_worker(Catalog().get(slug))


@pytest.fixture(scope="session", autouse=True)
def _close_warm_workers() -> Iterator[None]:
    yield
    for worker in _WARM_WORKERS.values():
        worker.close()
    _WARM_WORKERS.clear()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--skip-level-independent", action="store_true",
                     help="skip the adversarial attacks marked level_independent, whose verdict no isolation "
                          "level can change (CI's laptop mode: they run in its root mode)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A skip, not a deselection: under xdist a deselection is not counted anywhere in the output,
    # while every skip is listed with its reason in the summary (-ra).
    if not config.getoption("--skip-level-independent"):
        return
    skip = pytest.mark.skip(reason="level_independent: no isolation level can change this verdict; proven "
                                   "once, in the run as root with bubblewrap (CI mode 2)")
    for item in items:
        if item.get_closest_marker("level_independent") is not None:
            item.add_marker(skip)


@pytest.fixture()
def course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private course folder holding a copy of clipping and of the author kit (which its checks
    import) that a test may edit or break, with its own cache and state, as an instructor's
    course would be."""
    import shutil

    root = tmp_path / "course"
    for part in ("exercises", "solutions"):
        shutil.copytree(ROOT / part / "clipping", root / part / "clipping")
    shutil.copytree(ROOT / "solutions" / "_kit", root / "solutions" / "_kit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("GRIND_CONTENT", str(root))
    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    return root


@pytest.fixture()
def kit() -> Iterator[Any]:
    """grind_kit in this process, served from the job's text exactly as the child serves it
    (tests/test_kit.py, tests/test_distributed.py); unloaded again afterwards."""
    import sys

    from judge.kit import PACKAGE, kit_modules
    from judge.worker.child.sources import _Kit

    finder = _Kit(kit_modules(ROOT / "solutions" / "_kit"))
    sys.meta_path.insert(0, finder)
    try:
        import grind_kit

        yield grind_kit
    finally:
        sys.meta_path.remove(finder)
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def graded_cold_and_warm(exercise: Any, path: Path) -> tuple[Any, Any]:
    """``path`` graded in a fresh child (as ``grind run --no-daemon``) and in a fork of a warm
    worker of its own (as watch and ``grind grade``): the two places a sandbox guarantee must hold."""
    from judge.grade import grade, hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    cold = grade(exercise, path)
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        return cold, grade(exercise, path, worker=worker)
