# Hostile (written for grind's own tests): files deleted while still open take disk space that
# no walk of the folder can see, until the last descriptor closes. This one keeps up to 200 of
# them open (8 MB each, under the per-file limit), then waits holding all of them.
import os

kept, written = [], 0
try:
    for number in range(200):
        fd = os.open(f"hidden-{number}.bin", os.O_RDWR | os.O_CREAT, 0o600)
        os.unlink(f"hidden-{number}.bin")
        kept.append(fd)
        for _ in range(8):
            os.write(fd, b"\x5a" * (1 << 20))
        written += 8
except OSError as exc:
    print(f"stopped after {written} MB: {exc}")
import time

time.sleep(600)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 0.0
