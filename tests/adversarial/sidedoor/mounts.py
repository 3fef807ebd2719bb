# expect: passed
# needs: landlock|bubblewrap
# The mount family rearranges what paths mean (a tmpfs over a folder, a bind of a hidden one
# somewhere visible), and chroot with a crafted tree fools programs that trust paths. Tries
# mount(2) on a folder of its own (unmounted again if it worked), the new mount API (fsopen,
# open_tree, fspick) and chroot.
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
    here = os.getcwd().encode()
    target = os.path.join(here, b"mnt")
    os.makedirs(target, exist_ok=True)
    if _try("mount(tmpfs)", 165, ctypes.c_char_p(b"none"), ctypes.c_char_p(target), ctypes.c_char_p(b"tmpfs"), 0,
            None) == 0:
        _syscall(166, ctypes.c_char_p(target), 2)  # umount2(MNT_DETACH): only ever its own mount
    for name, number, args in (("fsopen(tmpfs)", 430, (ctypes.c_char_p(b"tmpfs"), 1)),
                               ("open_tree(/)", 428, (-100, ctypes.c_char_p(b"/"), 1 | 0o2000000)),
                               ("fspick(/)", 433, (-100, ctypes.c_char_p(b"/"), 1))):
        fd = _try(name, number, *args)
        if fd >= 0:
            os.close(fd)
    _try("chroot(.)", 161, ctypes.c_char_p(here))


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
