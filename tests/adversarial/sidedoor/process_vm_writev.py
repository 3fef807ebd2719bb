# expect: passed
# needs: landlock|bubblewrap
# process_vm_readv/writev read and write another process's memory without ptrace-attaching to it.
# A fork of the warm server shares its address layout, so an address valid here is valid there:
# the attack reads 8 bytes of each ancestor at the address of one of its own buffers and, if
# that worked, writes the same 8 bytes back (proof of write access that changes nothing).
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


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


_MARK = ctypes.create_string_buffer(b"grind-sd", 8)


def _attack():
    seen = ctypes.create_string_buffer(8)
    local = _IoVec(ctypes.addressof(seen), 8)
    remote = _IoVec(ctypes.addressof(_MARK), 8)
    pid = os.getppid()
    while pid > 1:
        got, err = _syscall(310, pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        if got == 8:
            _opened.append(f"process_vm_readv({pid})")
            _try(f"process_vm_writev({pid})", 311, pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        elif err == errno.EFAULT:  # the address is not mapped there: the kernel let this process look
            _opened.append(f"process_vm_readv({pid}) reached its memory")
        else:
            print(f"process_vm_readv({pid}): {errno.errorcode.get(err, err)}")
        try:
            with open(f"/proc/{pid}/stat") as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return


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
