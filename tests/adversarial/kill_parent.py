# expect: crashed|failed
# In a PID namespace the parent is its init, which ignores the signal: the checks then just fail.
import os
import signal


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    os.kill(os.getppid(), signal.SIGKILL)
