# Hostile (written for grind's own tests): a user's inotify instances are few (128 by default)
# and shared by every process of the user, grind's watch mode included. This submission takes
# every instance it can get, puts as many watches as it can on 2000 files of its own folder,
# and keeps them all until it is stopped: a watcher grind makes meanwhile cannot be had. Where
# the submission runs as another user (root's child runs as nobody), it takes that user's.
import ctypes
import os
import time

libc = ctypes.CDLL(None, use_errno=True)
instances, watches = [], 0
while len(instances) < 4096:
    fd = libc.inotify_init1(0)
    if fd < 0:
        break
    instances.append(fd)
os.makedirs("many", exist_ok=True)
for number in range(2000):
    name = f"many/f{number}".encode()
    open(name, "w").close()
    for fd in instances[:8]:
        if libc.inotify_add_watch(fd, name, 0x00000FFF) >= 0:
            watches += 1
print(f"holding {len(instances)} inotify instances and {watches} watches", flush=True)
time.sleep(600)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 0.0
