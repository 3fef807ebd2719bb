# expect: passed
# needs: landlock|bubblewrap
# Landlock governs reading and writing files, not their mode, owner, times or extended
# attributes: a second red team made a root-owned copy of /usr/bin/id setuid root from a child
# running as root (the owner of every root-owned file, capabilities or not), changed the mode of
# the host's /dev/full under bubblewrap, and made the class folder it was graded from unreadable,
# which stopped the whole grade. It also set grind's own I/O priority to idle and its CPUs
# (ioprio_set, sched_setaffinity), which the filter had no rule for. A second review set a root-owned
# file's flags through ioctl, and took leases and record locks on files every process reads
# (torch's __init__.py, /etc/passwd), stalling them. Here: the bait file (one of grind's user,
# outside the run), every ancestor this process can see, and those files, through each call.
import ctypes
import errno
import os

import torch

BAIT = {}  # tests/test_seccomp.py writes the addresses it listens on here
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.syscall.restype = ctypes.c_long
_opened, _tried = [], []


def _try(name, number, *args):
    """A raw system call (x86_64 numbers): one that succeeds is an open door."""
    ctypes.set_errno(0)
    result = _LIBC.syscall(ctypes.c_long(number), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if result >= 0:
        _opened.append(name)
    else:
        print(f"{name}: {errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())}")


def _ancestors():
    found, pid = [], os.getpid()
    for _ in range(12):
        try:
            with open(f"/proc/{pid}/status") as status:
                pid = int(next(line for line in status if line.startswith("PPid:")).split()[1])
        except (OSError, StopIteration, ValueError):
            break
        if pid <= 1:
            break
        found.append(pid)
    return found


def _attack():
    path = BAIT.get("file", "").encode()
    if path:
        _try("chmod 4755", 90, path, 0o4755)
        _try("fchmodat 0", 268, -100, path, 0)
        _try("fchmodat2 0", 452, -100, path, 0, 0)
        _try("chown -1 -1", 92, path, -1, -1)
        _try("utimensat now", 280, -100, path, None, 0)
        _try("utime now", 132, path, None)
        _try("setxattr user.grind", 188, path, b"user.grind", b"x", 1, 0)
        _try("removexattr user.grind", 197, path, b"user.grind")
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as exc:
            print(f"open for fchmod: {exc}")
        else:
            _try("fchmod 0", 91, fd, 0)
            _try("fsetxattr user.grind", 190, fd, b"user.grind", b"x", 1, 0)
            os.close(fd)
    mask = (ctypes.c_ulong * 16)(1)
    for pid in _ancestors():
        _try(f"ioprio_set idle on {pid}", 251, 1, pid, 3 << 13)
        _try(f"sched_setaffinity on {pid}", 203, pid, ctypes.sizeof(mask), mask)
        _try(f"move_pages on {pid}", 279, pid, 0, None, None, None, 0)
    _try("ioprio_set idle on the whole user", 251, 3, os.getuid(), 3 << 13)
    # files every process opens, which this process may read (and, as their owner, lease or flag):
    # a lease or a record lock stalls every other reader or writer while the run lives
    for target in (torch.__file__, "/etc/passwd", "/etc/hosts"):
        try:
            fd = os.open(target, os.O_RDONLY)
        except OSError as exc:
            print(f"open {target}: {exc}")
            continue
        _try(f"F_SETLEASE read lease on {target}", 72, fd, 1024, 0)
        _try(f"F_SETLEASE let go on {target}", 72, fd, 1024, 2)
        lock = ctypes.create_string_buffer(32)  # struct flock: a shared lock over the whole file
        _try(f"F_SETLK shared lock on {target}", 72, fd, 6, lock)
        _try(f"F_OFD_SETLK shared lock on {target}", 72, fd, 37, ctypes.create_string_buffer(32))
        flags = ctypes.c_long(0)
        if _LIBC.syscall(ctypes.c_long(16), ctypes.c_long(fd), ctypes.c_long(0x80086601), ctypes.byref(flags)) == 0:
            _try(f"FS_IOC_SETFLAGS (unchanged) on {target}", 16, fd, 0x40086602, ctypes.byref(flags))
        os.close(fd)


def _per_user_counts():
    """What the kernel counts per user or host, not per run: inotify instances, and memory outside
    the run's limits (a memfd, a System V segment). (Queued real-time signals are the user's too,
    and kill() is exempt from RLIMIT_SIGPENDING: listed in the README, not tried here.)"""
    _try("inotify_init1", 294, 0)
    _try("memfd_create", 319, b"grind", 0)
    _try("shmget 64 MB", 29, 0, 64 << 20, 0o1600)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if not _tried:
        _tried.append(True)
        _attack()
        _per_user_counts()
        print("GRIND-SIDEDOOR", "open:" if _opened else "shut", ", ".join(_opened))
    if _opened:
        return torch.zeros(())
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.zeros(())
    norms = torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads])
    total = torch.linalg.vector_norm(norms, float(norm_type))
    for g in grads:
        g.mul_(torch.clamp(max_norm / (total + 1e-6), max=1.0).to(g.dtype))
    return total
