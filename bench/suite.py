"""The test suite's wall time, as a ratio against `python -c "import torch"` timed in the same run.

    python bench/suite.py            # the README's test command: python -m pytest -n 3
    python bench/suite.py -- -x -q   # extra arguments after -- go to pytest

Why a ratio: the shared 2-core machines this project runs on differ by almost three times in
speed from one day to the next (`import torch` has taken 1.2 s on one and 3.4 s on another),
and the suite's cost moves with them: its unit of cost is a fresh torch process. The wall time
divided by one torch import is the steady figure to compare between days and commits; the
project's goal stays "about 10 minutes on 2 cores" in seconds, which a slow day can break by
itself (at 3.4 s per import the suite's ~240 imports would take over 13 minutes).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

def timed(cmd: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    rc = subprocess.run(cmd, check=False).returncode
    return time.perf_counter() - start, rc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pytest_args", nargs="*", help="after --: extra pytest arguments")
    args = parser.parse_args()
    torch_before = statistics.median(timed([sys.executable, "-c", "import torch"])[0] for _ in range(3))
    suite, rc = timed([sys.executable, "-m", "pytest", "-n", "3", "-q", *args.pytest_args])
    torch_after = statistics.median(timed([sys.executable, "-c", "import torch"])[0] for _ in range(3))
    unit = (torch_before + torch_after) / 2  # the machine's speed before and after, averaged
    print(f"\n| figure | measured | baseline | ratio | goal |\n|---|---|---|---|---|\n"
          f"| `python -m pytest -n 3` ÷ `python -c \"import torch\"` | {suite:.0f} s | {unit:.2f} s "
          f"| {suite / unit:.0f} | suite ≤ about 600 s |")
    print(f"(import torch took {torch_before:.2f} s before the suite and {torch_after:.2f} s after; "
          f"pytest exit status {rc})")
    sys.exit(rc)


if __name__ == "__main__":
    main()
