# expect: failed|timeout|crashed
# Floods every inherited file descriptor with newline-free bytes, hoping the judge buffers them.
import os

blob = b"x" * (1 << 20)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    for fd in range(3, 12):
        try:
            for _ in range(64):
                os.write(fd, blob)
        except OSError:
            pass
    return 0.0
