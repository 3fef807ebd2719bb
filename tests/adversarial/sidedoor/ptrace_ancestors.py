# expect: passed
# needs: landlock|bubblewrap
# ptrace is the way to drive another process: attach to the warm server (or grind, where no
# bubblewrap stands between) and make it run anything. PTRACE_SEIZE on each ancestor, detached at
# once if it worked; also PTRACE_TRACEME, which hands this process to its parent's control.
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


_SEIZE, _DETACH, _TRACEME = 0x4206, 17, 0


def _attack():
    pid = os.getppid()
    while pid > 1:
        if _try(f"ptrace(PTRACE_SEIZE, {pid})", 101, _SEIZE, pid, 0, 0) >= 0:
            _syscall(101, _DETACH, pid, 0, 0)
        try:
            with open(f"/proc/{pid}/stat") as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    _try("ptrace(PTRACE_TRACEME)", 101, _TRACEME, 0, 0, 0)


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
