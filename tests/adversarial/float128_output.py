# expect: failed
# Returns a numpy float128, which safetensors cannot carry: a failed check ("not numbers"), never
# a crash of the worker with grind's own traceback.
import numpy as np


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return np.array(1.0, dtype=np.longdouble)
