# expect: timeout
# A chain of 120 processes, each in a session of its own (setsid) and each the child of the one
# before, all asleep. Killing only the processes re-parented to grind freed one level of the
# chain per pass, and a chain deeper than the passes outlived the run where no pids cgroup
# bounds it (an unprivileged user without bubblewrap), above all after a timeout, where grind
# kills the run's waiter first. The function then sleeps past its clock. Nothing may be left once
# the verdict is in.
import os
import time

if os.fork() == 0:  # the chain; the submission itself goes on below
    for _ in range(120):
        os.setsid()
        if os.fork() != 0:
            break  # this level stays, asleep, as the parent of the next one
    while True:
        time.sleep(3600)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    time.sleep(3600)
