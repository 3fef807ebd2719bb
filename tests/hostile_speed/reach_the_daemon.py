# Hostile (written for grind's own tests): finds the per-user daemon's socket (the path grind
# would compute for this interpreter, a path the test writes into KNOWN as a learner who guessed
# it would, a listing of the runtime folders, or a daemon's command line in /proc), reads any
# secret file beside it, and asks the
# daemon to stop, to say hello, and to run a job with its own hidden folders and limits. Where
# the socket is out of reach or every request is refused, the plainly wrong answer below fails;
# the test then checks that the daemon neither stopped nor made the folder it named.
import glob
import json
import os
import socket
import struct

import hashlib
import sys

TRIED = []
KNOWN = []  # the test writes the daemon's socket path here


def _computed():
    """grind's own rule: /tmp/grind-<uid>/daemon-<sha256(interpreter, judge folder)[:12]>.sock."""
    judge = next((os.path.dirname(os.path.dirname(m.__file__)) for n, m in list(sys.modules.items())
                  if getattr(m, "__file__", None) and m.__file__.endswith(os.path.join("worker", "runner.py"))), "")
    interpreter = f"{sys.prefix}:{os.path.realpath(sys.executable)}"
    name = hashlib.sha256(f"{interpreter}\0{judge}".encode()).hexdigest()[:12]
    return [f"/tmp/grind-{os.getuid()}/daemon-{name}.sock", f"/run/user/{os.getuid()}/grind/daemon-{name}.sock"]


def _sockets():
    found = set(KNOWN) | {p for p in _computed() if os.path.exists(p)}
    found |= set(glob.glob("/tmp/grind-*/daemon-*.sock")) | set(glob.glob("/run/user/*/grind/daemon-*.sock"))
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            words = open(cmdline, "rb").read().split(b"\0")
        except OSError:
            continue
        if b"--serve" in words:
            at = words.index(b"--serve")
            if at + 1 < len(words) and words[at + 1].endswith(b".sock"):
                found.add(words[at + 1].decode(errors="replace"))
    return sorted(found)


def _ask(path, message):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(2)
            sock.connect(path)
            raw = json.dumps(message).encode()
            sock.sendall(struct.pack(">I", len(raw)) + raw)
            size = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))[0]
            return json.loads(sock.recv(size, socket.MSG_WAITALL))
    except Exception as exc:  # noqa: BLE001
        return {"error": type(exc).__name__}


for _path in _sockets():
    _secret = ""
    for _name in (_path[:-5] + ".secret", _path[:-5] + ".key"):
        try:
            _secret = open(_name).read().strip()
        except OSError:
            pass
    _hello = _ask(_path, {"op": "hello", "auth": _secret})
    TRIED.append(_hello)
    _target = os.environ.get("GRIND_TEST_PLANT", "/tmp/grind-planted-by-a-learner")
    _ask(_path, {"op": "run", "auth": _secret, "key": _hello.get("key", ""), "hidden": [_target],
                 "limits": {"wall_s": 1000}, "job": {}})
    _ask(_path, {"op": "stop", "auth": _secret})


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    import torch

    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]), norm_type)
