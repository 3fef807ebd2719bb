# expect: failed|timeout|crashed
# (crashed: once, under heavy load in warm mode, the job died of SIGSEGV while hitting the
# file-size limit; the guarantee tested here is that the file stays bounded and grind answers.)
def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    block = b"\0" * (1 << 20)
    with open("huge.bin", "wb") as handle:
        for _ in range(10 * 1024):
            handle.write(block)
    return 0.0
