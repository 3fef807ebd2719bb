# expect: crashed
# needs: landlock|bubblewrap
# danger: signals every process it can reach (the suite proves signals are contained first)
# Kills everything: os.kill(-1, SIGKILL) (every process the user may signal), then SIGKILL to
# every pid in /proc, then to itself. Where signals are confined to the run, only the run dies:
# grind must survive, give a crashed verdict, and grade the next student normally.
import os
import signal

try:
    os.kill(-1, signal.SIGKILL)
except OSError:
    pass
_me = os.getpid()
for _entry in os.listdir("/proc"):
    if _entry.isdigit() and int(_entry) != _me:
        try:
            os.kill(int(_entry), signal.SIGKILL)
        except OSError:
            pass
os.kill(_me, signal.SIGKILL)
