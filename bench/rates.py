"""Batch grading rate per exercise: correct submissions graded per second, as ``grind grade`` does.

    python bench/rates.py               # 12 submissions per exercise, 2 jobs
    python bench/rates.py -n 24 --jobs 2 clipping lr-schedule

For each exercise, ``n`` copies of its reference are graded with ``judge.batch.grade_many`` (one
warm worker per job, each submission in a fresh isolated fork), after one untimed grade that
computes the reference observations into a scratch cache. The baseline, measured in the same
run, is what a naive course script does: one ``grind run --file`` process per submission (a
cold start importing torch each time). Read the ratio, not the seconds: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*")
    parser.add_argument("-n", type=int, default=12, help="submissions per exercise")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cold", type=int, default=2, help="cold `grind run` processes for the baseline")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="grind-rates-"))
    os.environ["GRIND_CACHE_DIR"] = str(scratch / "cache")
    os.environ["GRIND_STATE_DIR"] = str(scratch / "state")
    # The baseline is a cold start per submission: not the per-user daemon, which the first
    # `grind run` would start and every later one would use (the ratio then compared two warm paths).
    os.environ["GRIND_NO_DAEMON"] = "1"
    from judge.batch import grade_many
    from judge.catalog import Catalog
    from judge.grade import grade

    catalog = Catalog()
    slugs = args.slugs or [e.slug for e in catalog.all()]
    print(f"{'exercise':<16} {'batch/s':>8} {'cold/s':>8} {'ratio':>6}  (batch rate ÷ one process per submission)")
    try:
        for slug in slugs:
            exercise = catalog.get(slug)
            folder = scratch / slug
            folder.mkdir()
            reference = ROOT / "solutions" / slug / "reference.py"
            files = []
            for i in range(args.n):
                target = folder / f"student{i:03d}.py"
                shutil.copy(reference, target)
                files.append(target)
            warm = grade(exercise, files[0])  # computes the reference once, untimed
            assert warm.status.value == "passed", f"{slug}: the reference does not pass: {warm.message}"
            start = time.perf_counter()
            verdicts = grade_many(exercise, files, jobs=args.jobs)
            batch = args.n / (time.perf_counter() - start)
            bad = [p.name for p, v in verdicts.items() if v.status.value != "passed"]
            assert not bad, f"{slug}: copies of the reference failed: {bad}"
            start = time.perf_counter()
            for path in files[: args.cold]:
                subprocess.run([sys.executable, "-m", "judge", "run", slug, "--file", str(path)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            cold = args.cold / (time.perf_counter() - start)
            print(f"{slug:<16} {batch:8.2f} {cold:8.2f} {batch / cold:6.1f}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
