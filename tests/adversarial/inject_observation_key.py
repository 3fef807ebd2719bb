# expect: failed|crashed
# Rewrites the runner's observations with a key the parent does not expect.
import sys

runner = sys.modules["grind_worker.child.values"]  # the child package, loaded by path
real = runner.to_array


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 13.0
