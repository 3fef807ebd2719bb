# expect: failed|timeout
def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    block = b"\0" * (1 << 20)
    with open("huge.bin", "wb") as handle:
        for _ in range(10 * 1024):
            handle.write(block)
    return 0.0
