# expect: passed
# needs: landlock|bubblewrap
# A file handle names an inode without its path: open_by_handle_at opens it with no path walk,
# so no folder's permissions (and no path-based rule) is consulted on the way. Gets a handle
# for / and for the interpreter, then tries to open them by handle.
import ctypes
import errno
import os
import sys

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
    for path in (b"/", sys.executable.encode()):
        handle = ctypes.create_string_buffer(8 + 128)
        ctypes.memmove(handle, (ctypes.c_uint32 * 1)(128), 4)  # handle_bytes
        mount_id = ctypes.c_int()
        got = _try(f"name_to_handle_at({path.decode()})", 303, -100, ctypes.c_char_p(path), handle,
                   ctypes.byref(mount_id), 0)
        fd = _try(f"open_by_handle_at({path.decode()})", 304, -100, handle, 0)  # AT_FDCWD: this file system
        if fd >= 0:
            os.close(fd)
        del got


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
