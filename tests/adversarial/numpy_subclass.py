# expect: failed
import numpy as np


class AlwaysClose(np.ndarray):
    def __eq__(self, other):
        return np.ones_like(np.asarray(self), dtype=bool)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return np.array(13.0).view(AlwaysClose)
