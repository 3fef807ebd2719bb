# expect: timeout
# Attacks warm mode's clock: the server starts a job's wall clock when it reads "ready" at the
# start of progress.txt in the job's cwd. Right after "ready" (this file is loaded just after it
# is written) the submission replaces that file, then loops forever. If the server has not read
# it yet, it never starts the clock and the job runs until the 90 s startup limit, while the
# message says the 2 s limit was exceeded. The verdict must be a timeout, promptly.
import os

try:
    with open("progress.tmp", "w") as _handle:
        _handle.write("not yet\n")
    os.replace("progress.tmp", "progress.txt")
except OSError:
    pass


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    while True:
        pass
