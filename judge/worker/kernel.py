"""The kernel's other locks on a confined child, beside Landlock (landlock.py): the seccomp filter
(the doors Landlock does not see, shut by system call number), a private network namespace (so
TCP can be let through to the run's own loopback only), and no capabilities (a child started as
root is only a user id).

The same constraints as landlock.py: standard library only, no ``judge`` imports and no
relative imports, because the child loads it by path under ``python -I`` (and tests load it
alone), while the parent imports it as ``judge.worker.kernel``. Importing it does nothing but
define names; ``ctypes`` is loaded on the first call that needs the kernel. (It loads the C
library itself rather than through landlock.py, which it cannot import: ten lines twice.)
"""

from __future__ import annotations

import os
import sys
from typing import Any

_PR_SET_NO_NEW_PRIVS = 38


class KernelError(OSError):
    """The kernel refused a lock: one line naming the step, with ``errno`` set."""


_libc_handle: Any = None


def _libc() -> Any:
    """The C library, loaded once (see landlock._libc: the running program's own symbol table)."""
    global _libc_handle
    if _libc_handle is None:
        import ctypes

        handle = ctypes.CDLL(None, use_errno=True)
        handle.syscall.restype = ctypes.c_long
        handle.prctl.restype = ctypes.c_int
        _libc_handle = handle
    return _libc_handle


_PR_CAPBSET_READ = 23
_PR_CAPBSET_DROP = 24
_CAP_VERSION_3 = 0x20080522


_CLONE_NEWUSER, _CLONE_NEWNET, _CLONE_NEWIPC = 0x10000000, 0x40000000, 0x08000000
# Every CLONE_NEW* flag clone(2) accepts: mount, cgroup, UTS, IPC, user, PID and network
# namespaces. (CLONE_NEWTIME, 0x80, exists only for unshare and clone3, both refused outright.)
_CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | _CLONE_NEWIPC | _CLONE_NEWUSER | 0x20000000 | _CLONE_NEWNET

# --- seccomp ------------------------------------------------------------------------------------
#
# Landlock decides which files a child may open, whether it may use TCP and whom it may signal.
# What it does not see, the seccomp filter below refuses, by system call number. The filter is a
# deny-list of numbers because a torch child makes hundreds of different calls that change with
# every torch and glibc release; but the questions it answers are allow-lists:
#
# - which socket families may a child create? AF_INET and AF_INET6 (gloo's TCP between the ranks,
#   on the run's own loopback) and NETLINK_ROUTE (glibc asks it which address families exist),
#   and only where the child has a network namespace of its own; nothing else, ever. AF_UNIX
#   only as a connected pair (below);
# - which calls reach something outside the run without opening a file? None: io_uring (which
#   creates and connects sockets without socket() or connect()), another process's descriptors
#   (pidfd_getfd) or memory (process_vm_*, ptrace), kernel objects shared by every process of
#   the user (keyrings, BPF maps, perf events, fanotify), file handles that skip path checks;
# - which namespaces may it make or enter? None once confined (the run's own network namespace
#   is made before the filter goes on): no unshare, setns, clone with a CLONE_NEW* flag, clone3,
#   mount or chroot;
# - which numbers does it know? A call newer than this table (above _NEWEST) answers ENOSYS, as
#   an older kernel would: a future io_uring-like door stays shut until someone reads what it does.
#
# Since Linux 5.1 new calls share one number on every architecture (io_uring, pidfd_*, clone3,
# the new mount API); older ones differ between x86_64 and aarch64 (the generic table).
_SHARED_NUMBERS = {
    "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "open_tree_attr": 467, "fchmodat2": 452, "setxattrat": 463, "removexattrat": 466, "file_setattr": 469,
    "memfd_secret": 447,
}
_SECCOMP_ARCHES = {
    "x86_64": (0xC000003E, {
        "socket": 41, "socketpair": 53, "clone": 56, "ptrace": 101, "setpriority": 141, "sched_setparam": 142,
        "sched_setscheduler": 144, "pivot_root": 155, "chroot": 161, "mount": 165, "umount2": 166,
        "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
        "fanotify_init": 300, "prlimit64": 302, "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308,
        "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "sched_setattr": 314, "bpf": 321,
        "userfaultfd": 323, "rt_sigaction": 13, "io_setup": 206, "io_destroy": 207, "io_getevents": 208,
        "io_submit": 209, "io_cancel": 210, "io_pgetevents": 333,
        "chmod": 90, "fchmod": 91, "fchmodat": 268, "chown": 92, "fchown": 93, "lchown": 94, "fchownat": 260,
        "utime": 132, "utimes": 235, "futimesat": 261, "utimensat": 280, "setxattr": 188, "lsetxattr": 189,
        "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "ioprio_set": 251,
        "sched_setaffinity": 203, "migrate_pages": 256, "move_pages": 279, "ioctl": 16, "fcntl": 72,
        "memfd_create": 319, "shmget": 29, "msgget": 68, "inotify_init": 253, "inotify_init1": 294,
        "fadvise64": 221, **_SHARED_NUMBERS,
    }),
    "aarch64": (0xC00000B7, {
        "socket": 198, "socketpair": 199, "clone": 220, "ptrace": 117, "setpriority": 140, "sched_setparam": 118,
        "sched_setscheduler": 119, "pivot_root": 41, "chroot": 51, "mount": 40, "umount2": 39,
        "add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97, "perf_event_open": 241,
        "fanotify_init": 262, "prlimit64": 261, "name_to_handle_at": 264, "open_by_handle_at": 265, "setns": 268,
        "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "sched_setattr": 274, "bpf": 280,
        "userfaultfd": 282, "rt_sigaction": 134, "io_setup": 0, "io_destroy": 1, "io_submit": 2, "io_cancel": 3,
        "io_getevents": 4, "io_pgetevents": 292,
        "fchmod": 52, "fchmodat": 53, "fchown": 55, "fchownat": 54, "utimensat": 88, "setxattr": 5,
        "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16, "ioprio_set": 30,
        "sched_setaffinity": 122, "migrate_pages": 238, "move_pages": 239, "ioctl": 29, "fcntl": 25,
        "memfd_create": 279, "shmget": 194, "msgget": 186, "inotify_init1": 26, "fadvise64": 223,
        **_SHARED_NUMBERS,
    }),
}
# The old path calls the generic table (aarch64) never had: there only their *at forms exist.
X86_ONLY = frozenset({"chmod", "chown", "lchown", "utime", "utimes", "futimesat", "inotify_init"})
_NEWEST = 469  # file_setattr (Linux 6.17): the last number this table has been checked against
# Refused outright, whatever the arguments, grouped by the door each one is.
REFUSED = {
    "io_uring": ("io_uring_setup", "io_uring_enter", "io_uring_register"),
    # Linux AIO writes a file from the kernel's side: the bytes reach the file without passing
    # through the run's write count (wchar), which grind's witness reads (witness.py)
    "asynchronous I/O that no write count sees": ("io_setup", "io_destroy", "io_submit", "io_cancel",
                                                  "io_getevents", "io_pgetevents"),
    "another process's memory or descriptors": ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
                                                "kcmp", "process_madvise"),
    "kernel objects shared beyond the run": ("keyctl", "add_key", "request_key", "bpf", "perf_event_open",
                                             "userfaultfd", "fanotify_init"),
    "namespaces and mounts": ("unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig",
                              "fsmount", "fspick", "open_tree", "move_mount", "mount_setattr", "open_tree_attr"),
    "file handles, which skip every path check": ("name_to_handle_at", "open_by_handle_at"),
    # Landlock governs reading, writing, making and removing files, not a file's mode, owner,
    # times or extended attributes, wherever it is: a child that runs as root (no capabilities,
    # but the owner of every root-owned file) made a copy of /usr/bin/id setuid root, and under
    # bubblewrap changed the mode of the host's /dev/full; an unprivileged one made the class
    # folder it was graded from unreadable, which stopped the grade. No check needs them.
    "a file's mode, owner, times and attributes (which Landlock does not govern)": (
        "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
        "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
        "fremovexattr", "setxattrat", "removexattrat", "file_setattr"),
    # another process's I/O priority (a review set grind's own to idle, and it stayed there)
    "another process's I/O priority": ("ioprio_set",),
    # what is counted per user or per host, not per run: System V segments and queues hold memory
    # no rlimit of the run counts until attached, and inotify instances are the user's (128 by
    # default: a review's run took every one, and the user's editor and other tools got EMFILE
    # while it lived)
    "memory and instances counted outside the run": ("shmget", "msgget", "inotify_init", "inotify_init1"),
}
# Answered ENOSYS, "this kernel has no such call", so that a library falls back as it does on an
# old kernel (asmjit, in fbgemm, tries a memfd for its code before shm_open): a memfd's pages are
# counted neither by RLIMIT_AS (never mapped) nor by the run's disk (not on its tmpfs), and a
# review held 4.6 GB in them past a 4 GB limit.
NO_SUCH_CALL = ("memfd_create", "memfd_secret")
_FADV_DONTNEED = 4  # posix_fadvise(..., POSIX_FADV_DONTNEED) drops a file's pages from the host's cache
# ioctl(2) requests that change a file's attributes or its file system's keys, which a file's owner
# may make on a file opened only for reading (a review's root child set NODUMP|NOATIME|SYNC on
# root-owned files at the landlock level): the same door as file_setattr, by another call.
REFUSED_IOCTLS = {
    "FS_IOC_SETFLAGS": 0x40086602, "FS_IOC32_SETFLAGS": 0x40046602, "FS_IOC_SETVERSION": 0x40087602,
    "FS_IOC32_SETVERSION": 0x40047602, "FS_IOC_FSSETXATTR": 0x401C5820, "FS_IOC_SETFSLABEL": 0x41009432,
    "FS_IOC_SET_ENCRYPTION_POLICY": 0x800C6613, "FS_IOC_ADD_ENCRYPTION_KEY": 0xC0506617,
    "FS_IOC_REMOVE_ENCRYPTION_KEY": 0xC0406618, "FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS": 0xC0406619,
    "FS_IOC_ENABLE_VERITY": 0x40806685,
}
# fcntl(2) commands that hold up other processes on files the child can merely read: a lease
# (F_SETLEASE: a review's write lease on torch's __init__.py stalled every `import torch` on the
# host while the run lived, and one on /etc/passwd every reader) and a POSIX record lock
# (a shared lock on /etc/.pwd.lock stalled useradd and passwd). flock(2) stays: gloo's FileStore,
# the distributed cases' rendezvous, locks with it, and lckpwdf and its kind use record locks.
REFUSED_FCNTLS = {"F_SETLK": 6, "F_SETLKW": 7, "F_OFD_SETLK": 37, "F_OFD_SETLKW": 38, "F_SETLEASE": 1024}
_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK = 1, 2, 10, 16
_SIGCHLD = 17  # x86_64 and aarch64 alike
_NETLINK_ROUTE, _SOCK_DGRAM, _SOCK_TYPE_MASK = 0, 2, 0xF
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data; the arguments follow, 8 bytes each, from 16
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW


def _errno(code: int) -> int:
    """SECCOMP_RET_ERRNO with ``code``: the call fails with that errno and never runs."""
    return 0x00050000 | code


def _arg(index: int) -> int:
    """Offset of an argument's low 32 bits (little-endian: x86_64 and aarch64 alike)."""
    return 16 + 8 * index


def _assemble(lines: list[tuple[Any, ...]]) -> list[tuple[int, int, int, int]]:
    """Classic BPF from a few mnemonics with named jump targets (None: fall through):
    ("ld", offset), ("and", mask), ("jeq"/"jge"/"jset", value, if_true, if_false), ("ret", value),
    ("label", name)."""
    codes = {"ld": 0x20, "and": 0x54, "jeq": 0x15, "jge": 0x35, "jset": 0x45, "ret": 0x06}
    where, count = {}, 0
    for line in lines:
        if line[0] == "label":
            where[line[1]] = count
        else:
            count += 1
    program, index = [], 0
    for line in lines:
        if line[0] == "label":
            continue
        op = line[0]
        if op in ("jeq", "jge", "jset"):
            _, value, yes, no = line
            hop = [0 if target is None else where[target] - index - 1 for target in (yes, no)]
            assert all(0 <= h < 256 for h in hop), line
            program.append((codes[op], hop[0], hop[1], value))
        else:
            program.append((codes[op], 0, 0, line[1]))
        index += 1
    return program


def seccomp_program(machine: str, inet: bool) -> list[tuple[int, int, int, int]]:
    """The filter for ``machine`` (``uname -m``) as classic BPF instructions; see the comment
    above ``_SHARED_NUMBERS`` for what it refuses and why. ``inet``: the child has a network
    namespace of its own (bubblewrap's or :func:`private_network`'s), so IP sockets reach only
    the run's loopback; without one they would reach the host's 127.0.0.1 over UDP (Landlock
    covers TCP only), so every IP and netlink socket is refused."""
    arch, nr = _SECCOMP_ARCHES[machine]
    eperm = _errno(1)
    lines: list[tuple[Any, ...]] = [
        ("ld", _ARCH), ("jeq", arch, None, "eperm"),  # a foreign ABI (32-bit compat): refused
        ("ld", _NR), ("jge", 0x40000000, "eperm", None),  # x32 system calls: refused
        ("jge", _NEWEST + 1, "enosys", None),  # newer than this table: "no such call", as an older kernel says
        ("jeq", nr["socket"], "socket", None),
        ("jeq", nr["socketpair"], "socketpair", None),
        ("jeq", nr["clone"], "clone", None),
        ("jeq", nr["clone3"], "enosys", None),  # glibc then uses clone(), whose flags this filter can read
        ("jeq", nr["rt_sigaction"], "sigaction", None),
        ("jeq", nr["prlimit64"], "prlimit", None),
        ("jeq", nr["setpriority"], "setpriority", None),
        ("jeq", nr["sched_setscheduler"], "other_pid", None),
        ("jeq", nr["sched_setparam"], "other_pid", None),
        ("jeq", nr["sched_setattr"], "other_pid", None),
        # the CPUs and memory nodes another process runs on: only its own (pid 0)
        ("jeq", nr["sched_setaffinity"], "other_pid", None),
        ("jeq", nr["migrate_pages"], "other_pid", None),
        ("jeq", nr["move_pages"], "other_pid", None),
        ("jeq", nr["ioctl"], "ioctl", None),
        ("jeq", nr["fcntl"], "fcntl", None),
        ("jeq", nr["fadvise64"], "fadvise", None),
    ]
    lines += [("jeq", nr[name], "enosys", None) for name in NO_SUCH_CALL]
    lines += [("jeq", nr[name], "eperm", None) for names in REFUSED.values() for name in names if name in nr]
    lines += [
        ("ret", _ALLOW),
        # socket(family, type, protocol): an allow-list of families
        ("label", "socket"), ("ld", _arg(0)),
        ("jeq", _AF_INET, "inet", None), ("jeq", _AF_INET6, "inet", None),
        ("jeq", _AF_NETLINK, None, "eperm"), ("ld", _arg(2)), ("jeq", _NETLINK_ROUTE, "inet", "eperm"),
        ("label", "inet"), ("ret", _ALLOW if inet else eperm),
        # socketpair(AF_UNIX, ...): a connected stream or seqpacket pair reaches only its other end; a
        # datagram one could sendto() any datagram socket by path (journald, syslog) or abstract name
        ("label", "socketpair"), ("ld", _arg(0)), ("jeq", _AF_UNIX, None, "eperm"),
        ("ld", _arg(1)), ("and", _SOCK_TYPE_MASK), ("jeq", _SOCK_DGRAM, "eperm", "allow"),
        ("label", "clone"), ("ld", _arg(0)), ("jset", _CLONE_NEW_ANY, "eperm", "allow"),
        # rt_sigaction(SIGCHLD, act, ...): reading is free, setting is refused. A process whose
        # SIGCHLD is ignored (or SA_NOCLDWAIT) has its children reaped by the kernel, and their
        # writes are then added to no one's count: a hidden second writer of a checkpoint was
        # reaped that way and passed. Nothing a run does needs a SIGCHLD handler.
        ("label", "sigaction"), ("ld", _arg(0)), ("jeq", _SIGCHLD, None, "allow"),
        ("ld", _arg(1)), ("jeq", 0, None, "eperm"), ("ld", _arg(1) + 4), ("jeq", 0, "allow", "eperm"),
        ("label", "prlimit"), ("ld", _arg(0)), ("jeq", 0, "allow", None),  # its own: pid 0
        ("ld", _arg(2)), ("jeq", 0, None, "eperm"), ("ld", _arg(2) + 4), ("jeq", 0, "allow", "eperm"),  # only reads
        ("label", "setpriority"), ("ld", _arg(0)), ("jeq", 0, None, "eperm"),  # PRIO_PROCESS only,
        ("ld", _arg(1)), ("jeq", 0, "allow", "eperm"),  # and who 0: itself
        ("label", "other_pid"), ("ld", _arg(0)), ("jeq", 0, "allow", "eperm"),
        ("label", "ioctl"), ("ld", _arg(1)),
        *[("jeq", request, "eperm", None) for request in REFUSED_IOCTLS.values()],
        ("ret", _ALLOW),
        ("label", "fcntl"), ("ld", _arg(1)),
        *[("jeq", command, "eperm", None) for command in REFUSED_FCNTLS.values()],
        ("ret", _ALLOW),
        # evicting pages of files others use (torch's, the interpreter's) from the host's cache
        ("label", "fadvise"), ("ld", _arg(3)), ("jeq", _FADV_DONTNEED, "eperm", "allow"),
        ("label", "allow"), ("ret", _ALLOW),
        ("label", "eperm"), ("ret", eperm),
        ("label", "enosys"), ("ret", _errno(38)),
    ]
    return _assemble(lines)


def seccomp_filter(inet: bool = False) -> bool:
    """Install :func:`seccomp_program` on this process and everything it starts. True if set;
    False where this file has no table for the machine (another architecture, not Linux).

    Why each door is shut, from what submissions did:

    - unix sockets: one with a path is reached through the file system, and neither Landlock
      (up to ABI 8) nor a network namespace stops ``connect()`` to it. A submission drove the
      user's tmux server through its socket in /tmp and read the reference (as root under
      bubblewrap, outside the sandbox); ssh-agent, D-Bus, X11 and docker.sock are the same kind
      of door. io_uring's socket operation made the same socket without ``socket()``, so
      io_uring is refused too. Nothing a child runs needs either: gloo's ranks use TCP on their
      own loopback and the runner's pipes are ``pipe()``.
    - other processes' limits: a child runs as the same user as the warm server (and, without
      bubblewrap, as grind itself), and Landlock does not cover ``prlimit``: a submission lowered
      the server's RLIMIT_FSIZE to 0 and every classmate graded after it by that server crashed.
      ``prlimit64`` with another pid and a new limit, ``setpriority`` other than on itself, and
      ``sched_setscheduler``/``sched_setparam``/``sched_setattr``/``sched_setaffinity`` and
      ``migrate_pages``/``move_pages`` on another pid, and ``ioprio_set`` at all, are refused;
      the process's own limits, priority and scheduling stay its own to change.
    - a file's metadata: Landlock does not govern mode, owner, times or extended attributes, so
      a child running as root (the owner of every root-owned file) could make any of them
      setuid, and any child could make the folder it is graded from unreadable. Refused, with
      the ioctl requests that set a file's flags (``REFUSED_IOCTLS``).
    - other processes' access to files the child can read: a lease or a record lock on one
      stalls them while the run lives (``REFUSED_FCNTLS``). Refused.
    - UDP: without a network namespace of its own (``inet`` False) a child's datagrams reach the
      host's loopback, which Landlock (TCP only) does not stop.

    Needs no_new_privs (set here; Landlock has set it already). A filter cannot be removed, and
    a process's later filters only add refusals, so a warm server's forks keep it."""
    import ctypes
    import platform

    if not sys.platform.startswith("linux") or platform.machine() not in _SECCOMP_ARCHES:
        return False
    program = seccomp_program(platform.machine(), inet)

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(program))(*[Filter(*op) for op in program])
    fprog = Program(len(program), filters)
    libc = _libc()
    libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
               ctypes.c_ulong(0))
    if libc.prctl(ctypes.c_int(22), ctypes.c_ulong(2), ctypes.byref(fprog), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise KernelError(err, f"seccomp filter refused: {os.strerror(err)}")
    return True


_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def private_network() -> bool:
    """Move this process into a user and a network namespace of its own, whose only interface is
    an up loopback: TCP can then be allowed without reaching anything outside the run (not the
    host's 127.0.0.1, where a database or a notebook may listen). True when done.

    Any user may do this where the kernel allows unprivileged user namespaces (most laptops;
    not every container); bubblewrap's ``--unshare-net`` gives the same. It must run while the
    process has one thread, before Landlock (whose rules then allow TCP) and before capabilities
    are dropped (bringing ``lo`` up takes CAP_NET_ADMIN, which the new namespace grants, over
    that namespace only). The user and group ids are mapped to themselves, so files keep
    their owners; nothing in the host's namespaces becomes reachable."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import fcntl
    import socket
    import struct

    uid, gid = os.getuid(), os.getgid()
    # IPC too: System V shared memory and message queues are per IPC namespace, and a child left
    # in the host's read the user's other segments (an X11 screen buffer) and left its own behind.
    if _libc().unshare(ctypes.c_int(_CLONE_NEWUSER | _CLONE_NEWNET | _CLONE_NEWIPC)) != 0:
        return False  # unprivileged user namespaces off, or threads already running
    try:
        for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", f"{uid} {uid} 1"),
                           ("/proc/self/gid_map", f"{gid} {gid} 1")):
            with open(path, "w") as handle:
                handle.write(text)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = struct.pack("16sH14s", b"lo", 0, b"")
            flags = struct.unpack("16sH14s", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
            fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | _IFF_UP, b""))
    except OSError:
        return False  # a namespace with its loopback down: TCP goes nowhere, and stays denied
    return True


def drop_capabilities() -> None:
    """Drop every capability of this process (bounding set, then effective, permitted and
    inheritable), so a child started as root is only a user id.

    Why: a Landlock-confined process that still holds CAP_SYS_ADMIN may read
    ``/proc/<pid>/environ`` and ``/proc/<pid>/maps`` of processes outside its sandbox (measured on
    Linux 6.18), and root in a container usually holds it. Landlock does the rest. A no-op for a
    process without capabilities; raises LandlockError if the kernel refuses."""
    import ctypes

    libc = _libc()
    for cap in range(64):
        held = libc.prctl(ctypes.c_int(_PR_CAPBSET_READ), ctypes.c_ulong(cap), ctypes.c_ulong(0),
                          ctypes.c_ulong(0), ctypes.c_ulong(0))
        if held < 0:  # EINVAL: past the last capability this kernel knows
            break
        if held and libc.prctl(ctypes.c_int(_PR_CAPBSET_DROP), ctypes.c_ulong(cap), ctypes.c_ulong(0),
                               ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
            if os.geteuid() != 0:
                break  # without CAP_SETPCAP the bounding set cannot change, and grants nothing to a non-root uid
            err = ctypes.get_errno()
            raise KernelError(err, f"prctl(PR_CAPBSET_DROP) refused: {os.strerror(err)}")
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable for both 32-bit halves: all zero
    if libc.capset(ctypes.byref(header), ctypes.byref(data)) != 0:
        err = ctypes.get_errno()
        raise KernelError(err, f"capset refused: {os.strerror(err)}")
