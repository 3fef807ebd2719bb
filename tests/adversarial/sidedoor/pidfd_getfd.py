# expect: passed
# needs: landlock|bubblewrap
# pidfd_getfd copies a descriptor out of another process: the warm server's, the shielding
# waiter's or grind's own (their pipes, the daemon's socket, an open file of the solutions). Same
# user, so only the ptrace check stands in the way. Tries every ancestor and every fd below 64.
import ctypes
import errno
import os

import torch

BAIT = {}  # tests/test_seccomp.py writes the addresses it listens on here
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.syscall.restype = ctypes.c_long
_opened, _tried = [], []


def _syscall(number, *args):
    """A raw system call (x86_64 numbers below): (result, errno)."""
    ctypes.set_errno(0)
    result = _LIBC.syscall(ctypes.c_long(number), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return result, ctypes.get_errno()


def _try(name, number, *args):
    """Count a call that succeeds as an open door; say how a refused one ended."""
    result, err = _syscall(number, *args)
    if result >= 0:
        _opened.append(name)
    else:
        print(f"{name}: {errno.errorcode.get(err, err)}")
    return result


def _ancestors():
    pid = os.getppid()
    while pid > 1:
        yield pid
        try:
            with open(f"/proc/{pid}/stat") as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return


def _attack():
    for pid in [*_ancestors(), 1]:
        pidfd = _try(f"pidfd_open({pid})", 434, pid, 0)
        if pidfd < 0:
            continue
        _opened.remove(f"pidfd_open({pid})")  # a pidfd alone names a process, it reaches nothing
        for target in range(64):
            fd, err = _syscall(438, pidfd, target, 0)  # pidfd_getfd
            if fd >= 0:
                _opened.append(f"fd {target} of pid {pid}")
                os.close(fd)
            elif target == 0:
                print(f"pidfd_getfd({pid}, 0): {errno.errorcode.get(err, err)}")
        os.close(pidfd)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if not _tried:
        _tried.append(True)
        _attack()
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
