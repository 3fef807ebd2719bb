"""What a distributed exercise costs: grading its reference with R ranks against clipping's.

    python bench/distributed.py                      # every exercise with ranks, 3 rounds
    python bench/distributed.py -n 5 sharded-clip

Each exercise's reference is graded as a submission ``n`` times, alternating with clipping's
reference, after one untimed grade of each that computes the reference observations into a
scratch cache. Two modes: cold (``grade`` without a worker: a fresh child that imports torch,
as ``grind run`` does) and warm (forks of one warm worker per exercise, as ``grind watch`` and
``grind grade`` do). Reported: the median seconds of each and the ratio to clipping, with the
number of distributed case instances (each forks R ranks that join a gloo group). The issue's
goal is a ratio of at most about 3 for R = 2. Read the ratio, not the seconds: the machine is
shared. Measured on the 2-core development machine (one reviewer's job beside it), ``-n 3``:

    cold: clipping 2.21 s per grade
    cold: ddp-token-loss 4.73 s per grade, 2.14x clipping (6 distributed cases)
    cold: sharded-clip 5.19 s per grade, 2.34x clipping (7 distributed cases)
    cold: no-sync-accumulation 4.67 s per grade, 2.11x clipping (3 distributed cases)
    cold: rank0-checkpoint 3.87 s per grade, 1.75x clipping (2 distributed cases)
    warm: clipping 0.12 s per grade
    warm: ddp-token-loss 0.58 s per grade, 4.70x clipping (6 distributed cases)
    warm: sharded-clip 0.44 s per grade, 3.57x clipping (7 distributed cases)
    warm: no-sync-accumulation 0.29 s per grade, 2.38x clipping (3 distributed cases)
    warm: rank0-checkpoint 0.31 s per grade, 2.56x clipping (2 distributed cases)

Cold, most of the extra is importing what DDP needs (torch._dynamo, about 3 s, before the
learner's clock starts); warm, the server has imported it once, and what remains is the forks
and the gloo rendezvous, about 0.1 s per case.
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
    parser.add_argument("slugs", nargs="*",
                        default=["ddp-token-loss", "sharded-clip", "no-sync-accumulation", "rank0-checkpoint"])
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
                    if not verdict.passed:  # a loaded machine: say so and leave it out of the median
                        print(f"{mode}: {slug} did not pass ({verdict.status.value}): {verdict.message[:200]} "
                              f"{verdict.stderr[-300:]!r}", file=sys.stderr)
                        continue
                    times[slug].append(time.perf_counter() - started)
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
