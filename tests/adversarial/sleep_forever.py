# expect: timeout
import time


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    time.sleep(1e9)
