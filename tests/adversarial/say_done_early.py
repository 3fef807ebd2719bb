# expect: crashed|failed
# Attacks the warm server's early answer: the server answers a job as soon as the runner says
# "done" on its control pipe (after the result is written and the output flushed), and only then
# waits for the job's processes to be gone. This submission says "done" itself, on every pipe it
# holds, before any result exists, and leaves behind a process in a session of its own that keeps
# writing a forged result into the run folder, hoping the verdict is read from that. The answer
# must be a crash (no honest result) or, where nobody listens for "done" (a cold run), the wrong
# answer's failure; nothing it started may outlive the run.
import os
import stat
import time


def _say_done() -> None:
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, b"\ndone\n")
        except OSError:
            pass


def _forger() -> None:
    if os.fork() != 0:
        return
    os.setsid()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with open("result.json", "w") as handle:
                handle.write('{"token": "' + "0" * 32 + '", "subjects": {}}')
        except OSError:
            pass
        time.sleep(0.001)
    os._exit(0)


_started = []


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if not _started:
        _started.append(True)
        _say_done()
        _forger()
        time.sleep(0.5)  # where "done" is heard, the run ends here
    return 0.0
