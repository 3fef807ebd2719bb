# expect: passed
# needs: landlock|bubblewrap
# perf_event_open watches other processes (their instructions, their page faults) and is a
# frequent door into the kernel. A software clock counter on the parent, then on itself.
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
    attr = ctypes.create_string_buffer(128)  # struct perf_event_attr
    ctypes.memmove(attr, (ctypes.c_uint32 * 2)(1, 128), 8)  # PERF_TYPE_SOFTWARE, size; config 0: cpu-clock
    for pid in (os.getppid(), 0):
        fd = _try(f"perf_event_open(pid {pid})", 298, attr, pid, -1, -1, 0)
        if fd >= 0:
            os.close(fd)


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
