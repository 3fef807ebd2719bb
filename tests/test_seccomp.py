"""The seccomp filter every sandboxed child runs under (judge/worker/kernel.py:seccomp_filter),
and the side doors it keeps shut.

Two kinds of test:

- the filter on its own, in a fresh process that installs it and then probes, with a control
  taken in the same process just before (so a refusal cannot be the machine's doing);
- the hostile submissions of ``tests/adversarial/sidedoor/``, graded by grind cold and warm at
  the isolation level in force, while this test listens on the services they aim at: a unix
  socket with a path and two abstract ones (as the same user as the child, reachable by it were
  the filter gone), and a TCP and a UDP service on the host's 127.0.0.1. Each file answers
  correctly only if every door it tries stays shut, and a listener that hears from it fails the
  test whatever the verdict.

The attack files use x86_64 system call numbers; elsewhere they are skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
LANDLOCK = ROOT / "judge" / "worker" / "landlock.py"
KERNEL = ROOT / "judge" / "worker" / "kernel.py"  # the seccomp filter, beside Landlock
SIDEDOOR = ROOT / "tests" / "adversarial" / "sidedoor"
ATTACKS = sorted(SIDEDOOR.glob("*.py"))


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ll = _load(LANDLOCK, "grind_landlock_seccomp_test")
kl = _load(KERNEL, "grind_kernel_seccomp_test")
MACHINE = platform.machine()
linux_x86_64 = pytest.mark.skipif(
    not sys.platform.startswith("linux") or MACHINE != "x86_64",
    reason=f"SECCOMP TESTS NOT RUN: they use x86_64 system call numbers, this is {sys.platform}/{MACHINE}")


# --- The program itself -------------------------------------------------------------------------


@pytest.mark.parametrize("machine", sorted(kl._SECCOMP_ARCHES))
@pytest.mark.parametrize("inet", [True, False])
def test_the_program_assembles_for_every_known_machine(machine: str, inet: bool) -> None:
    numbers = kl._SECCOMP_ARCHES[machine][1]
    refused = {name for names in kl.REFUSED.values() for name in names}
    missing = refused - set(numbers)
    assert missing <= (kl.X86_ONLY if machine != "x86_64" else set()), missing
    assert len(set(numbers.values())) == len(numbers), "two calls share a number"
    assert max(numbers.values()) <= kl._NEWEST
    program = kl.seccomp_program(machine, inet)
    assert 0 < len(program) < 4096  # BPF_MAXINSNS
    assert all(0 <= jt < 256 and 0 <= jf < 256 for _, jt, jf, _ in program)


def test_the_two_tables_differ_only_where_the_kernel_s_do() -> None:
    x86, arm = kl._SECCOMP_ARCHES["x86_64"][1], kl._SECCOMP_ARCHES["aarch64"][1]
    assert x86.keys() - kl.X86_ONLY == arm.keys() and kl.X86_ONLY <= x86.keys()
    assert {name for name in arm if x86[name] == arm[name]} == set(kl._SHARED_NUMBERS)
    # a few numbers checked against the kernel's tables by hand (arch/x86/entry/syscalls, asm-generic)
    assert (x86["socket"], arm["socket"], x86["clone"], arm["clone"], x86["unshare"], arm["unshare"]) == (
        41, 198, 56, 220, 272, 97)


# --- The filter in a fresh process ----------------------------------------------------------------

# Loads kernel.py by path, probes each call before and after seccomp_filter(inet=...), prints JSON.
PROBE = r"""
import ctypes, importlib.util, json, os, socket, subprocess, sys, threading
spec = importlib.util.spec_from_file_location("grind_kernel", sys.argv[1])
kl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kl)
args = json.loads(sys.argv[2])
nr = kl._SECCOMP_ARCHES["x86_64"][1]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def call(number, *values):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(v) if isinstance(v, int) else v for v in values])
    if result >= 0:
        return "ok"
    return os.strerror(ctypes.get_errno())

def pair(kind):
    fds = (ctypes.c_int * 2)()
    return call(nr["socketpair"], socket.AF_UNIX, kind | socket.SOCK_CLOEXEC, 0, fds)

def in_child(number, *values):
    # a call that would change this process if it worked runs in a throwaway fork
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        me = os.getpid()
        result = call(number, *values)
        if os.getpid() != me:  # the clone it made, if it made one
            os._exit(0)
        os.write(w, result.encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    return os.read(r, 200).decode()

def udp_to_host():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(b"over UDP", ("127.0.0.1", args["udp"]))
    return "ok"

def probes():
    out = {}
    ring = ctypes.create_string_buffer(120)
    out["io_uring_setup"] = call(nr["io_uring_setup"], 4, ring)
    out["io_uring_enter"] = call(nr["io_uring_enter"], -1, 0, 0, 0, 0, 0)
    out["io_uring_register"] = call(nr["io_uring_register"], -1, 0, 0, 0)
    aio = ctypes.c_ulong(0)
    out["io_setup"] = call(nr["io_setup"], 8, ctypes.byref(aio))
    out["io_submit"] = call(nr["io_submit"], 0, 0, 0)
    # SIGCHLD ignored: the kernel reaps children, whose writes then reach no one's count
    act = (ctypes.c_ulong * 4)(1, 0, 0, 0)  # SIG_IGN
    out["sigchld_set"] = in_child(nr["rt_sigaction"], 17, act, 0, 8)
    old = (ctypes.c_ulong * 4)()
    out["sigchld_read"] = call(nr["rt_sigaction"], 17, 0, old, 8)
    out["sigusr1_set"] = in_child(nr["rt_sigaction"], 10, act, 0, 8)
    for name, family, kind, proto in (("unix", 1, 1, 0), ("unix_dgram", 1, 2, 0), ("inet_tcp", 2, 1, 0),
                                      ("inet_udp", 2, 2, 0), ("inet6_udp", 10, 2, 0), ("netlink_route", 16, 3, 0),
                                      ("netlink_sock_diag", 16, 3, 4), ("packet", 17, 2, 0), ("vsock", 40, 1, 0),
                                      ("alg", 38, 5, 0)):
        out["socket_" + name] = call(nr["socket"], family, kind | socket.SOCK_CLOEXEC, proto)
    out["socketpair_stream"] = pair(socket.SOCK_STREAM)
    out["socketpair_seqpacket"] = pair(socket.SOCK_SEQPACKET)
    out["socketpair_dgram"] = pair(socket.SOCK_DGRAM)
    out["socketpair_inet"] = call(nr["socketpair"], 2, 1, 0, (ctypes.c_int * 2)())
    try:
        out["udp_to_host"] = udp_to_host()
    except OSError as exc:
        out["udp_to_host"] = exc.strerror
    out["unshare_user"] = in_child(nr["unshare"], 0x10000000)
    out["unshare_files"] = in_child(nr["unshare"], 0x400)  # CLONE_FILES: no namespace, still refused
    out["clone_newuser"] = in_child(nr["clone"], 0x10000000 | 17, 0, 0, 0, 0)
    out["clone_newnet"] = in_child(nr["clone"], 0x40000000 | 17, 0, 0, 0, 0)
    clone_args = (ctypes.c_uint64 * 11)(0, 0, 0, 0, 17)
    out["clone3"] = in_child(nr["clone3"], clone_args, 88)
    out["setns"] = call(nr["setns"], -1, 0)
    pidfd = libc.syscall(ctypes.c_long(nr["pidfd_open"]), ctypes.c_long(os.getppid()), ctypes.c_long(0))
    out["pidfd_open"] = "ok" if pidfd >= 0 else "refused"
    out["pidfd_getfd"] = call(nr["pidfd_getfd"], pidfd, 0, 0)
    buf = ctypes.create_string_buffer(8)
    iov = (ctypes.c_uint64 * 2)(ctypes.addressof(buf), 8)
    out["process_vm_readv"] = call(nr["process_vm_readv"], os.getppid(), iov, 1, iov, 1, 0)
    out["process_vm_writev"] = call(nr["process_vm_writev"], os.getppid(), iov, 1, iov, 1, 0)
    out["ptrace_peek"] = call(nr["ptrace"], 2, os.getppid(), 0, 0)  # PTRACE_PEEKDATA: ESRCH unless refused
    out["kcmp"] = call(nr["kcmp"], os.getpid(), os.getppid(), 0, 0, 0)
    out["userfaultfd"] = call(nr["userfaultfd"], 0o2000000 | 1)
    out["bpf"] = call(nr["bpf"], 0, None, 0)
    out["perf_event_open"] = call(nr["perf_event_open"], None, 0, -1, -1, 0)
    out["keyctl"] = call(nr["keyctl"], 0, -4, 0)
    out["add_key"] = call(nr["add_key"], None, None, None, 0, -2)
    out["request_key"] = call(nr["request_key"], None, None, None, 0)
    out["fanotify_init"] = call(nr["fanotify_init"], 0, 0)
    out["name_to_handle_at"] = call(nr["name_to_handle_at"], -100, None, None, None, 0)
    out["open_by_handle_at"] = call(nr["open_by_handle_at"], -1, None, 0)
    out["mount"] = call(nr["mount"], None, None, None, 0, None)
    out["umount2"] = call(nr["umount2"], None, 0)
    out["chroot"] = call(nr["chroot"], None)
    out["pivot_root"] = call(nr["pivot_root"], None, None)
    for name in ("fsopen", "fspick", "open_tree", "move_mount", "fsconfig", "fsmount", "mount_setattr",
                 "open_tree_attr", "process_madvise"):
        out[name] = call(nr[name], -1, None, 0, 0, 0, 0)
    out["number_470"] = call(470)
    out["prlimit_own"] = call(nr["prlimit64"], 0, 7, None, ctypes.create_string_buffer(16))
    # a file's metadata, on a file of this very user's (Landlock governs none of it)
    path = TARGET.encode()
    fd = os.open(TARGET, os.O_RDONLY)
    try:
        out["chmod"] = call(nr["chmod"], path, 0o640)
        out["fchmod"] = call(nr["fchmod"], fd, 0o640)
        out["fchmodat"] = call(nr["fchmodat"], -100, path, 0o640)
        out["fchmodat2"] = call(nr["fchmodat2"], -100, path, 0o640, 0)
        out["chown"] = call(nr["chown"], path, -1, -1)
        out["fchown"] = call(nr["fchown"], fd, -1, -1)
        out["lchown"] = call(nr["lchown"], path, -1, -1)
        out["fchownat"] = call(nr["fchownat"], -100, path, -1, -1, 0)
        out["utime"] = call(nr["utime"], path, None)
        out["utimes"] = call(nr["utimes"], path, None)
        out["futimesat"] = call(nr["futimesat"], -100, path, None)
        out["utimensat"] = call(nr["utimensat"], -100, path, None, 0)
        for name in ("setxattr", "lsetxattr"):
            out[name] = call(nr[name], path, b"user.grind", b"x", 1, 0)
        out["fsetxattr"] = call(nr["fsetxattr"], fd, b"user.grind", b"x", 1, 0)
        for name in ("removexattr", "lremovexattr"):
            out[name] = call(nr[name], path, b"user.grind")
        out["fremovexattr"] = call(nr["fremovexattr"], fd, b"user.grind")
        out["setxattrat"] = call(nr["setxattrat"], -100, path, 0, b"user.grind", None, 0)
        out["removexattrat"] = call(nr["removexattrat"], -100, path, 0, b"user.grind")
        out["file_setattr"] = call(nr["file_setattr"], -100, path, None, 0, 0)
        flags = ctypes.c_long(0)
        out["ioctl_getflags"] = call(nr["ioctl"], fd, 0x80086601, ctypes.byref(flags))  # FS_IOC_GETFLAGS: free
        out["ioctl_setflags"] = call(nr["ioctl"], fd, 0x40086602, ctypes.byref(flags))  # the same flags back
        out["ioctl_fssetxattr"] = call(nr["ioctl"], fd, 0x401C5820, ctypes.create_string_buffer(28))
        out["ioctl_fionread"] = call(nr["ioctl"], fd, 0x541B, ctypes.byref(ctypes.c_int(0)))  # FIONREAD: free
        lock = ctypes.create_string_buffer(32)  # struct flock: F_RDLCK (0) over the whole file
        out["fcntl_getlk"] = call(nr["fcntl"], fd, 5, lock)
        out["fcntl_setlk"] = call(nr["fcntl"], fd, 6, ctypes.create_string_buffer(32))
        out["fcntl_ofd_setlk"] = call(nr["fcntl"], fd, 37, ctypes.create_string_buffer(32))
        out["fcntl_setlease"] = call(nr["fcntl"], fd, 1024, 0)  # F_RDLCK
        call(nr["fcntl"], fd, 1024, 2)  # F_UNLCK: the control's lease let go
        out["fcntl_getfl"] = call(nr["fcntl"], fd, 3)  # F_GETFL: free
        out["flock"] = call(73, fd, 1 | 4)  # LOCK_SH | LOCK_NB: gloo's FileStore locks this way
        call(73, fd, 8)  # LOCK_UN
        out["fadvise_dontneed"] = call(nr["fadvise64"], fd, 0, 0, 4)  # drops the file from the host's cache
        out["fadvise_willneed"] = call(nr["fadvise64"], fd, 0, 0, 3)  # reads ahead: free
    finally:
        os.close(fd)
    # another process's scheduling: a sleeper of this test's own, and this process itself
    out["ioprio_set_self"] = call(nr["ioprio_set"], 1, 0, (2 << 13) | 4)  # who 0: itself, best effort 4
    mask = (ctypes.c_ulong * 16)(*([~0 & 0xFFFFFFFFFFFFFFFF] + [0] * 15))
    out["sched_setaffinity_other"] = call(nr["sched_setaffinity"], SLEEPER.pid, ctypes.sizeof(mask), mask)
    out["sched_setaffinity_self"] = call(nr["sched_setaffinity"], 0, ctypes.sizeof(mask), mask)
    out["migrate_pages_other"] = call(nr["migrate_pages"], SLEEPER.pid, 0, None, None)
    # counted per user or host, not per run
    out["memfd_create"] = call(nr["memfd_create"], b"grind", 1)  # MFD_CLOEXEC
    segment = libc.syscall(ctypes.c_long(nr["shmget"]), ctypes.c_long(0), ctypes.c_long(4096), ctypes.c_long(0o1600))
    out["shmget"] = "ok" if segment >= 0 else os.strerror(ctypes.get_errno())
    if segment >= 0:
        libc.syscall(ctypes.c_long(31), ctypes.c_long(segment), ctypes.c_long(0), None)  # shmctl IPC_RMID
    queue = libc.syscall(ctypes.c_long(nr["msgget"]), ctypes.c_long(0), ctypes.c_long(0o1600))
    out["msgget"] = "ok" if queue >= 0 else os.strerror(ctypes.get_errno())
    if queue >= 0:
        libc.syscall(ctypes.c_long(71), ctypes.c_long(queue), ctypes.c_long(0), None)  # msgctl IPC_RMID
    out["inotify_init1"] = call(nr["inotify_init1"], 0o2000000)
    out["inotify_init"] = call(nr["inotify_init"])
    out["move_pages_other"] = call(nr["move_pages"], SLEEPER.pid, 0, None, None, None, 0)
    return out

import tempfile
_handle, TARGET = tempfile.mkstemp(prefix="grind-seccomp-")
os.close(_handle)  # a read lease needs the file open for writing nowhere
SLEEPER = subprocess.Popen(["sleep", "60"])

results = {"before": probes()}
kl.seccomp_filter(inet=args["inet"])
results["after"] = probes()
# What a child must still do: threads (glibc tries clone3, then clone), processes, subprocesses.
done = []
thread = threading.Thread(target=lambda: done.append(1))
thread.start()
thread.join()
results["thread"] = bool(done)
pid = os.fork()
if pid == 0:
    os._exit(3)
results["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
results["subprocess"] = subprocess.run(["/bin/true"]).returncode
SLEEPER.kill()
print(json.dumps(results))
"""

REFUSED_ALWAYS = [
    "io_uring_setup", "io_uring_enter", "io_uring_register", "socket_unix", "socket_unix_dgram",
    "socket_netlink_sock_diag", "socket_packet", "socket_vsock", "socket_alg", "socketpair_dgram", "socketpair_inet",
    "unshare_user", "unshare_files", "clone_newuser", "clone_newnet", "setns", "pidfd_getfd", "process_vm_readv",
    "process_vm_writev", "ptrace_peek", "kcmp", "userfaultfd", "bpf", "perf_event_open", "keyctl", "add_key",
    "request_key", "fanotify_init", "name_to_handle_at", "open_by_handle_at", "mount", "umount2", "chroot",
    "pivot_root", "fsopen", "fspick", "open_tree", "move_mount", "fsconfig", "fsmount", "mount_setattr",
    "open_tree_attr", "process_madvise", "io_setup", "io_submit", "sigchld_set",
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes", "futimesat",
    "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "setxattrat",
    "removexattrat", "file_setattr", "ioprio_set_self", "sched_setaffinity_other", "migrate_pages_other",
    "move_pages_other", "ioctl_setflags", "ioctl_fssetxattr", "fcntl_setlk", "fcntl_ofd_setlk", "fcntl_setlease",
    "shmget", "msgget", "inotify_init1", "inotify_init", "fadvise_dontneed",
]
INET = ["socket_inet_tcp", "socket_inet_udp", "socket_inet6_udp", "socket_netlink_route", "udp_to_host"]
EPERM, ENOSYS = os.strerror(1), os.strerror(38)


@pytest.fixture()
def udp_listener() -> Iterator[tuple[int, list[bytes]]]:
    heard: list[bytes] = []
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.2)

    def listen() -> None:
        while sock.fileno() >= 0:
            try:
                heard.append(sock.recv(64))
            except OSError:
                if sock.fileno() < 0:
                    return

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    yield sock.getsockname()[1], heard
    sock.close()
    thread.join(timeout=2)


@linux_x86_64
@pytest.mark.parametrize("inet", [True, False], ids=["own-network", "host-network"])
def test_the_filter_refuses_every_side_door(inet: bool, udp_listener: tuple[int, list[bytes]]) -> None:
    """``inet`` True: the child has a network namespace of its own (bubblewrap's, or the one it
    made), where IP sockets reach only the run's loopback. False: it shares the host's, where
    Landlock stops TCP but not UDP, so the filter refuses every IP socket, and a datagram to a
    service on the host's 127.0.0.1 (this test's) must never arrive."""
    port, heard = udp_listener
    proc = subprocess.run([sys.executable, "-I", "-c", PROBE, str(KERNEL), json.dumps({"inet": inet, "udp": port})],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    before, after = results["before"], results["after"]
    # Controls: what worked before the filter (a refusal after it is then the filter's doing).
    for name in ("io_uring_setup", "socket_unix", "socketpair_dgram", "socket_inet_udp", "udp_to_host", "io_setup",
                 "sigchld_set", "chmod", "fchmod", "chown", "utimensat", "utime", "ioprio_set_self",
                 "sched_setaffinity_other", "fcntl_setlk", "fcntl_setlease", "memfd_create", "shmget", "msgget",
                 "inotify_init1", "fadvise_dontneed"):
        assert before[name] == "ok", f"control {name} failed, the check proves nothing: {before[name]}"
    wrong = {name: after[name] for name in REFUSED_ALWAYS if after[name] != EPERM}
    assert not wrong, f"not refused with EPERM after the filter: {wrong}"
    assert after["clone3"] == ENOSYS and after["number_470"] == ENOSYS and after["memfd_create"] == ENOSYS
    for name in INET:
        assert after[name] == ("ok" if inet else EPERM), (name, after[name])
    for name in ("socketpair_stream", "socketpair_seqpacket", "prlimit_own", "pidfd_open", "sigchld_read", "sigusr1_set",
                 "sched_setaffinity_self", "ioctl_getflags", "ioctl_fionread", "fcntl_getlk", "fcntl_getfl", "flock",
                 "fadvise_willneed"):
        assert after[name] == "ok", (name, after[name])
    assert results["thread"] and results["fork"] == 3 and results["subprocess"] == 0, results
    # The control's datagram arrives; the one sent under the filter only where it was allowed here
    # (this test shares the host's network: the child's own namespace would keep it in).
    expected = 2 if inet else 1
    deadline = time.monotonic() + 2
    while len(heard) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    assert heard == [b"over UDP"] * expected, heard


# Landlock's own scoping (ABI 6), without the filter: the layer under it also stops abstract
# sockets, so a hole in one layer is not a way out.
SCOPED = r"""
import importlib.util, json, socket, sys
spec = importlib.util.spec_from_file_location("grind_landlock", sys.argv[1])
ll = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ll)
name = "\0" + json.loads(sys.argv[2])["name"]
def attempts():
    out = {}
    for kind in ("stream", "dgram_sendto"):
        try:
            if kind == "stream":
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.connect(name)
            else:
                left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
                with left, right:
                    left.sendto(b"x", name + "-dgram")
            out[kind] = "ok"
        except OSError as exc:
            out[kind] = exc.strerror
    return out
before = attempts()
ll.restrict(["/usr"], ["/dev/null"])
print(json.dumps({"before": before, "after": attempts()}))
"""


@pytest.mark.skipif(ll.abi() < 6, reason=f"Landlock scoping needs ABI >= 6; this kernel has {ll.abi()}")
def test_landlock_scoping_alone_keeps_abstract_sockets_out_of_reach() -> None:
    name = f"grind-sidedoor-scope-{os.getpid()}"
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stream.bind("\0" + name)
    stream.listen(4)
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind("\0" + name + "-dgram")
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", SCOPED, str(LANDLOCK), json.dumps({"name": name})],
                              capture_output=True, text=True, timeout=60)
    finally:
        stream.close()
        dgram.close()
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    assert results["before"] == {"stream": "ok", "dgram_sendto": "ok"}, results
    assert results["after"] == {"stream": EPERM, "dgram_sendto": EPERM}, results


def test_doctor_says_which_layer_stops_the_side_doors() -> None:
    from judge.worker.isolation import doctor, isolation

    info = doctor()
    stops = {line.split(":", 1)[0]: line for line in info["stops"]}
    assert set(stops) <= set(info["layers"]), (stops, info["layers"])
    if isolation().landlock_abi and MACHINE in kl._SECCOMP_ARCHES:
        assert "seccomp" in info["layers"]
        assert all(word in stops["seccomp"] for word in ("unix sockets", "io_uring", "namespaces", "UDP"))
        network = "no private network" if "no private network" in info["layers"] else "private network"
        assert info["level"] == "bubblewrap" or network in stops, info["layers"]


# --- Hostile submissions, graded by grind ---------------------------------------------------------


class Bait:
    """Services a submission must not reach, run by this test (same user as grind): a unix
    socket with a path (world-writable, in a folder anyone can enter, as a careless service's
    would be) and its datagram twin, two abstract sockets, and TCP and UDP on 127.0.0.1. Whatever
    reaches one is recorded; the unix one answers a connection with a descriptor (SCM_RIGHTS)."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="grind-sidedoor-", dir="/tmp")
        os.chmod(self.folder, 0o755)
        self.heard: list[str] = []
        self.sockets: list[socket.socket] = []
        tag = f"grind-sidedoor-{os.getpid()}"
        self.unix = self._listen(socket.AF_UNIX, socket.SOCK_STREAM, os.path.join(self.folder, "service.sock"))
        self.unix_dgram = self._listen(socket.AF_UNIX, socket.SOCK_DGRAM, os.path.join(self.folder, "log.sock"))
        self.abstract = self._listen(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + tag)
        self.abstract_dgram = self._listen(socket.AF_UNIX, socket.SOCK_DGRAM, "\0" + tag + "-dgram")
        self.tcp = self._listen(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0))
        self.udp = self._listen(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
        for path in (self.unix, self.unix_dgram):
            os.chmod(path, 0o777)
        # a file of this user's outside every run: its mode, times and attributes must not move
        self.file = os.path.join(self.folder, "notes.txt")
        with open(self.file, "w") as handle:
            handle.write("the grader's own file\n")
        os.chmod(self.file, 0o644)
        os.utime(self.file, (1_000_000_000, 1_000_000_000))
        self.file_was = self._file_state()

    def _file_state(self) -> tuple[Any, ...]:
        info = os.stat(self.file)
        try:
            attributes = sorted(os.listxattr(self.file))
        except OSError:
            attributes = []
        return info.st_mode, info.st_uid, info.st_gid, info.st_mtime_ns, info.st_ctime_ns, attributes

    def file_changes(self) -> list[str]:
        """What changed in the bait file's metadata since it was made (ctime moves on any change)."""
        now = self._file_state()
        names = ("mode", "owner", "group", "mtime", "ctime", "xattrs")
        return [f"{name}: {was} -> {is_}" for name, was, is_ in zip(names, self.file_was, now) if was != is_]

    def _listen(self, family: int, kind: int, address: Any) -> Any:
        sock = socket.socket(family, kind)
        sock.bind(address)
        sock.settimeout(0.2)
        if kind == socket.SOCK_STREAM:
            sock.listen(8)
        self.sockets.append(sock)
        threading.Thread(target=self._serve, args=(sock, kind), daemon=True).start()
        name = sock.getsockname()
        if family == socket.AF_INET:
            return name[1]
        return name.decode() if isinstance(name, bytes) else name

    def _serve(self, sock: socket.socket, kind: int) -> None:
        label = repr(sock.getsockname())
        while sock.fileno() >= 0:
            try:
                if kind == socket.SOCK_DGRAM:
                    data, sender = sock.recvfrom(128)
                    self.heard.append(f"{label} <- {data!r}")
                    if sender:
                        sock.sendto(b"pong", sender)
                    continue
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                self.heard.append(f"{label} <- a connection")
                if conn.family == socket.AF_UNIX:
                    with open(os.devnull, "rb") as handle:
                        try:
                            socket.send_fds(conn, [b"fd"], [handle.fileno()])
                        except OSError:
                            pass

    def addresses(self) -> dict[str, Any]:
        return {"unix": self.unix, "unix_dgram": self.unix_dgram, "abstract": self.abstract[1:],
                "abstract_dgram": self.abstract_dgram[1:], "tcp": self.tcp, "udp": self.udp, "file": self.file}

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def bait() -> Iterator[Bait]:
    services = Bait()
    yield services
    services.close()


@pytest.fixture(scope="module")
def warm_worker() -> Iterator[Any]:
    """One warm worker grades every attack in turn, as one server grades a class."""
    from judge.catalog import Catalog
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    with WarmWorker(hidden_from_learners(Catalog().get("clipping"))) as worker:
        yield worker


def test_the_baits_are_reachable_without_a_sandbox(bait: Bait) -> None:
    """The control: from an ordinary process of this user, every bait answers."""
    bait.heard.clear()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(bait.unix)
        assert socket.recv_fds(sock, 8, 1)[1], "the unix bait hands out a descriptor"
    for address in (bait.unix_dgram, bait.abstract_dgram):
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(b"control", address)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(bait.abstract)
    socket.create_connection(("127.0.0.1", bait.tcp), timeout=2).close()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(2)
        sock.sendto(b"control", ("127.0.0.1", bait.udp))
        assert sock.recv(8) == b"pong"
    deadline = time.monotonic() + 5  # the bait's threads note what they heard after the sender returns
    while len(bait.heard) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(bait.heard) == 6, bait.heard


def _with_bait(path: Path, bait: Bait, folder: Path) -> Path:
    source = path.read_text()
    assert source.count("BAIT = {}") == 1, f"{path.name} must hold one 'BAIT = {{}}' line"
    learner = folder / "clipping.py"
    learner.write_text(source.replace("BAIT = {}", f"BAIT = {bait.addresses()!r}"))
    os.chmod(folder, 0o755)
    os.chmod(learner, 0o644)
    return learner


@linux_x86_64
@pytest.mark.parametrize("attack", ATTACKS, ids=[p.stem for p in ATTACKS])
def test_a_side_door_stays_shut_cold_and_warm(attack: Path, bait: Bait, warm_worker: Any, tmp_path: Path) -> None:
    from judge.catalog import Catalog
    from judge.grade import grade
    from judge.worker.isolation import isolation

    level = isolation().level
    if level not in ("bubblewrap", "landlock"):
        pytest.skip(f"{attack.name}: no sandbox at level {level}: see README security model")
    learner = _with_bait(attack, bait, tmp_path)
    exercise = Catalog().get("clipping")
    bait.heard.clear()
    cold = grade(exercise, learner)
    warm = grade(exercise, learner, worker=warm_worker)
    said = {mode: next((line for line in verdict.stdout.splitlines() if line.startswith("GRIND-SIDEDOOR")),
                       "(no report)") for mode, verdict in (("cold", cold), ("warm", warm))}
    for mode, verdict in (("cold", cold), ("warm", warm)):  # the record: how each attempt ended (pytest -s)
        print(f"\n{attack.stem} {mode} at {level}: {verdict.status.value}: " + "; ".join(verdict.stdout.splitlines()))
    assert not bait.heard, f"{attack.name} reached a service of the host: {bait.heard}"
    assert not bait.file_changes(), f"{attack.name} changed a file outside its run: {bait.file_changes()}"
    for mode, verdict in (("cold", cold), ("warm", warm)):
        assert verdict.status.value == "passed", (mode, verdict.status.value, verdict.message, verdict.stdout[-2000:])
        assert said[mode].startswith("GRIND-SIDEDOOR shut"), (mode, verdict.stdout[-2000:])


@linux_x86_64
@pytest.mark.parametrize("attack", ATTACKS, ids=[p.stem for p in ATTACKS])
def test_bubblewrap_without_landlock_still_shuts_every_side_door(attack: Path, bait: Bait, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel without Landlock (older than 5.13, or built without it) under bubblewrap: the
    seccomp filter's doors (unix sockets by path, io_uring, other processes' descriptors...) are
    not ones a mount namespace shuts, so the runner installs the filter there too. Simulated by
    telling grind the kernel has no Landlock; the child then gets the filter and no Landlock."""
    from judge.catalog import Catalog
    from judge.grade import grade
    from judge.worker import isolation as isolation_module

    if isolation_module.isolation().level != "bubblewrap":
        pytest.skip(f"{attack.name}: needs bubblewrap (level here: {isolation_module.isolation().level})")
    monkeypatch.setattr(isolation_module, "_probe_landlock", lambda: 0)
    isolation_module.isolation.cache_clear()
    try:
        iso = isolation_module.isolation()
        assert iso.level == "bubblewrap" and not iso.landlock_abi and "seccomp" in iso.layers, iso.layers
        learner = _with_bait(attack, bait, tmp_path)
        bait.heard.clear()
        verdict = grade(Catalog().get("clipping"), learner)  # no worker: a cold run, as the test wants
    finally:
        monkeypatch.undo()
        isolation_module.isolation.cache_clear()
    print(f"\n{attack.stem} cold at bubblewrap without landlock: {verdict.status.value}: "
          + "; ".join(verdict.stdout.splitlines()))
    assert not bait.heard, f"{attack.name} reached a service of the host: {bait.heard}"
    assert not bait.file_changes(), f"{attack.name} changed a file outside its run: {bait.file_changes()}"
    assert verdict.status.value == "passed", (verdict.status.value, verdict.message, verdict.stdout[-2000:])
    assert "GRIND-SIDEDOOR shut" in verdict.stdout, verdict.stdout[-2000:]
