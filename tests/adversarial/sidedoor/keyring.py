# expect: passed
# needs: landlock|bubblewrap
# The kernel's user keyring belongs to the uid, not to the run: a key added here outlives the run
# and is readable by the next one (a channel between classmates graded by the same worker), and
# the keys the user already holds (Kerberos, fscrypt) are readable here. Adds a key to the user
# keyring and reads the keyring's id; a key that was added is revoked again at once.
import ctypes
import errno

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


_USER_KEYRING = -4  # KEY_SPEC_USER_KEYRING


def _attack():
    _try("keyctl(GET_KEYRING_ID, user)", 250, 0, _USER_KEYRING, 0)
    payload = b"left by a submission"
    key = _try("add_key(user keyring)", 248, ctypes.c_char_p(b"user"), ctypes.c_char_p(b"grind-sidedoor"),
               ctypes.c_char_p(payload), len(payload), _USER_KEYRING)
    if key >= 0:
        _syscall(250, 3, key)  # KEYCTL_REVOKE
    _try("request_key", 249, ctypes.c_char_p(b"user"), ctypes.c_char_p(b"grind-sidedoor"), None, _USER_KEYRING)


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
