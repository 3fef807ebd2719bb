# hostile: a route into grind's process past the marks scan, found by a red-team review; refused now
import signal, os
got = []
def h(signum, frame):
    got.append(frame)
signal.signal(signal.SIGUSR1, h)
os.kill(os.getpid(), signal.SIGUSR1)
frame = got[0]
