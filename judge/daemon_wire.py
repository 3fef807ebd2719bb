"""What both ends of the per-user daemon share: its key, its socket, the framing, the messages.

The client (judge.daemon, loaded by every ``grind run``) and the server (judge.daemon_server,
the daemon process) each import this and nothing of the other. Standard library only, plus
grind's version and the sandbox settings that key a daemon.

Trust (see judge.daemon for the whole picture): only JSON crosses the socket, in frames of a
4-byte length under a cap per kind of message; the secret comes first, in a frame of its own.
Whatever is read from the socket is untrusted data until parsed: ``GradeRequest.parse`` on the
server's side, ``Answer.parse`` (and models.verdict_from_wire for the verdict) on the client's.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from judge.version import __version__
from judge.paths import runtime_dir
from judge.worker.settings import PASSTHROUGH_ENV
from judge.sha import sha256

# judge/ itself (this file's folder): its code is the daemon's key, its path the one it serves
_PACKAGE = os.path.dirname(os.path.abspath(__file__))

CONNECT_S = 1.0  # a daemon that does not accept within this is unhealthy
HEADER_CAP = 1 << 20  # a short answer: hello (with the daemon's identity), accepted, busy, a mismatch
REQUEST_CAP = 64 << 20  # a job: the learner's source and where the exercise and the cache are
ANSWER_CAP = 64 << 20  # a verdict: checks, series, the learner's capped stdout and stderr
SECRET_CAP = 256  # the first frame of every request: the secret alone, read before anything bigger
BUSY_WAIT_S = 5.0  # another terminal's job runs: wait this long for it, then the client goes cold
SANDBOX_ENV = ("GRIND_SANDBOX",)  # settings that change a child's isolation: part of the key


class Unavailable(Exception):
    """The daemon cannot grade this job; the caller grades it cold."""


# ---------------------------------------------------------------------------------------------
# What the daemon is keyed by, and where its socket lives
def code_fingerprint() -> str:
    """The judge package's files by name, size and mtime: an editable install changes its code
    without changing its version, and a daemon running yesterday's code must not grade today's.

    Every daemon-served ``grind run`` computes it (for the key it sends), so the folders are read
    with ``os.scandir`` rather than ``Path.rglob`` (3 ms of pathlib objects per run); the files,
    their order and the digest are rglob's ("*.py" entries, sorted by path parts; folders entered
    unless they are links)."""
    root = _PACKAGE
    found: list[tuple[str, ...]] = []

    def walk(folder: str, parts: tuple[str, ...]) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            if entry.name.endswith(".py"):
                found.append((*parts, entry.name))
            try:
                if entry.is_dir() and not entry.is_symlink():
                    walk(entry.path, (*parts, entry.name))
            except OSError:
                continue

    walk(root, ())
    digest = sha256()
    for parts in sorted(found):
        try:
            info = os.stat(os.path.join(root, *parts))
        except OSError:
            continue
        digest.update(f"{'/'.join(parts)}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


def interpreter() -> str:
    """The environment and the binary: ``python`` and ``python3`` of one venv are one interpreter."""
    return f"{sys.prefix}:{os.path.realpath(sys.executable)}"


def identity() -> dict[str, Any]:
    """What the daemon is keyed by. A daemon whose identity differs from the client's is replaced."""
    from judge.environment import torch_version

    return {
        "grind": __version__,
        "code": code_fingerprint(),
        "torch": torch_version() or "absent",
        "python": interpreter(),
        "judge": _PACKAGE,
        "env": {k: os.environ[k] for k in (*SANDBOX_ENV, *PASSTHROUGH_ENV) if k in os.environ},
    }


def key_of(ident: dict[str, Any]) -> str:
    return sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:32]


# A unix socket's path must fit sun_path: 108 bytes on Linux with its terminating NUL (104 on macOS).
SUN_PATH_MAX = 107 if sys.platform.startswith("linux") else 103


def socket_path(folder: Path | None = None) -> Path | None:
    """One socket per interpreter (two virtual environments keep a daemon each); the versions
    are checked on every request, so an upgrade in the same environment replaces the daemon."""
    folder = folder or runtime_dir()
    if folder is None:
        return None
    name = sha256(f"{interpreter()}\0{_PACKAGE}".encode()).hexdigest()[:12]
    return folder / f"daemon-{name}.sock"


# ---------------------------------------------------------------------------------------------
# Framing: a 4-byte length, then JSON (or, for observations, safetensors bytes)


def send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(struct.pack(">I", len(payload)) + payload)


def recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks, got = [], 0
    while got < size:
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            raise ConnectionError("the connection closed mid-message")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


class OverCap(ValueError):
    """A message longer than its cap: an answer too big to take (a submission's forged output
    can make one), not a dead daemon; a ValueError, so every caller that drops a garbled answer
    drops this one too, and the client's ConnectionError branch (the daemon is gone) never sees it."""


def recv(sock: socket.socket, cap: int) -> bytes:
    (size,) = struct.unpack(">I", recv_exact(sock, 4))
    if size > cap:
        raise OverCap(f"a message of {size} bytes is over the cap of {cap}")
    return recv_exact(sock, size)


def parse_json(raw: bytes) -> dict[str, Any]:
    doc = json.loads(raw.decode("utf-8"))
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    return doc


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end (Linux SO_PEERCRED), or None where not known."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", raw)[1])


def peer_pid(sock: socket.socket) -> int | None:
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", raw)[0])


def same_user(sock: socket.socket) -> bool:
    uid = peer_uid(sock)
    return uid is None or uid == os.getuid()


# ---------------------------------------------------------------------------------------------
# The secret, and a connection to this user's daemon only


def secret_path(path: Path) -> Path:
    """Where the daemon at ``path`` keeps the secret its clients must present: beside the socket,
    in the user's private runtime folder (0700), which a learner's child cannot read (bubblewrap
    hides the folder; Landlock never grants it)."""
    return path.with_name(path.stem + ".secret")


def read_secret(path: Path) -> str:
    """The daemon's secret, or "" when there is none to read (then a request is refused, and the
    run grades cold). Peer uid is not enough: a learner's child may run as this very user (no
    bubblewrap, or root's child kept as root), and Landlock does not stop it connecting to a
    socket it can name; only grind's own processes can read this file."""
    try:
        fd = os.open(secret_path(path), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return ""
    try:
        return os.read(fd, 128).decode("ascii", "replace").strip()
    finally:
        os.close(fd)


def connect(path: Path, timeout: float = CONNECT_S) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
        if not same_user(sock):
            raise Unavailable("the daemon's socket belongs to another user")
    except BaseException:
        sock.close()
        raise
    return sock


def request(path: Path, message: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
    """One request, one JSON answer (hello, stop). Raises OSError, Unavailable or ValueError."""
    with connect(path) as sock:
        sock.settimeout(timeout)
        send(sock, read_secret(path).encode())
        send(sock, json.dumps(message).encode())
        return parse_json(recv(sock, HEADER_CAP))


# ---------------------------------------------------------------------------------------------
# The messages


@dataclass(frozen=True)
class GradeRequest:
    """A job for the daemon: grade this source as the client would cold, with its exercise
    folders and its cache. ``key`` is the client's daemon key (identity), ``exercise_key`` the
    exercise's cache key; ``hidden`` the folders its children must not read."""

    exercise_dir: str
    solutions_root: str
    exercise_key: str
    cache_root: str
    source: str
    filename: str
    limits: dict[str, Any] | None
    speed: bool
    key: str
    hidden: list[str]

    def to_wire(self) -> bytes:
        return json.dumps({"op": "grade", **asdict(self)}).encode()

    @classmethod
    def parse(cls, message: dict[str, Any]) -> GradeRequest:
        """The request in ``message``, field by field; ValueError for any field of the wrong kind
        (the server then answers with an error, and the client grades cold)."""
        names = ("exercise_dir", "solutions_root", "exercise_key", "cache_root", "source", "filename", "key")
        wrong = [name for name in names if not isinstance(message.get(name), str)]
        if wrong:
            raise ValueError(f"the request's {', '.join(wrong)} must be text")
        text: dict[str, str] = {name: message[name] for name in names}
        limits, hidden = message.get("limits"), message.get("hidden", [])
        if limits is not None and not isinstance(limits, dict):
            raise ValueError("the request's limits must be an object")
        if not isinstance(hidden, list):
            raise ValueError("the request's hidden folders must be a list")
        return cls(limits=limits, speed=bool(message.get("speed")), hidden=[str(h) for h in hidden], **text)


@dataclass(frozen=True)
class Answer:
    """What the daemon said to a job, read from untrusted JSON: each flag is its truth value and
    nothing more; ``verdict`` stays raw until models.verdict_from_wire parses it field by field."""

    ok: bool = False
    accepted: bool = False  # the job was taken: its verdict (or an error) follows
    busy: bool = False  # another terminal's job runs: this run grades cold
    mismatch: bool = False  # a daemon of another key: the client replaces it
    unauthorized: bool = False  # the secret was refused
    error: str = ""
    verdict: Any = None

    @classmethod
    def parse(cls, raw: bytes) -> Answer:
        doc = parse_json(raw)
        error = doc.get("error")
        return cls(ok=bool(doc.get("ok")), accepted=bool(doc.get("accepted")), busy=bool(doc.get("busy")),
                   mismatch=bool(doc.get("mismatch")), unauthorized=bool(doc.get("unauthorized")),
                   error=error if isinstance(error, str) else "", verdict=doc.get("verdict"))

