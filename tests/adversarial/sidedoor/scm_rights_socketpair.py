# expect: passed
# needs: landlock|bubblewrap
# socketpair(AF_UNIX) is left to a child (multiprocessing and asyncio make connected pairs), so
# this checks that a pair cannot become a way out: an end cannot be connect()ed or sendto()'d to
# the sockets named in BAIT (grind's tests listen there, and answer a connection with a
# descriptor over SCM_RIGHTS), a datagram pair (which could sendto any datagram socket by path) cannot be made,
# and SCM_RIGHTS over a pair carries only descriptors this process already has. Any socket it
# finds among its descriptors that it did not make is a door left open by whoever started it.
import ctypes
import errno
import os
import socket
import stat

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


def _inherited_sockets():
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if stat.S_ISSOCK(os.fstat(int(name)).st_mode):
                found.append(f"{name} -> {os.readlink('/proc/self/fd/' + name)}")
        except OSError:
            pass
    return found


def _receive_fd(sock):
    sock.settimeout(2)
    try:
        _, fds, _, _ = socket.recv_fds(sock, 64, 4)
    except OSError:
        return
    if fds:
        _opened.append(f"received {len(fds)} descriptor(s) from outside")


def _attack():
    for found in _inherited_sockets():
        _opened.append(f"inherited socket {found}")
    path = BAIT.get("unix")
    try:
        left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as exc:
        print(f"socketpair(SOCK_STREAM): {exc}")
    else:
        with left, right, open(os.devnull, "rb") as mine:  # its own descriptor travels: that is allowed
            socket.send_fds(left, [b"x"], [mine.fileno()])
            print("SCM_RIGHTS over a pair of its own:", len(socket.recv_fds(right, 1, 1)[1]), "descriptor")
            for name, attempt in (("connect", lambda: left.connect(path)), ("sendto", lambda: left.sendto(b"x", path))):
                if not path:
                    continue
                try:
                    attempt()
                    _opened.append(f"stream pair {name} reached {path}")
                    _receive_fd(left)
                except OSError as exc:
                    print(f"stream pair {name}: {exc}")
    for kind in ("SOCK_DGRAM", "SOCK_SEQPACKET"):
        try:
            left, right = socket.socketpair(socket.AF_UNIX, getattr(socket, kind))
        except OSError as exc:
            print(f"socketpair({kind}): {exc}")
            continue
        with left, right:
            if kind == "SOCK_DGRAM":
                _opened.append("a datagram pair")  # it could sendto any datagram socket by name
            target = BAIT.get("unix_dgram") if kind == "SOCK_DGRAM" else path
            if target:
                try:
                    left.sendto(b"reached through a socketpair", target)
                except OSError as exc:
                    print(f"{kind} pair sendto: {exc}")
                    continue
                right.setblocking(False)
                try:
                    right.recv(64)  # a seqpacket pair ignores the address: it went to its own other end
                    print(f"{kind} pair sendto: the address was ignored, the pair's other end got it")
                except BlockingIOError:
                    _opened.append(f"{kind} pair sendto reached {target}")
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as exc:
        print(f"socket(AF_UNIX): {exc}")
        return
    with sock:
        _opened.append("socket(AF_UNIX)")
        if path:
            try:
                sock.connect(path)
                _opened.append(f"connected to {path}")
                _receive_fd(sock)
            except OSError as exc:
                print(f"connect: {exc}")


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
