# expect: failed
# Rewrites the judge's child-side runner from inside the submission: every observation it
# sends becomes 13.0. The parent compares with the reference, so this only produces wrong data.
import sys

runner = sys.modules["grind_worker.child.values"]  # the child package, loaded by path
real = runner.to_array
runner.to_array = lambda value, np, torch: np.array(13.0)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 13.0
