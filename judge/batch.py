"""Grade many submissions to one exercise, in parallel, with warm workers.

Each of ``jobs`` threads owns one warm worker (a forkserver that imported torch once), so a
class of 100 submissions costs 2 torch imports on 2 cores, not 100. One submission's crash or
timeout is its own verdict and never stops the others.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from judge.grade import grade, hidden_from_learners, reference_for
from judge.models import Exercise, Status, Verdict
from judge.worker.sandbox import Limits, WarmWorker


def grade_many(
    exercise: Exercise,
    paths: list[Path],
    *,
    jobs: int = 2,
    limits: Limits | None = None,
    on_done: Callable[[Path, Verdict], None] | None = None,
) -> dict[Path, Verdict]:
    """Verdicts for every path, in any order of completion; ``on_done`` is called as each lands."""
    reference_for(exercise)  # compute (or load) the reference once, before the workers race for it
    local = threading.local()
    workers: list[WarmWorker] = []
    lock = threading.Lock()

    def worker() -> WarmWorker:
        if not hasattr(local, "worker"):
            local.worker = WarmWorker(hidden_from_learners(exercise))
            with lock:
                workers.append(local.worker)
        return local.worker  # type: ignore[no-any-return]

    def one(path: Path) -> tuple[Path, Verdict]:
        try:
            verdict = grade(exercise, path, limits=limits, worker=worker())
        except Exception as exc:  # noqa: BLE001 - one bad file must not stop a class
            verdict = Verdict(exercise=exercise.slug, status=Status.CRASHED, submission=str(path),
                              message=f"grind could not grade this submission: {exc}")
        if on_done is not None:
            on_done(path, verdict)
        return path, verdict

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return dict(pool.map(one, paths))
    finally:
        for w in workers:
            w.close()
