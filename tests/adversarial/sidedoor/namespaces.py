# expect: passed
# needs: landlock|bubblewrap
# A new user namespace gives back every capability (inside it), and with them mounts, a fresh
# /proc, network interfaces and the kernel surface that goes with them. Tries unshare with each
# namespace flag, clone() with CLONE_NEWUSER (a child that exits at once), clone3, and setns
# into the parent's namespaces.
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


_FLAGS = {"NEWUSER": 0x10000000, "NEWNS": 0x00020000, "NEWNET": 0x40000000, "NEWPID": 0x20000000,
          "NEWIPC": 0x08000000, "NEWUTS": 0x04000000, "NEWCGROUP": 0x02000000, "NEWTIME": 0x00000080}
_SIGCHLD = 17


def _attack():
    pid = os.fork()  # the unshare attempts run in a throwaway child: a success must not change this one
    if pid == 0:
        found = [name for name, flag in _FLAGS.items() if _syscall(272, flag)[0] == 0]
        os._exit(len(found))
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status):
        _opened.append(f"unshare ({os.waitstatus_to_exitcode(status)} kinds)")
    else:
        print("unshare: every flag refused")
    child = _try("clone(CLONE_NEWUSER)", 56, _FLAGS["NEWUSER"] | _SIGCHLD, 0, 0, 0, 0)
    if child == 0:
        os._exit(0)
    if child > 0:
        os.waitpid(child, 0)
    args = (ctypes.c_uint64 * 11)(_FLAGS["NEWUSER"], 0, 0, 0, _SIGCHLD)  # struct clone_args
    child = _try("clone3(CLONE_NEWUSER)", 435, args, 88)
    if child == 0:
        os._exit(0)
    if child > 0:
        os.waitpid(child, 0)
    for kind in ("net", "mnt", "user"):
        try:
            fd = os.open(f"/proc/{os.getppid()}/ns/{kind}", os.O_RDONLY)
        except OSError as exc:
            print(f"/proc/{os.getppid()}/ns/{kind}: {exc}")
            fd = os.open(f"/proc/self/ns/{kind}", os.O_RDONLY)
        _try(f"setns({kind})", 308, fd, 0)
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
