"""Grading a class on a Dask cluster (issue 13, item 4): ``grind grade --executor dask``.

One ``distributed.LocalCluster`` (2 worker processes, one thread each) serves the module: the
same rows as the local executor, in the same resumable store; a worker killed mid-run loses
nothing and grades nobody twice; a worker with other versions is refused before anything runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from typer.testing import CliRunner

distributed = pytest.importorskip(
    "distributed", reason="grind grade --executor dask needs the distributed package (pip install 'grind[dask]'; "
    "the test extra installs it, so CI runs these tests)")

import judge.version  # noqa: E402
from judge import cluster  # noqa: E402
from judge.batch import grade_class  # noqa: E402
from judge.catalog import Catalog  # noqa: E402
from judge.cli import app  # noqa: E402
from judge.errors import EnvironmentProblem, JudgeError  # noqa: E402
from judge.status import ExitStatus  # noqa: E402
from judge.worker.sandbox import Limits  # noqa: E402

from .conftest import ADVERSARIAL, SUBMISSIONS  # noqa: E402

runner = CliRunner()
CORRECT = SUBMISSIONS / "clipping" / "correct_loop.py"


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A real cluster of two worker processes (each behind a nanny, which restarts a killed one)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as local:
        yield local.scheduler_address


def _class(root: Path, slow: bool = False) -> None:
    """A pass, a named pitfall, a crash and a folder with nothing gradable; with ``slow``, a
    correct submission that first sleeps (sorted first, so a worker takes it first)."""
    root.mkdir()
    if slow:
        (root / "a_slow.py").write_text("import time\ntime.sleep(4)\n" + CORRECT.read_text())
    shutil.copyfile(CORRECT, root / "ann.py")
    shutil.copyfile(SUBMISSIONS / "clipping" / "pitfall_per_tensor.py", root / "bob.py")
    shutil.copyfile(ADVERSARIAL / "os_exit_at_import.py", root / "cat.py")
    (root / "dan").mkdir()


def _stored(out: Path) -> dict[str, dict[str, Any]]:
    """The resumable store, without the one field that differs between two runs: the time taken."""
    rows = {}
    for path in sorted((out / "graded").glob("*.json")):
        row = json.loads(path.read_text())
        row["verdict"].pop("duration_s")
        rows[row["student"]] = row
    return rows


def test_a_class_graded_on_the_cluster_gives_the_local_rows(scheduler: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the CLI: the stored rows equal the local executor's, field for field; a re-run
    (local) keeps every one of them, so both executors share one resumable store."""
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "class"
    _class(root)
    exercise = Catalog().get("clipping")
    limits = Limits(wall_s=30.0, memory_mb=exercise.memory_mb)  # generous: a loaded CI machine must not time out
    grade_class(exercise, root, tmp_path / "local", jobs=1, limits=limits)
    out = tmp_path / "dask"
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--time-limit", "30", "--executor", "dask",
                                 "--scheduler", scheduler, "--allow-weak-isolation", "--out", str(out)])
    assert result.exit_code == 0, result.output
    local, remote = _stored(tmp_path / "local"), _stored(out)
    assert sorted(remote) == ["ann", "bob", "cat", "dan"]
    assert [remote[n]["verdict"]["status"] for n in sorted(remote)] == ["passed", "failed", "crashed", "error"]
    assert remote["bob"]["verdict"]["pitfall"]["slug"] == "per-tensor"
    assert remote == local
    kept: list[bool] = []
    grade_class(exercise, root, out, limits=limits, on_done=lambda name, row, reused: kept.append(reused))
    assert kept == [True] * 4


def test_a_worker_killed_mid_run_loses_nothing_and_grades_nobody_twice(scheduler: str, tmp_path: Path) -> None:
    """SIGKILL the worker grading the slow submission as soon as the first result lands: Dask
    reruns that task on a live worker; every student lands once, in the log and in the store, and
    a re-run keeps them all."""
    root = tmp_path / "class"
    _class(root, slow=True)
    out = tmp_path / "out"
    exercise = Catalog().get("clipping")
    limits = Limits(wall_s=30.0, memory_mb=exercise.memory_mb)  # the slow one sleeps 4 s of them
    landed: list[str] = []
    killed: list[str] = []

    with distributed.Client(scheduler, set_as_default=False) as spy:
        def kill_the_slow_ones_worker(name: str, row: dict[str, Any], reused: bool) -> None:
            landed.append(name)
            if name == "dan":
                return  # not gradable: stored before anything is sent to the cluster
            deadline = time.monotonic() + 30
            while not killed and time.monotonic() < deadline:
                for address, keys in spy.processing().items():
                    if any(str(key).endswith("-0") for key in keys):  # the slow one: first in the list
                        pid = spy.run(os.getpid, workers=[address])[address]
                        os.kill(pid, signal.SIGKILL)
                        killed.append(address)
                        break
                else:
                    time.sleep(0.1)

        rows = grade_class(exercise, root, out, limits=limits, on_done=kill_the_slow_ones_worker,
                           executor=cluster.DaskExecutor(scheduler, allow_weak_isolation=True))
    assert killed, "the slow submission was never seen running"
    assert sorted(landed) == ["a_slow", "ann", "bob", "cat", "dan"]  # each exactly once
    assert [r["verdict"]["status"] for r in rows] == ["passed", "passed", "failed", "crashed", "error"]
    assert sorted(p.name for p in (out / "graded").iterdir()) == [f"{n}.json" for n in sorted(landed)]
    log = (out / "grade.log").read_text().splitlines()
    assert sorted(line.split(" ")[3].rstrip(":") for line in log if " graded " in line) == sorted(landed)
    kept: list[bool] = []
    grade_class(exercise, root, out, limits=limits, on_done=lambda name, row, reused: kept.append(reused))
    assert kept == [True] * 5


def test_a_cluster_that_loses_its_only_worker_says_so_instead_of_hanging(tmp_path: Path) -> None:
    """Kill the only worker, and its nanny (so nobody restarts it), while it grades the slow
    submission: Dask keeps the task queued for a worker that never comes, and the run used to wait
    for ever without a word. Now it ends after --worker-wait seconds with "no workers", keeping
    what was graded, and the rest is graded by the same command once workers are back."""
    import threading

    root = tmp_path / "class"
    _class(root, slow=True)
    out = tmp_path / "out"
    exercise = Catalog().get("clipping")
    limits = Limits(wall_s=30.0, memory_mb=exercise.memory_mb)
    outcome: list[BaseException | None] = []
    # The only worker is a process of its own with no nanny (LocalCluster's nannies live in this
    # process, and would start a new worker): killed, it is gone for good.
    with distributed.LocalCluster(n_workers=0, dashboard_address=None, silence_logs=50) as local, \
            distributed.Client(local.scheduler_address, set_as_default=False) as spy:
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", local.scheduler_address,
                                   "--no-nanny", "--nthreads", "1", "--no-dashboard"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # joined before grading starts: --worker-wait (5 s here) also bounds the wait for the first
        # worker, which a busy machine can take longer than that to start
        try:
            spy.wait_for_workers(1, timeout=120)
        except BaseException:
            worker.kill()
            raise

        def run() -> None:
            try:
                grade_class(exercise, root, out, limits=limits, executor=cluster.DaskExecutor(
                    local.scheduler_address, allow_weak_isolation=True, worker_wait=5))
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
                outcome.append(exc)

        grading = threading.Thread(target=run, daemon=True)
        grading.start()
        deadline = time.monotonic() + 120
        killed = False
        try:
            while not killed and time.monotonic() < deadline:
                for keys in spy.processing().values():
                    if any(str(key).endswith("-0") for key in keys):
                        worker.kill()
                        killed = True
                        break
                else:
                    time.sleep(0.1)
        finally:
            worker.kill()
            worker.wait(timeout=30)
        assert killed, "the slow submission was never seen running"
        grading.join(timeout=180)
        assert not grading.is_alive(), "grind grade hung on a cluster with no workers"
    assert isinstance(outcome[0], EnvironmentProblem), outcome
    assert "has no workers: none for 5 s" in str(outcome[0]) and "run the same command again" in str(outcome[0])
    assert "a_slow.json" not in {p.name for p in (out / "graded").iterdir()}  # not stored: not the student's doing
    assert (out / "graded" / "dan.json").is_file()


def test_a_worker_with_other_versions_is_refused_before_anything_runs(
        scheduler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One grind line naming both versions, the environment exit code, nothing graded or stored."""
    real = judge.version.__version__
    monkeypatch.setattr(judge.version, "__version__", "0.0.0+elsewhere")  # this process only: the workers keep theirs
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "class"
    _class(root)
    out = tmp_path / "out"
    result = runner.invoke(app, ["grade", str(root), "-e", "clipping", "--executor", "dask",
                                 "--scheduler", scheduler, "--out", str(out)])
    assert result.exit_code == ExitStatus.ENVIRONMENT, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("grind:")]
    assert len(errors) == 1 and errors[0].startswith("grind: refusing to grade on Dask worker tcp://"), result.output
    assert f"it has grind {real} and torch" in errors[0] and "this machine has grind 0.0.0+elsewhere" in errors[0]
    assert [p.name for p in (out / "graded").glob("*.json")] == ["dan.json"]  # only the row nothing ran for


def test_a_worker_that_joins_later_refuses_a_client_with_other_versions() -> None:
    """Each task checks again (a worker may join after the up-front check): it answers with the
    refusal, as JSON, before grading anything; the client raises it as one line."""
    plugin = cluster.GradingPlugin(Catalog().get("clipping"), "k" * 32, None, False, ())
    plugin.setup(type("Worker", (), {"address": "tcp://w:1", "local_directory": ""})())
    other = dict(cluster.versions(), torch="1.0.0")
    answer = plugin.grade("ann.py", "/nowhere/ann.py", b"x = 1\n", None, other)
    refused = cluster._verdict(answer, "clipping")
    assert isinstance(refused, str) and refused.startswith("refusing to grade on Dask worker tcp://w:1: ")
    assert f"torch {cluster.cache.torch_version()}, this machine has grind {judge.__version__} and torch 1.0.0" \
        in refused
    assert plugin._exercise is None  # refused before the exercise was even written out


def test_a_worker_answer_that_is_not_a_verdict_is_not_stored() -> None:
    """The client parses each answer as plain JSON and checks its shape before storing it."""
    good = json.dumps({"verdict": {"exercise": "clipping", "status": "passed"}})
    assert cluster._verdict(good, "clipping") == {"exercise": "clipping", "status": "passed"}
    for bad in ({"verdict": {"exercise": "adam", "status": "passed"}}, {"verdict": {"exercise": "clipping"}},
                {"verdict": []}, []):
        with pytest.raises(ValueError):
            cluster._verdict(json.dumps(bad), "clipping")


@pytest.mark.parametrize("args, status, message", [
    (["--executor", "dask"], ExitStatus.USAGE, "grind: --executor dask needs --scheduler ADDRESS"),
    (["--scheduler", "tcp://h:8786"], ExitStatus.USAGE, "grind: --scheduler is for --executor dask"),
    (["--worker-wait", "10"], ExitStatus.USAGE, "grind: --worker-wait is for --executor dask"),
    (["--executor", "spark"], ExitStatus.USAGE, "grind: --executor 'spark': choose local or dask"),
    (["--executor", "dask", "--scheduler", "tcp://127.0.0.1:9", "--jobs", "4"], ExitStatus.USAGE,
     "grind: --jobs counts this machine's parallel gradings; with --executor dask"),
    (["--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"], ExitStatus.ENVIRONMENT,
     "grind: cannot reach the Dask scheduler at tcp://127.0.0.1:9: "),
])
def test_grade_executor_options_fail_in_one_line(args: list[str], status: ExitStatus, message: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1.0)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "class").mkdir()
    shutil.copyfile(CORRECT, tmp_path / "class" / "ann.py")
    result = runner.invoke(app, ["grade", str(tmp_path / "class"), "-e", "clipping", "--out", str(tmp_path / "o"),
                                 *args])
    assert result.exit_code == status, result.output
    assert result.output.startswith(message) and result.output.count("\n") == 1, result.output


def test_without_distributed_the_dask_executor_says_what_to_install(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "judge.cluster")
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    (tmp_path / "class").mkdir()
    result = runner.invoke(app, ["grade", str(tmp_path / "class"), "-e", "clipping", "--executor", "dask",
                                 "--scheduler", "tcp://h:8786"])
    assert result.exit_code == ExitStatus.ENVIRONMENT, result.output
    assert "pip install -e '.[dask]'" in result.output and "Traceback" not in result.output


class _Future:
    """A finished Dask future: its answer, or the error Dask would raise (a worker lost for good)."""

    def __init__(self, answer: str | Exception) -> None:
        self.answer, self.cancelled = answer, False

    def result(self) -> str:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def release(self) -> None:
        pass

    def cancel(self) -> None:
        self.cancelled = True


class _Client:
    """Answers each submission from ``answers`` (by file name; a pass otherwise), in order."""

    loop = None

    def __init__(self, answers: dict[str, str | Exception]) -> None:
        self.answers, self.submitted, self.futures = answers, [], []

    def submit(self, task: Any, plugin: str, path: str, *args: Any, **kwargs: Any) -> _Future:
        name = Path(path).name
        self.submitted.append(name)
        passed = json.dumps({"verdict": {"exercise": "clipping", "status": "passed", "submission": path}})
        self.futures.append(_Future(self.answers.get(name, passed)))
        return self.futures[-1]


class _Completed:
    """as_completed over futures that are all done already: one lands per batch, in order."""

    def __init__(self, futures: list[_Future], loop: Any = None) -> None:
        self.futures = list(futures)

    def is_empty(self) -> bool:
        return not self.futures

    def has_ready(self) -> bool:
        return bool(self.futures)

    def next_batch(self, block: bool = True) -> list[_Future]:
        return [self.futures.pop(0)]


def _fake_executor(client: _Client) -> Any:
    def run(exercise: Any, paths: list[Path], *, limits: Any, on_done: Any, hidden: Any) -> None:
        cluster.DaskExecutor._run(client, _Completed, "p", exercise, paths, limits, on_done, cluster.versions())
    return run


def test_a_submission_lost_for_good_is_not_stored_and_a_rerun_grades_only_it(tmp_path: Path) -> None:
    """Dask gives up on a task (its workers kept dying): that student is not stored (not their
    fault), the others are, the run ends in one error naming how many; the same run again sends
    only that submission."""
    root = tmp_path / "class"
    _class(root)
    out = tmp_path / "out"
    exercise = Catalog().get("clipping")
    lost = _Client({"bob.py": OSError("worker tcp://w:1 died 3 times")})
    with pytest.raises(JudgeError, match=r"^1 of 3 submissions were not graded on the Dask cluster \(first: bob.py: "
                       r"OSError: worker tcp://w:1 died 3 times\); the others are stored"):
        grade_class(exercise, root, out, executor=_fake_executor(lost))
    assert sorted(p.name for p in (out / "graded").iterdir()) == ["ann.json", "cat.json", "dan.json"]
    again = _Client({})
    rows = grade_class(exercise, root, out, executor=_fake_executor(again))
    assert again.submitted == ["bob.py"] and [r["student"] for r in rows] == ["ann", "bob", "cat", "dan"]


def test_a_worker_refusing_mid_run_stops_the_run_and_cancels_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "class"
    _class(root)
    refused = "refusing to grade on Dask worker tcp://late:1: it has grind 9 and torch 9, this machine has ..."
    client = _Client({"bob.py": json.dumps({"refused": refused})})
    with pytest.raises(EnvironmentProblem, match="^refusing to grade on Dask worker tcp://late:1: "):
        grade_class(Catalog().get("clipping"), root, tmp_path / "out", executor=_fake_executor(client))
    assert [f.cancelled for f in client.futures] == [False, False, True]  # ann landed; cat never will
    assert sorted(p.name for p in (tmp_path / "out" / "graded").iterdir()) == ["ann.json", "dan.json"]


def test_a_worker_reuses_the_clients_reference_and_never_trusts_a_tampered_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker writes the exercise out, parses the shipped cache entry as strictly as one read
    from disk and stores it under its own key, which equals the client's: nothing is recomputed.
    An entry whose observations do not match its hash is dropped and the reference recomputed."""
    import judge.trusted

    exercise = Catalog().get("clipping")
    key = cluster.cache.exercise_key(exercise)
    judge.trusted.reference_for(exercise, key)  # the client's
    shipped = cluster.cache.entry_bytes(exercise.slug, key)
    assert shipped is not None

    def recompute(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("recomputed")

    monkeypatch.setattr(judge.trusted, "_run_trusted", recompute)
    worker = type("Worker", (), {"address": "tcp://w:1", "local_directory": ""})()
    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "worker-cache"))
    plugin = cluster.GradingPlugin(exercise, key, shipped, False, ())
    plugin.setup(worker)
    copy = plugin._prepared()
    assert plugin._root is not None and copy.exercise_dir == plugin._root / "exercises" / "clipping"
    assert cluster.cache.load(exercise.slug, key) is not None  # installed, not computed
    plugin.teardown(worker)
    assert not copy.exercise_dir.exists()

    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "other-worker-cache"))
    tampered = cluster.GradingPlugin(exercise, key, (shipped[0], shipped[1][:-8] + b"\0" * 8), False, ())
    tampered.setup(worker)
    with pytest.raises(RuntimeError, match="recomputed"):
        tampered._prepared()
    assert cluster.cache.load(exercise.slug, key) is None
    tampered.teardown(worker)


def test_an_executor_answering_twice_for_one_student_is_stored_once(tmp_path: Path) -> None:
    """Whatever an executor does (a task Dask ran twice), grade_class keeps the first answer."""
    root = tmp_path / "class"
    root.mkdir()
    shutil.copyfile(CORRECT, root / "ann.py")

    def twice(exercise: Any, paths: list[Path], *, limits: Any, on_done: Any, hidden: Any) -> None:
        for status in ("passed", "failed"):
            on_done(paths[0], {"exercise": "clipping", "status": status, "checks": []})

    landed: list[str] = []
    rows = grade_class(Catalog().get("clipping"), root, tmp_path / "out", executor=twice,
                       on_done=lambda name, row, reused: landed.append(row["verdict"]["status"]))
    assert landed == ["passed"] and rows[0]["verdict"]["status"] == "passed"
    assert json.loads((tmp_path / "out" / "graded" / "ann.json").read_text())["verdict"]["status"] == "passed"
    assert sum(" graded " in line for line in (tmp_path / "out" / "grade.log").read_text().splitlines()) == 1
