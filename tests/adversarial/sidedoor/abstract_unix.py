# expect: passed
# needs: landlock|bubblewrap
# An abstract unix socket has no file: no path rule can cover it, only a network namespace or
# Landlock's scoping (ABI 6). grind's tests listen on the abstract names in BAIT (a stream and a
# datagram socket), and any such name this network namespace shows in /proc/net/unix is tried
# too: with a plain socket of each kind, and with sendto from a datagram pair.
import ctypes
import errno
import socket

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


def _names():
    names = ["\0" + BAIT[key] for key in ("abstract", "abstract_dgram") if BAIT.get(key)]
    try:
        with open("/proc/net/unix") as table:
            for line in list(table)[1:]:
                parts = line.split()
                if len(parts) >= 8 and parts[7].startswith("@grind-sidedoor"):
                    names.append("\0" + parts[7][1:])
    except OSError as exc:
        print(f"/proc/net/unix: {exc}")
    return sorted(set(names))


def _attack():
    for name in _names():
        shown = "@" + name[1:]
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
            try:
                sock = socket.socket(socket.AF_UNIX, kind)
            except OSError as exc:
                print(f"socket(AF_UNIX, {kind}): {exc}")
                continue
            with sock:
                try:
                    sock.connect(name)
                    sock.send(b"reached an abstract socket")
                    _opened.append(f"connected to {shown}")
                except OSError as exc:
                    print(f"connect {shown}: {exc}")
        try:
            left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        except OSError as exc:
            print(f"socketpair(SOCK_DGRAM): {exc}")
            continue
        with left, right:
            try:
                left.sendto(b"reached an abstract socket", name)
                _opened.append(f"datagram pair reached {shown}")
            except OSError as exc:
                print(f"sendto {shown}: {exc}")


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
