# expect: passed
# needs: landlock|bubblewrap
# userfaultfd lets a process stall the kernel in the middle of a copy from its memory: the usual
# first step of a kernel exploit, and nothing a training loop needs. Tried as the system call
# (plain and user-mode-only) and as /dev/userfaultfd.
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


def _attack():
    for flags in (0o2000000, 0o2000000 | 1):  # O_CLOEXEC, then with UFFD_USER_MODE_ONLY
        fd = _try(f"userfaultfd({flags:#o})", 323, flags)
        if fd >= 0:
            os.close(fd)
    try:
        os.close(os.open("/dev/userfaultfd", os.O_RDWR))
        _opened.append("/dev/userfaultfd")
    except OSError as exc:
        print(f"/dev/userfaultfd: {exc}")


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
