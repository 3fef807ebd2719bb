# Hostile (written for grind's own tests): every file stays under the per-file limit
# (RLIMIT_FSIZE), but there are many of them: 8 MB at a time, until the disk refuses or the run
# is stopped, then it waits with all of them on disk. The total is what must be capped.
import os

written = 0
try:
    for number in range(1000):
        with open(f"fill-{number}.bin", "wb") as handle:
            for _ in range(8):
                handle.write(b"\xa5" * (1 << 20))
        written += 8
except OSError as exc:
    print(f"stopped after {written} MB: {exc}")
import time

time.sleep(600)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 0.0
