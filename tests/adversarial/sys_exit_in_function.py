# expect: failed
import sys


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    sys.exit(0)
