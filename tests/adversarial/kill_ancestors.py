# expect: crashed|failed
# needs: landlock|bubblewrap
# danger: signals its ancestors (the suite proves signals are contained first)
# Walks /proc up its ancestry and SIGKILLs every process it finds: grind must not be among them.
import os, signal
def _ppid(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("PPid:"):
                return int(line.split()[1])
    return 0
def clip_grad_norm_(p, m, n=2.0):
    pid = os.getpid()
    for _ in range(10):
        pid = _ppid(pid)
        if pid <= 1:
            break
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return 0.0
