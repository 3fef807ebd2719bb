# expect: error
# Not a trick: a helper without a base case runs while the module loads. The RecursionError is
# the learner's own (the old guard lost its profile hook to it and reported "forbidden").
def _count_down(n):
    return _count_down(n - 1) + 1


_WARMUP = _count_down(10)
