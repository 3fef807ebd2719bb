"""What grading for marks costs over practice, as a ratio in one run (issue 28).

A marks grade (``grind grade``, the Gradescope bundle) also records the libraries before the
learner's file loads and looks at every write to them (judge/worker/integrity.py). This grades
the same file with one warm worker, alternating practice and marks, and prints each median and
the ratio. Usage: ``python bench/marks_overhead.py [EXERCISE] [FILE] [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from judge.catalog import Catalog
from judge.grade import grade, hidden_from_learners
from judge.worker.sandbox import WarmWorker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercise", nargs="?", default="clipping")
    parser.add_argument("file", nargs="?", default=None)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    exercise = Catalog().get(args.exercise)
    path = Path(args.file) if args.file else exercise.reference_path
    times: dict[bool, list[float]] = {False: [], True: []}
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        for marked in (False, True):  # warm both paths (the reference, torch._dynamo in the server)
            grade(exercise, path, worker=worker, marked=marked)
        for _ in range(args.runs):
            for marked in (False, True):
                started = time.perf_counter()
                verdict = grade(exercise, path, worker=worker, marked=marked)
                times[marked].append(time.perf_counter() - started)
                assert verdict.passed, verdict.message
    practice, marks = statistics.median(times[False]), statistics.median(times[True])
    print(f"{args.exercise}: practice {practice:.3f} s, marks {marks:.3f} s (medians of {args.runs}); "
          f"marks / practice = {marks / practice:.2f}")


if __name__ == "__main__":
    main()
