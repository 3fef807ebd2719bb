# expect: crashed
import os
import signal


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    os.kill(os.getppid(), signal.SIGKILL)
