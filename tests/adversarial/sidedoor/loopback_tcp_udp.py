# expect: passed
# needs: landlock|bubblewrap
# The host's 127.0.0.1 is where a notebook, a database or another student's service listens.
# grind's tests open a TCP and a UDP service there (ports in BAIT; the UDP one answers every
# datagram). A run's loopback must be its own: this connects over TCP, sends a UDP datagram and
# waits for the answer, and tries a raw ICMP "ping" socket.
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


def _attack():
    if BAIT.get("tcp"):
        try:
            with socket.create_connection(("127.0.0.1", BAIT["tcp"]), timeout=2) as conn:
                conn.sendall(b"reached over TCP")
                _opened.append(f"TCP 127.0.0.1:{BAIT['tcp']}")
        except OSError as exc:
            print(f"TCP: {exc}")
    if BAIT.get("udp"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.settimeout(1)
                sock.sendto(b"reached over UDP", ("127.0.0.1", BAIT["udp"]))
                _opened.append(f"UDP 127.0.0.1:{BAIT['udp']} answered {sock.recv(64)!r}")
        except OSError as exc:
            print(f"UDP: {exc}")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP) as ping:
            ping.settimeout(1)
            ping.sendto(b"\x08\0\0\0\0\0\0\0", ("127.0.0.1", 0))
            print("ping socket made (reaches only this run's loopback where it has one)")
    except OSError as exc:
        print(f"ICMP socket: {exc}")


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
