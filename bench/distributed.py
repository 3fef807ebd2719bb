"""What a distributed exercise costs: grading its reference with R ranks against clipping's.

    python bench/distributed.py                      # ddp-token-loss and sharded-clip, 3 rounds
    python bench/distributed.py -n 5 sharded-clip

Each exercise's reference is graded as a submission ``n`` times, alternating with clipping's
reference, after one untimed grade of each that computes the reference observations into a
scratch cache. Two modes: cold (``grade`` without a worker: a fresh child that imports torch,
as ``grind run`` does) and warm (forks of one warm worker per exercise, as ``grind watch`` and
``grind grade`` do). Reported: the median seconds of each and the ratio to clipping, with the
number of distributed case instances (each forks R ranks that join a gloo group). The issue's
goal is a ratio of at most about 3 for R = 2. Read the ratio, not the seconds: the machine is
shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*", default=["ddp-token-loss", "sharded-clip"])
    parser.add_argument("-n", type=int, default=3, help="timed grades per exercise and mode")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="grind-bench-dist-"))
    os.environ["GRIND_CACHE_DIR"] = str(scratch / "cache")
    os.environ["GRIND_STATE_DIR"] = str(scratch / "state")
    from judge.catalog import Catalog
    from judge.grade import grade, hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    catalog = Catalog()
    slugs = ["clipping", *args.slugs]
    exercises = {slug: catalog.get(slug) for slug in slugs}
    for exercise in exercises.values():
        assert grade(exercise, exercise.reference_path).passed, exercise.slug  # untimed: the cache
    for mode in ("cold", "warm"):
        workers = {slug: WarmWorker(hidden_from_learners(ex)) for slug, ex in exercises.items()} if mode == "warm" else {}
        times: dict[str, list[float]] = {slug: [] for slug in slugs}
        try:
            for slug, exercise in exercises.items():  # one untimed grade per warm worker: its start-up
                if mode == "warm":
                    grade(exercise, exercise.reference_path, worker=workers[slug])
            for _ in range(args.n):
                for slug, exercise in exercises.items():
                    started = time.perf_counter()
                    verdict = grade(exercise, exercise.reference_path, worker=workers.get(slug))
                    times[slug].append(time.perf_counter() - started)
                    assert verdict.passed, (slug, verdict.message)
        finally:
            for worker in workers.values():
                worker.close()
        base = statistics.median(times["clipping"])
        print(f"{mode}: clipping {base:.2f} s per grade (median of {args.n})")
        for slug in args.slugs:
            median = statistics.median(times[slug])
            cases = len(exercises[slug].reference_path.parent.joinpath("checks.py").read_text().split("world_size=")) - 1
            print(f"{mode}: {slug} {median:.2f} s per grade, {median / base:.2f}x clipping "
                  f"({cases} distributed cases)")


if __name__ == "__main__":
    main()
