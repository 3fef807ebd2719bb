"""Grade a class on a Dask distributed cluster: ``grind grade --executor dask --scheduler ADDR``.

The client (the instructor's ``grind grade``) keeps everything that makes a run resumable: it
finds the students, hashes their files, and stores each verdict in the same ``OUT/graded`` store
as a local run (``judge.batch.grade_class``), once per student, as it lands. A Dask worker only
turns one submission's bytes into one verdict, with grind's own ``grade``: the learner's code
runs in grind's sandboxed child (a warm forkserver per worker thread, under the worker's own
isolation level), never in the Dask worker process, and the task answers with a JSON string, so
the client parses plain JSON and never unpickles anything derived from a learner's run.

The exercise and its reference observations travel in a worker plugin (``GradingPlugin``), sent
once to every worker, including one that joins (or is restarted) mid-run:

- the exercise's files (statement, checks, reference, pitfalls, the author kit), written to a
  private folder on the worker, so workers need grind and torch but not the course;
- the reference observations, **computed once by the client** (it hashes the exercise and has
  torch anyway) and shipped as the cache entry's two files, JSON and safetensors (no pickle), which
  the worker parses as strictly as a cache entry read from disk before storing them in its own
  cache. Every worker then compares against the very observations a local run would, and 100
  workers do not each spend a torch start and the reference's run on the same numbers. If the
  worker's cache key differs (another Python, an edited grind), the shipped entry does not
  match and the worker computes the reference once, through its cache, as ``grind run`` would.

A worker whose grind or torch version differs from the client's is refused, in one line naming
both versions: checked for every worker before anything is submitted, and again in each task
(a worker that joins later). So is one whose isolation level is too weak for grading, unless
``--allow-weak-isolation``. A worker lost mid-run (killed, out of memory) is Dask's to handle: it
reruns the task elsewhere; the client still records each student once. A cluster left with no
worker at all would wait for one for ever, saying nothing: after ``worker_wait`` seconds with
none (``--worker-wait``, 300 s by default, as for the first one to join) the run ends with one
line saying the cluster has no workers; what was graded is stored. A task that fails for
good is not stored (that is not the student's fault): the run ends with one line saying how many
were not graded, and running the same command again grades only those.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, cast

from distributed import WorkerPlugin

from judge import cache, version
from judge.errors import EnvironmentProblem, JudgeError
from judge.models import Exercise, Status, Verdict
from judge.worker.sandbox import Limits

CONNECT_TIMEOUT_S = 30.0
WORKER_WAIT_S = 300.0  # a batch system (dask-jobqueue on Slurm) may take minutes to start workers
POLL_S = 0.25  # how often a run waiting for results looks at whether any worker is left


def versions() -> dict[str, str]:
    """What must match between the client and every worker (read from metadata: no torch import)."""
    return {"grind": version.__version__, "torch": cache.torch_version()}  # read now: a test sets it


def worker_facts() -> dict[str, Any]:
    """Run on each worker (``Client.run``): its versions and isolation level."""
    from judge.worker.isolation import isolation

    iso = isolation()
    return dict(versions(), isolation=iso.level, weak=iso.weak)


def refusal(facts: dict[str, Any], here: dict[str, str], address: str, allow_weak: bool) -> str | None:
    """One line saying why ``address`` must not grade, or None."""
    theirs = {k: facts.get(k, "?") for k in here}
    if theirs != here:
        return (f"refusing to grade on Dask worker {address}: it has grind {theirs['grind']} and torch "
                f"{theirs['torch']}, this machine has grind {here['grind']} and torch {here['torch']}; "
                "install the same versions on every worker")
    if facts.get("weak") and not allow_weak:
        from judge.worker.isolation import how_to_strengthen

        level = facts.get("isolation", "?")
        return (f"refusing to grade on Dask worker {address}: its isolation level is {level}, where a "
                f"submission could read the reference and classmates' files. Fix: "
                f"{how_to_strengthen(level)} there; or pass --allow-weak-isolation")
    return None


def exercise_files(exercise: Exercise) -> dict[str, bytes]:
    """The exercise as a worker needs it, by path under a content root (the ones its cache key hashes)."""
    from judge.kit import FOLDER, kit_dir

    files: dict[str, bytes] = {}
    for prefix, folder in ((f"exercises/{exercise.slug}", exercise.exercise_dir),
                           (f"solutions/{exercise.slug}", exercise.solution_dir),
                           (f"solutions/{FOLDER}", kit_dir(exercise))):
        for path in (cache._folder_files(folder) if folder.is_dir() else []):
            files[f"{prefix}/{path.relative_to(folder).as_posix()}"] = path.read_bytes()
    return files


class GradingPlugin(WorkerPlugin):
    """One exercise, installed on every worker of the cluster for one ``grind grade`` run."""

    def __init__(self, exercise: Exercise, key: str, reference: tuple[bytes, bytes] | None,
                 allow_weak: bool, hidden: tuple[str, ...]) -> None:
        self.name = f"grind-{exercise.slug}-{key[:12]}-{uuid.uuid4().hex[:8]}"
        self.slug, self.key, self.reference = exercise.slug, key, reference
        self.files = exercise_files(exercise)
        self.client_versions = versions()
        self.allow_weak = allow_weak
        self.hidden = hidden  # the client's class and output folders: hidden too where a shared file system shows them

    def setup(self, worker: Any) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self._warm: list[Any] = []
        self._root: Path | None = None
        self._exercise: Exercise | None = None
        self._address = str(getattr(worker, "address", "?"))
        self._scratch = str(getattr(worker, "local_directory", "") or "")

    def teardown(self, worker: Any) -> None:
        with self._lock:
            for warm in self._warm:
                warm.close()
            self._warm.clear()
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None

    def _prepared(self) -> Exercise:
        """The exercise, written out once per worker, and its reference in the worker's cache."""
        with self._lock:
            if self._exercise is not None:
                return self._exercise
            from judge.catalog import Catalog
            from judge.trusted import reference_for, reference_problem

            root = Path(tempfile.mkdtemp(prefix="grind-dask-"))  # mode 0700: this user only
            for name, data in self.files.items():
                target = root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            self._root = root
            exercise = Catalog(root).get(self.slug)
            key = cache.exercise_key(exercise)
            if self.reference is not None and key == self.key and cache.load(self.slug, key) is None:
                try:
                    result, observations = cache.parse_entry(*self.reference)
                except Exception:  # noqa: BLE001 - a bad entry is recomputed below, never trusted
                    pass
                else:
                    if reference_problem(result, observations) is None:
                        cache.store(self.slug, key, result, observations)
            reference_for(exercise, key)  # a hit, or computed once here (another Python: another key)
            self._exercise = exercise
            return exercise

    def _warm_worker(self, exercise: Exercise) -> Any:
        from judge.grade import hidden_from_learners
        from judge.worker.sandbox import WarmWorker

        warm = getattr(self._local, "warm", None)
        if warm is None:
            # WarmWorker creates a hidden folder that does not exist: only hide what is here.
            extra = [Path(p) for p in (*self.hidden, self._scratch) if p and Path(p).is_dir()]
            warm = self._local.warm = WarmWorker(hidden_from_learners(exercise, *extra))
            with self._lock:
                self._warm.append(warm)
        return warm

    def grade(self, path: str, resolved: str, data: bytes, limits: dict[str, Any] | None,
              client_versions: dict[str, str]) -> str:
        """One submission's verdict, as a JSON string: ``{"verdict": ...}`` or ``{"refused": line}``."""
        problem = refusal(worker_facts(), client_versions, self._address, self.allow_weak)
        if problem is not None:
            return json.dumps({"refused": problem})
        from judge.grade import grade

        exercise = self._prepared()
        try:
            verdict = grade(exercise, Path(resolved), data=data, limits=Limits(**limits) if limits else None,
                            worker=self._warm_worker(exercise), marked=True)
        except Exception as exc:  # noqa: BLE001 - as in grade_many: one bad file must not stop a class
            verdict = Verdict(exercise=exercise.slug, status=Status.CRASHED,
                              message=f"grind could not grade this submission: {exc}")
        verdict.submission = path
        return json.dumps({"verdict": verdict.to_json()})


def grade_task(plugin: str, path: str, resolved: str, data: bytes, limits: dict[str, Any] | None,
               client_versions: dict[str, str]) -> str:
    """The Dask task: runs in the worker process, hands the submission to grind's sandbox."""
    from distributed import get_worker

    installed = cast(GradingPlugin, get_worker().plugins[plugin])  # registered under this name by DaskExecutor
    return installed.grade(path, resolved, data, limits, client_versions)


def _verdict(answer: str, slug: str) -> dict[str, Any] | str:
    """The task's answer, parsed as plain JSON and checked for shape: a verdict dict, or a refusal."""
    doc = json.loads(answer)
    if isinstance(doc, dict) and isinstance(doc.get("refused"), str):
        return str(doc["refused"])
    verdict = doc.get("verdict") if isinstance(doc, dict) else None
    if (not isinstance(verdict, dict) or verdict.get("exercise") != slug
            or verdict.get("status") not in {s.value for s in Status}):
        raise ValueError("a Dask worker answered something that is not a verdict")
    return verdict


class DaskExecutor:
    """A ``judge.batch.Executor`` that fans submissions out to the Dask scheduler at ``scheduler``."""

    def __init__(self, scheduler: str, *, allow_weak_isolation: bool = False,
                 connect_timeout: float | None = None, worker_wait: float | None = None) -> None:
        self.scheduler = scheduler
        self.allow_weak = allow_weak_isolation
        self.connect_timeout = connect_timeout or CONNECT_TIMEOUT_S
        self.worker_wait = worker_wait or WORKER_WAIT_S

    def __call__(self, exercise: Exercise, paths: list[Path], *, limits: Limits | None,
                 on_done: Callable[[Path, dict[str, Any]], None], hidden: tuple[Path, ...] = ()) -> None:
        from distributed import Client, as_completed

        from judge.environment import require_torch
        from judge.trusted import reference_for

        require_torch()
        here = versions()
        try:
            # type-ignored: distributed annotates neither Client() nor unregister_worker_plugin
            client = Client(self.scheduler, timeout=self.connect_timeout, set_as_default=False)  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError, ValueError) as exc:
            raise EnvironmentProblem(f"cannot reach the Dask scheduler at {self.scheduler}: "
                                     f"{type(exc).__name__}: {exc}") from None
        with client:
            try:
                client.wait_for_workers(1, timeout=self.worker_wait)
            except TimeoutError:
                raise EnvironmentProblem(f"no Dask worker joined the scheduler at {self.scheduler} within "
                                         f"{self.worker_wait:.0f} s") from None
            for address, facts in sorted(client.run(worker_facts).items()):
                problem = refusal(facts, here, address, self.allow_weak)
                if problem is not None:
                    raise EnvironmentProblem(problem)  # before any work: a wrong cluster costs nothing
            key = cache.exercise_key(exercise)
            reference_for(exercise, key)  # computed (or loaded) once, here, and shipped to every worker
            plugin = GradingPlugin(exercise, key, cache.entry_bytes(exercise.slug, key), self.allow_weak,
                                   tuple(str(h) for h in hidden))
            client.register_plugin(plugin, name=plugin.name)
            try:
                self._run(client, as_completed, plugin.name, exercise, paths, limits, on_done, here,
                          self.worker_wait, self.scheduler)
            finally:
                try:
                    # closes the warm workers, removes the copies (untyped in distributed)
                    client.unregister_worker_plugin(plugin.name)  # type: ignore[no-untyped-call]
                except Exception:  # noqa: BLE001 - a cluster going away must not hide the real outcome
                    pass

    @staticmethod
    def _run(client: Any, as_completed: Any, plugin: str, exercise: Exercise, paths: list[Path],
             limits: Limits | None, on_done: Callable[[Path, dict[str, Any]], None],
             here: dict[str, str], worker_wait: float = WORKER_WAIT_S, scheduler: str = "?") -> None:
        futures = {}
        for index, path in enumerate(paths):
            try:
                data = path.read_bytes()
            except OSError as exc:  # as grade_many does: this student's row, not the class's end
                on_done(path, Verdict(exercise=exercise.slug, status=Status.CRASHED, submission=str(path),
                                      message=f"grind could not grade this submission: {exc}").to_json())
                continue
            future = client.submit(grade_task, plugin, str(path), str(path.resolve()), data,
                                   asdict(limits) if limits else None, here,
                                   key=f"{plugin}-{index}", pure=False)
            futures[future] = path
        lost: list[str] = []
        for future in _landing(client, as_completed(list(futures), loop=client.loop), worker_wait, scheduler,
                               len(paths), futures):
            path = futures.pop(future)
            try:
                answer = _verdict(future.result(), exercise.slug)
            except Exception as exc:  # noqa: BLE001 - grind's side failed (a worker lost for good): not stored
                lost.append(f"{path.name}: {type(exc).__name__}: {exc}")
                continue
            finally:
                future.release()
            if isinstance(answer, str):
                for other in futures:
                    other.cancel()
                raise EnvironmentProblem(answer)
            on_done(path, answer)
        if lost:
            raise JudgeError(f"{len(lost)} of {len(paths)} submissions were not graded on the Dask cluster "
                             f"(first: {lost[0]}); the others are stored: run the same command again to grade "
                             "the rest")



def _landing(client: Any, pending: Any, worker_wait: float, scheduler: str, total: int,
             futures: dict[Any, Path]) -> Any:
    """Each future as it completes, like iterating ``as_completed``, except that a cluster with
    no worker for ``worker_wait`` seconds ends the run: Dask itself keeps the tasks queued until a
    worker joins, so a cluster that lost its only worker hung without a word. The futures still
    pending are cancelled (they are not stored: running the command again grades them)."""
    import time

    empty_since: float | None = None
    while not pending.is_empty():
        if pending.has_ready():
            yield from pending.next_batch(block=False)
            continue
        try:
            # No arguments: older distributed (the extra allows 2023.9) takes none, newer ones list
            # up to 5 workers by default, and any one is enough here.
            workers = len(client.scheduler_info().get("workers") or {})
        except Exception:  # noqa: BLE001 - the scheduler itself is gone: as good as no workers
            workers = 0
        if workers:
            empty_since = None
        else:
            now = time.monotonic()
            empty_since = empty_since if empty_since is not None else now
            if now - empty_since >= worker_wait:
                for future in list(futures):
                    future.cancel()
                raise EnvironmentProblem(
                    f"the Dask cluster at {scheduler} has no workers: none for {worker_wait:.0f} s, with "
                    f"{len(futures)} of {total} submissions still to grade; the others are stored. Start "
                    "workers (or raise --worker-wait) and run the same command again to grade the rest")
        time.sleep(POLL_S)
