"""Landlock confinement for the child that runs learner code (Linux), and a sandbox-exec profile
of the same shape for macOS.

Why this exists: rlimits bound what a submission may consume, not what it may touch. Landlock
lets an unprivileged process give up, for itself and every process it starts, the right to open
files outside an allow-list, to use TCP, and to signal processes outside its own sandbox. Once
given up, the rights cannot be taken back, not even by root, so a submission that runs after
:func:`restrict` cannot read the reference solutions, overwrite the learner's files or kill the
judge.

How it is used: the parent computes the paths (:func:`read_roots`, which knows the hidden folders
and the installed packages), passes them to the child as data, and the child calls
:func:`restrict` before any learner code runs and before any thread is started.

Constraints on this file: standard library only, no ``judge`` imports and no relative imports,
because the child loads it by path (``importlib.util.spec_from_file_location``) under
``python -I``, while the parent imports it as ``judge.worker.landlock``. Importing it does
nothing but define names; ``ctypes`` is loaded on the first call that needs the kernel.

The binding below is written from the kernel UAPI (``include/uapi/linux/landlock.h``) and the
landlock(7) man page.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = [
    "LandlockError", "abi", "allow_except", "listable_except", "listable_roots", "macos_profile", "read_roots",
    "restrict",
]


class LandlockError(OSError):
    """The kernel refused to set up the sandbox (or the caller asked for an unsafe one).

    A subclass of OSError so callers that already handle OSError see it, with ``errno`` set when
    the kernel gave one; ``str()`` is a single line naming the step that failed."""


# --- Kernel interface --------------------------------------------------------------------------

# System call numbers. Since Linux 5.1 new system calls share one number on every architecture
# except alpha and the offset MIPS tables, so these serve every machine in _MACHINES. Anything
# else is treated as "no Landlock" rather than guessed: a wrong number runs another system call.
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_MACHINES = frozenset({
    "x86_64", "amd64", "aarch64", "arm64", "i386", "i686", "armv7l", "armv8l",
    "riscv64", "ppc64le", "ppc64", "s390x", "loongarch64",
})

_CREATE_RULESET_VERSION = 1 << 0  # flag: return the ABI version instead of a ruleset
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# The newest ABI this file knows. A newer kernel is used at this level: rights it added are not
# "handled" by our ruleset, which is how Landlock keeps old programs working. ABI 7 added only
# audit-logging flags to landlock_restrict_self; the default (log this program's denials when
# the system audits) is kept, so 7 is handled like 6.
KNOWN_ABI = 7

# File system rights, with the ABI that introduced each one.
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2: link or rename into another directory
FS_TRUNCATE = 1 << 14  # ABI 3: truncate(2), ftruncate(2), open(O_TRUNC)
FS_IOCTL_DEV = 1 << 15  # ABI 5: ioctl(2) on character and block devices

_FS_SINCE = {
    1: FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE
    | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM,
    2: FS_REFER,
    3: FS_TRUNCATE,
    5: FS_IOCTL_DEV,
}

# The kernel rejects (EINVAL) a rule that grants a directory-only right on a file: only these
# apply to a file itself. Everything else concerns a directory's content.
_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV

# Read-only paths: open files for reading and list folders. Execution is added separately.
_READ = FS_READ_FILE | FS_READ_DIR

# Writable paths get every right except making device nodes. A child still running as root has
# CAP_MKNOD: with MAKE_BLOCK it could create a node for the host's disk inside its scratch
# folder and read the raw device, which walks around every rule here. No training code needs
# mknod, so both rights stay handled (denied) everywhere.
_ALL_FS = (1 << 16) - 1  # bits 0 to 15: every right above
_WRITE = _ALL_FS & ~(FS_MAKE_CHAR | FS_MAKE_BLOCK)

NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4

SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6: connect to an abstract unix socket
SCOPE_SIGNAL = 1 << 1  # ABI 6: kill(2) and friends

_libc_handle: Any = None


def _libc() -> Any:
    """The C library, loaded once. ``CDLL(None)`` is the running program's own symbol table,
    which has ``syscall`` and ``prctl`` with glibc and musl alike, without searching for a
    library file (``ctypes.util.find_library`` would start a subprocess)."""
    global _libc_handle
    if _libc_handle is None:
        import ctypes

        handle = ctypes.CDLL(None, use_errno=True)
        handle.syscall.restype = ctypes.c_long
        handle.prctl.restype = ctypes.c_int
        _libc_handle = handle
    return _libc_handle


def _syscall(number: int, name: str, *args: Any) -> int:
    """Run one Landlock system call; a negative result becomes a LandlockError naming it.

    ``syscall`` is variadic, so every argument is passed with an explicit C type: a bare Python
    int would travel as a 32-bit ``int`` and a pointer would be truncated."""
    import ctypes

    result = _libc().syscall(ctypes.c_long(number), *args)
    if result < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"{name} refused: {os.strerror(err)}")
    return int(result)


def _structs() -> tuple[Any, Any]:
    """The UAPI structures this file uses, built on first use so importing it stays cheap.

    There is no ``landlock_net_port_attr``: TCP is denied outright, so no port rule is added.

    The ruleset attribute has grown over time (``handled_access_net`` in ABI 4, ``scoped`` in
    ABI 6); the size passed to the kernel says which fields the caller knows, so an older kernel
    is given only the fields it knows (a larger size with non-zero extra bytes is E2BIG)."""
    import ctypes

    class RulesetAttr(ctypes.Structure):
        _fields_ = [
            ("handled_access_fs", ctypes.c_uint64),
            ("handled_access_net", ctypes.c_uint64),  # ABI 4
            ("scoped", ctypes.c_uint64),  # ABI 6
        ]

    class PathBeneathAttr(ctypes.Structure):
        _pack_ = 1  # packed in the UAPI: 12 bytes, no tail padding
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    return RulesetAttr, PathBeneathAttr


def abi() -> int:
    """The kernel's Landlock ABI version: 0 where Landlock cannot be used.

    0 covers a non-Linux system, an architecture this file has no system call numbers for, a
    kernel built without Landlock or booted with it off (EOPNOTSUPP), and a seccomp filter that
    blocks the call (ENOSYS or EPERM). Never raises: the caller only wants to know which layer
    it can rely on."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        if os.uname().machine not in _MACHINES:
            return 0
        import ctypes

        version = _syscall(_SYS_CREATE_RULESET, "landlock_create_ruleset", ctypes.c_void_p(None),
                           ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except Exception:  # noqa: BLE001 - any failure means "not available"
        return 0
    return max(int(version), 0)


def _fs_rights(version: int) -> int:
    """Every file system right the given ABI knows: the set our ruleset handles (denies unless a
    rule allows it)."""
    rights = 0
    for since, bits in _FS_SINCE.items():
        if version >= since:
            rights |= bits
    return rights


def _thread_count() -> int:
    """The number of threads in this process (1 when it cannot be told)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def restrict(
    read: list[str],
    write: list[str],
    *,
    execute: list[str] | None = None,
    list_only: list[str] | None = None,
    deny_tcp: bool = True,
    scope: bool = True,
) -> int:
    """Confine this process, and every process it starts afterwards, to the given paths.

    - ``read``: open files for reading and list folders beneath these paths; also execute files
      there when ``execute`` is None.
    - ``write``: every right beneath these paths (read, write, create, remove, rename, truncate,
      execute, device ioctl) except creating device nodes (see ``_WRITE``).
    - ``execute``: when given, only files beneath these paths may be executed (they are made
      readable too: the kernel opens a program for reading to run it).
    - ``list_only``: folders that may be listed (their names, and the names beneath them, are
      visible) but whose files may not be opened. :func:`read_roots` needs this for a folder it
      had to split around a hidden one: Python lists every ``sys.path`` folder before importing
      from it, so a split ``site-packages`` must stay listable. See :func:`listable_except`.
    - ``deny_tcp`` (ABI 4): no TCP bind or connect at all. UDP, raw and unix sockets are not
      covered by Landlock; a network namespace is the tool for those.
    - ``scope`` (ABI 6): no signals to, and no connection to abstract unix sockets of, processes
      outside this sandbox. This is what keeps ``os.kill(judge_pid, SIGKILL)`` from working.

    A path may be a file (it then gets only the rights a file can hold) or a device such as
    ``/dev/null``. Paths that do not exist, or that this process cannot reach, are skipped:
    skipping only ever grants less. Landlock has no "deny" rule, so a folder to hide must not
    be under any path given here; :func:`read_roots` takes care of that.

    Landlock confines the calling thread only (and threads and processes it creates later).
    Any other thread already running would stay unconfined, and threads share memory, so this
    refuses to run (LandlockError) in a process that has more than one thread: call it before
    importing numpy or torch, whose thread pools start at import, and before starting a
    watchdog (``faulthandler.dump_traceback_later`` starts a thread).

    Sets PR_SET_NO_NEW_PRIVS first, which Landlock requires of an unprivileged caller and which
    also keeps a set-user-ID program from regaining privileges.

    Returns the ABI level applied (the kernel's, capped at ``KNOWN_ABI``). Raises LandlockError
    when Landlock is unavailable (ABI 0) or the kernel refuses a step: a caller that asked for
    confinement must never silently run without it.
    """
    version = min(abi(), KNOWN_ABI)
    if version < 1:
        raise LandlockError("Landlock is not available on this system (ABI 0)")
    threads = _thread_count()
    if threads > 1:
        raise LandlockError(f"restrict() needs a single-threaded process, this one has {threads} threads")

    import ctypes

    handled_fs = _fs_rights(version)
    RulesetAttr, PathBeneathAttr = _structs()
    attr = RulesetAttr(handled_fs, NET_BIND_TCP | NET_CONNECT_TCP if deny_tcp and version >= 4 else 0,
                       SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if scope and version >= 6 else 0)
    size = 8 if version < 4 else 16 if version < 6 else 24  # only the fields this ABI knows
    grants = _grants(read, write, execute, list_only)

    if _libc().prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), ctypes.c_ulong(0),
                     ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"prctl(PR_SET_NO_NEW_PRIVS) refused: {os.strerror(err)}")

    ruleset = _syscall(_SYS_CREATE_RULESET, "landlock_create_ruleset", ctypes.byref(attr), ctypes.c_size_t(size),
                       ctypes.c_uint32(0))
    try:
        for path, rights in grants:
            _add_path(ruleset, path, rights & handled_fs, PathBeneathAttr)
        _syscall(_SYS_RESTRICT_SELF, "landlock_restrict_self", ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return version


def _grants(read: list[str], write: list[str], execute: list[str] | None,
            list_only: list[str] | None) -> list[tuple[str, int]]:
    """(path, rights) for every path restrict() was given, in its order."""
    runs = FS_EXECUTE if execute is None else 0
    grants: list[tuple[str, int]] = [(path, _READ | runs) for path in read]
    grants += [(path, _READ | FS_EXECUTE) for path in execute or []]
    grants += [(path, FS_READ_DIR) for path in list_only or []]
    grants += [(path, _WRITE) for path in write]
    return grants


def _add_path(ruleset: int, path: str, rights: int, PathBeneathAttr: Any) -> None:
    """Allow ``rights`` beneath ``path``; a file keeps only the rights valid for a file.

    The path is opened with O_PATH, which needs no read permission and opens nothing; the rule
    then belongs to the inode, so later renames or symlinks cannot move it."""
    import ctypes
    import stat

    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= _FILE_RIGHTS
        if not rights:
            return  # e.g. list_only on a file: nothing to allow (the kernel refuses an empty rule)
        rule = PathBeneathAttr(rights, fd)
        try:
            _syscall(_SYS_ADD_RULE, "landlock_add_rule", ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                     ctypes.byref(rule), ctypes.c_uint32(0))
        except LandlockError as exc:
            raise LandlockError(exc.errno, f"landlock_add_rule({path}) refused: {os.strerror(exc.errno or 0)}") from None
    finally:
        os.close(fd)


# --- Which paths to allow -------------------------------------------------------------------

_SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys")
# Not all of /dev: a child that still runs as root could read a raw disk (/dev/sda) and find the
# solutions in it. Importing and running torch on the CPU opens only /dev/null and /dev/urandom
# (checked with strace); the rest are the usual harmless ones. A GPU needs its device files
# (/dev/nvidia*) in ``write``: the driver opens them read-write and drives them with ioctl.
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
_PACKAGES = ("numpy", "torch", "safetensors")


def _within(path: str, folder: str) -> bool:
    """Is ``path`` the folder itself or beneath it? Compared by components, so ``/a/solutions2``
    is not within ``/a/solutions``. Both must be normalized absolute paths."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _carve(roots: list[str], hidden: list[str]) -> tuple[list[str], list[str]]:
    """Split ``roots`` around ``hidden``: (paths to allow, folders that were split).

    A root that contains a hidden folder cannot be allowed whole (Landlock cannot deny beneath
    an allowed path), so it is replaced by its entries, and so on down to the hidden folder,
    which is left out. Every path is resolved first, because a rule follows the real inode. An
    entry that resolves outside the folder being split (a symlink elsewhere, into a hidden
    folder or back up the tree) is dropped: the whole folder's rule would not have covered its
    target either. A folder that cannot be listed is dropped whole: granting less is always
    safe. Only the ancestors of a hidden folder are ever split, so the result stays short (one
    entry per name in each folder on the way down).
    """
    secret = sorted({os.path.realpath(h) for h in hidden})
    allowed: set[str] = set()
    split: set[str] = set()

    def visit(path: str) -> None:
        if not os.path.exists(path) or any(_within(path, h) for h in secret):
            return
        if not any(_within(h, path) for h in secret):
            allowed.add(path)
            return
        if path in split:
            return
        split.add(path)
        try:
            names = os.listdir(path)
        except OSError:
            return
        for name in sorted(names):
            real = os.path.realpath(os.path.join(path, name))
            if real != path and _within(real, path):
                visit(real)

    for root in roots:
        visit(os.path.realpath(root))
    return _outermost(allowed), sorted(split)


def _outermost(paths: set[str]) -> list[str]:
    """Sorted, without any path that an ancestor in the set already covers."""
    kept = []
    for path in sorted(paths):
        parent = path
        covered = False
        while parent != "/":
            parent = os.path.dirname(parent)
            if parent in paths:
                covered = True
                break
        if not covered:
            kept.append(path)
    return kept


def allow_except(roots: list[str], hidden: list[str]) -> list[str]:
    """The paths to allow so that everything under ``roots`` is reachable except the ``hidden``
    folders: roots that contain a hidden folder are replaced by their entries, recursively.

    Resolved (realpath), deduplicated, and without paths an allowed ancestor already covers.
    Roots that do not exist are dropped. Pure apart from reading the file system."""
    return _carve(roots, hidden)[0]


def listable_except(roots: list[str], hidden: list[str]) -> list[str]:
    """The folders :func:`allow_except` had to split: pass them as ``restrict(list_only=...)``.

    Python lists a ``sys.path`` folder before importing from it and finds nothing if it cannot
    (``FileFinder._fill_cache``). With a regular install the solutions live under
    ``site-packages/judge/_content``, so ``site-packages`` is split, and without the right to
    list it ``import numpy`` would fail. Listing a folder grants its names and the names
    beneath it (hidden ones included) but no file contents; names were never secret under
    Landlock anyway, since stat(2) is not restricted."""
    return _carve(roots, hidden)[1]


def _candidate_roots(extra: list[str]) -> list[str]:
    """What a Python child running torch reads, before any carving: system folders and a few
    devices, the interpreter's prefixes and site-packages, and the folders of the packages the
    worker imports (found without importing them: the parent must not load torch)."""
    import importlib.util
    import site

    roots = [p for p in _SYSTEM + _DEVICES if os.path.exists(p)]
    roots += [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    try:
        roots += site.getsitepackages()
    except AttributeError:  # an old virtualenv's site.py
        pass
    for name in _PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        roots += list(spec.submodule_search_locations or [])
        if spec.origin and os.path.isabs(spec.origin):
            roots.append(os.path.dirname(spec.origin))
    return roots + list(extra)


def read_roots(hidden: list[str], extra: list[str] | None = None) -> list[str]:
    """The read-only paths for a Python child running torch, with ``hidden`` carved out.

    Computed in the parent (which knows where the solutions, the reference cache and other
    learners' files are) and handed to the child as data. ``extra`` adds folders the caller
    knows the child reads (the worker's own folder with an editable install, an exercise
    folder); they are carved the same way. Pass :func:`listable_roots` of the same arguments as
    ``restrict(list_only=...)``."""
    return allow_except(_candidate_roots(extra or []), hidden)


def listable_roots(hidden: list[str], extra: list[str] | None = None) -> list[str]:
    """The folders :func:`read_roots` split around ``hidden``, for ``restrict(list_only=...)``."""
    return listable_except(_candidate_roots(extra or []), hidden)


# --- macOS -----------------------------------------------------------------------------------


def _sbpl_string(path: str) -> str:
    """A path as an SBPL string literal (backslash and double quote escaped)."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def macos_profile(read: list[str], write: list[str]) -> str:
    """A sandbox-exec (SBPL) profile with the same shape as :func:`restrict`, for macOS.

    Deny by default; allow running and forking processes, reading sysctls and looking up the
    Mach services Python needs; read files only under ``read``, write only under ``write``; no
    network; signals only to the process itself and its children. Metadata (stat) is allowed
    everywhere, as under Landlock: Python stats every parent folder while importing.

    Untested: it cannot run on the Linux machines this was written on. It is deliberately
    small so that a reviewer can check it by eye; paths are resolved (``/tmp`` is
    ``/private/tmp`` on macOS) because the sandbox matches real paths.
    """

    def subpaths(paths: list[str]) -> str:
        return " ".join(f"(subpath {_sbpl_string(os.path.realpath(p))})" for p in paths)

    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec process-fork)",
        "(allow sysctl-read)",
        "(allow mach-lookup)",
        "(allow file-read-metadata)",
        "(allow signal (target self))",
        "(allow signal (target children))",
        "(deny network*)",
    ]
    if read or write:
        lines.append(f"(allow file-read* {subpaths(list(read) + list(write))})")
    if write:
        lines.append(f"(allow file-write* {subpaths(write)})")
    return "\n".join(lines) + "\n"
