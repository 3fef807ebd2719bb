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
shared. Measured on the 2-core development machine, idle, ``-n 3``, with each subject's ranks
kept for all its cases of one world size (judge/worker/child/ranks.py, RankPool):

    cold: clipping 1.03 s per grade
    cold: ddp-token-loss 2.24 s per grade, 2.18x clipping (6 distributed cases)
    cold: sharded-clip 1.94 s per grade, 1.89x clipping (7 distributed cases)
    cold: no-sync-accumulation 1.93 s per grade, 1.88x clipping (3 distributed cases)
    cold: rank0-checkpoint 1.97 s per grade, 1.92x clipping (2 distributed cases)
    warm: clipping 0.07 s per grade
    warm: ddp-token-loss 0.23 s per grade, 3.34x clipping (6 distributed cases)
    warm: sharded-clip 0.12 s per grade, 1.66x clipping (7 distributed cases)
    warm: no-sync-accumulation 0.13 s per grade, 1.82x clipping (3 distributed cases)
    warm: rank0-checkpoint 0.21 s per grade, 2.96x clipping (2 distributed cases)

Before the ranks were kept (a fork of the child and a gloo rendezvous per case), warm
ddp-token-loss was 4.70x and sharded-clip 3.57-4.07x. Cold, most of the extra is importing what
DDP needs (torch._dynamo, about a torch import, before the learner's clock starts); warm, what
remains is DDP itself and, per pool, the forks and the rendezvous (about 25 ms). ddp-token-loss
has a case of 4 ranks beside its 2-rank ones: two pools. rank0-checkpoint's cases are of 4 and
of 2 ranks: a pool each, used once.
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
