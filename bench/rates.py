"""Batch grading rate per exercise: correct submissions graded per second, as ``grind grade`` does.

    python bench/rates.py               # 12 submissions per exercise, 2 jobs
    python bench/rates.py -n 24 --jobs 2 clipping lr-schedule
    python bench/rates.py --cold 0      # only each exercise's rate ÷ clipping's, measured first

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
sys.path.insert(0, str(ROOT))  # this checkout's judge, not an installed one (see bench/bench.py)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*")
    parser.add_argument("-n", type=int, default=12, help="submissions per exercise")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cold", type=int, default=2, help="cold `grind run` processes for the baseline "
                        "(0: none, only the ratios to clipping)")
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
    slugs = ["clipping", *[s for s in slugs if s != "clipping"]]  # the yardstick, measured first
    print(f"{'exercise':<22} {'batch/s':>8} {'÷clipping':>9} {'cold/s':>8} {'ratio':>6}  "
          "(÷clipping: batch rate ÷ clipping's in this run, goal ≥ 0.33; ratio: ÷ one process per submission)")
    rates: dict[str, float] = {}
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
            rates[slug] = batch
            cold_text = ratio_text = "-"
            if args.cold:
                start = time.perf_counter()
                for path in files[: args.cold]:
                    subprocess.run([sys.executable, "-m", "judge", "run", slug, "--file", str(path)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                cold = args.cold / (time.perf_counter() - start)
                cold_text, ratio_text = f"{cold:.2f}", f"{batch / cold:.1f}"
            print(f"{slug:<22} {batch:8.2f} {batch / rates['clipping']:9.2f} {cold_text:>8} {ratio_text:>6}",
                  flush=True)
        slowest = min(rates, key=rates.__getitem__)
        print(f"\nslowest: {slowest}, {rates[slowest] / rates['clipping']:.2f} of clipping's rate "
              f"(load average {os.getloadavg()[0]:.1f})")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
