# expect: failed|timeout
import sys

chunk = "x" * (1 << 20)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    for _ in range(1024):
        sys.stdout.write(chunk)
    return 0.0
