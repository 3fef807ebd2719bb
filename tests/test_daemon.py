"""The per-user warm daemon (judge/daemon.py): started by the first run, reused by the next,
replaced when it does not match or does not answer, unreachable for other users, and never the
reason for a wrong or missing verdict.

Every test here has a runtime folder of its own (GRIND_RUNTIME_DIR) and a short idle timeout,
and the ``daemons`` fixture kills whatever daemon it started, by pid, so none outlives a test.
The rest of the suite runs with GRIND_NO_DAEMON=1 (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from judge import daemon, daemon_server
from judge.catalog import Catalog
from judge.executor import Submission
from judge.grade import grade, hidden_from_learners
from judge.models import Status
from judge.worker.sandbox import RunOutcome

from .conftest import ADVERSARIAL, ROOT, SUBMISSIONS

CLIPPING = SUBMISSIONS / "clipping"


def _daemon_pids(folder: Path) -> list[int]:
    """Processes started with our runtime folder on their command line: this test's daemons."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if str(folder).encode() in cmdline and int(entry.name) != os.getpid():
                found.append(int(entry.name))
    return found


@pytest.fixture()
def daemons(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private runtime folder, the daemon allowed, a short idle limit; afterwards every
    process started for this folder is stopped. The folder is in the system's temp folder (not
    pytest's, whose 0700 parents would keep another user out before the socket's own modes do)."""
    folder = Path(tempfile.mkdtemp(prefix="grind-daemon-test-"))
    monkeypatch.delenv("GRIND_NO_DAEMON", raising=False)
    monkeypatch.setenv("GRIND_RUNTIME_DIR", str(folder))
    monkeypatch.setenv("GRIND_DAEMON_IDLE_S", "60")
    yield folder
    daemon.stop()
    for pid in _daemon_pids(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(folder, ignore_errors=True)


def wait_for(predicate: Any, timeout: float = 150.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    path = daemon.socket_path()
    logs = {str(log): log.read_text(errors="replace")[-2000:] for log in path.parent.glob("*.log")} if path else {}
    alive = _daemon_pids(path.parent) if path else []
    raise AssertionError(f"timed out waiting; status: {daemon.status()}, socket: {path}, exists: "
                         f"{bool(path and path.exists())}, daemon processes: {alive}, logs: {logs}")


def warm_daemon() -> dict[str, Any]:
    return wait_for(lambda: (lambda s: s if s and s.get("warm") else None)(daemon.status()))


@pytest.fixture(scope="module")
def clipping() -> Any:
    return Catalog().get("clipping")


def _pitfall(verdict: Any) -> str | None:
    return verdict.diagnosis.slug if verdict.diagnosis else None


def _same(verdict: Any, speed: bool = True) -> dict[str, Any]:
    """A verdict as printed with --json, less what differs between two runs of one file (how long
    it took; with ``speed`` False, the speed advice, which depends on the machine's load)."""
    doc = dict(verdict.to_json(), duration_s=None)
    return doc if speed else dict(doc, notices=None)


def test_the_daemon_grades_with_the_clients_cache_and_never_an_exercise_edited_since(
        daemons: Path, clipping: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon serves every workspace and course of its user, each with its own settings: it
    reads (and, when missing, computes in its warm server) the reference in the client's cache,
    not its own. And it grades only the exercise whose files the client hashed: one edited in
    between is refused, and that run is cold."""
    from judge import cache

    hidden = hidden_from_learners(clipping)
    daemon.spawn(hidden)
    warm_daemon()
    ours = tmp_path / "another-cache"
    monkeypatch.setenv("GRIND_CACHE_DIR", str(ours))  # after the daemon started: it runs with the old one
    key = cache.exercise_key(clipping)
    assert not cache.has("clipping", key)
    worker = daemon.DaemonExecutor(hidden_from_learners(clipping))
    verdict = grade(clipping, CLIPPING / "pitfall_no_clamp.py", worker=worker)
    assert worker.served == 1 and _pitfall(verdict) == "no-clamp"
    assert cache.has("clipping", key)  # computed by the daemon, into the client's cache

    source = (CLIPPING / "correct_loop.py").read_text()
    jobs = daemon.status()["jobs"]
    assert worker.verdict(Submission(clipping, "the key of an older version of the files", source,
                                     str(CLIPPING / "x.py"))) is None
    after = daemon.status()
    assert after["jobs"] == jobs and after["pid"] == daemon.status()["pid"]  # refused, and still serving


FAKE = textwrap.dedent('''
    """A stand-in on the daemon's socket: an older grind (mode "old") or a broken one ("garbage")."""
    import json, os, select, socket, struct, sys
    path, mode = sys.argv[1], sys.argv[2]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    os.umask(0o177)
    listener.bind(path)
    listener.listen(4)
    print("listening", flush=True)
    if mode == "dying":  # killed with a connection queued: it is reset unanswered, the file stays
        select.select([listener], [], [])
        os._exit(0)
    while True:
        conn, _ = listener.accept()
        size = struct.unpack(">I", conn.recv(4, socket.MSG_WAITALL))[0]
        conn.recv(size, socket.MSG_WAITALL) if size else b""  # the secret's frame: not checked here
        if mode == "refuse":  # as a daemon whose secret the client did not have: answer, close, unread
            raw = json.dumps({"ok": False, "unauthorized": True}).encode()
            conn.sendall(struct.pack(">I", len(raw)) + raw)
            conn.close()
            continue
        size = struct.unpack(">I", conn.recv(4, socket.MSG_WAITALL))[0]
        request = json.loads(conn.recv(size, socket.MSG_WAITALL))
        def send(doc):
            raw = json.dumps(doc).encode()
            conn.sendall(struct.pack(">I", len(raw)) + raw)
        if request["op"] == "hello":
            send({"ok": True, "pid": os.getpid(), "key": "an older grind", "identity": {"grind": "0.0.1"}})
        elif request["op"] == "stop":
            send({"ok": True})
            if os.path.exists(path):
                try:
                    os.unlink(path)
                except FileNotFoundError:  # the client took the name away first
                    pass
            sys.exit(0)
        elif mode == "old":
            send({"ok": False, "mismatch": True})
        elif mode == "hung":
            hung = conn  # accepted, never answered
            continue
        elif mode == "oversize":  # accepted, then an answer longer than the client takes
            send({"ok": True, "accepted": True})
            conn.sendall(struct.pack(">I", 2**31))
        else:
            send({"ok": True, "accepted": True})
            send({"ok": True, "verdict": "{not json"})
        conn.close()
''')


@pytest.fixture()
def fake_daemon(daemons: Path, tmp_path: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(mode: str) -> subprocess.Popen[bytes]:
        script = tmp_path / "fake_daemon.py"
        script.write_text(FAKE)
        path = daemon.socket_path()
        assert path is not None
        proc = subprocess.Popen([sys.executable, str(script), str(path), mode], stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline() == b"listening\n"
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------------------------------------
# A real daemon: start, reuse, the same isolation, sockets private to their user


def test_a_broken_exercise_over_the_daemon_is_the_same_one_line_error_as_cold(daemons: Path, course: Path) -> None:
    """The daemon cannot grade an exercise whose reference fails its own case: it says so, the
    client grades cold and raises grind's error, word for word the cold run's. The daemon itself
    goes on serving."""
    from judge.errors import JudgeError

    exercise = Catalog().get("clipping")
    reference = course / "solutions" / "clipping" / "reference.py"
    broken = reference.read_text().replace("    coef = ", "    raise RuntimeError('a broken reference')\n    coef = ", 1)
    assert "a broken reference" in broken
    reference.write_text(broken)
    daemon.spawn(hidden_from_learners(exercise))
    info = warm_daemon()
    worker = daemon.DaemonExecutor(hidden_from_learners(exercise))
    with pytest.raises(JudgeError) as over_daemon:
        grade(exercise, CLIPPING / "correct_loop.py", worker=worker)
    with pytest.raises(JudgeError) as cold:
        grade(exercise, CLIPPING / "correct_loop.py")
    assert worker.served == 0 and str(over_daemon.value) == str(cold.value)
    assert "the reference fails its own case" in str(cold.value)
    after = daemon.status()
    assert after is not None and after["pid"] == info["pid"] and after["jobs"] == info["jobs"]


def test_first_run_starts_the_daemon_and_later_runs_reuse_it(daemons: Path, clipping: Any) -> None:
    hidden = hidden_from_learners(clipping)
    first = daemon.DaemonExecutor(hidden)
    cold = grade(clipping, ADVERSARIAL / "read_solutions.py", worker=first)
    assert first.served == 0  # no daemon yet: this run graded cold and started one
    info = warm_daemon()
    assert info["current"] and info["identity"]["torch"] and info["identity"]["grind"]

    # the folder and the socket are the user's alone
    path = daemon.socket_path()
    assert path is not None and stat.S_IMODE(os.lstat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.lstat(daemons).st_mode) == 0o700

    again = daemon.DaemonExecutor(hidden)
    warm = grade(clipping, ADVERSARIAL / "read_solutions.py", worker=again)
    assert again.served == 1
    # the same limits and isolation as the cold run: the solutions stay out of reach
    assert (warm.status, warm.isolation, warm.message) == (cold.status, cold.isolation, cold.message)
    assert warm.status in (Status.FAILED, Status.ERROR)

    pitfall = grade(clipping, CLIPPING / "pitfall_per_tensor.py", worker=again)
    passed = grade(clipping, CLIPPING / "correct_loop.py", worker=again, speed=True)
    assert again.served >= 3
    assert pitfall.status is Status.FAILED and _pitfall(pitfall) == "per-tensor"
    assert passed.status is Status.PASSED
    # The daemon grades whole (runs, compares, diagnoses): its verdict is the cold one, field by field.
    assert _same(pitfall) == _same(grade(clipping, CLIPPING / "pitfall_per_tensor.py"))
    assert _same(passed, speed=False) == _same(grade(clipping, CLIPPING / "correct_loop.py"), speed=False)
    later = daemon.status()
    assert later is not None and later["pid"] == info["pid"] and later["jobs"] >= 3


def test_the_daemon_runs_this_judge_whatever_folder_grind_starts_it_from(daemons: Path, clipping: Any,
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a clone beside a non-editable install (the README's quickstart does exactly that),
    `python -m judge.daemon_server` imported the clone's judge from the current folder: its key never
    matched the client's, and every run replaced the daemon and graded cold. A decoy judge in
    the current folder must not be the one the daemon runs."""
    import judge

    decoy = tmp_path / "judge"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("__version__ = 'decoy'\n")
    (decoy / "daemon_server.py").write_text("raise SystemExit('the decoy judge was imported')\n")
    monkeypatch.chdir(tmp_path)
    hidden = hidden_from_learners(clipping)
    first = daemon.DaemonExecutor(hidden)
    assert grade(clipping, CLIPPING / "correct_loop.py", worker=first).passed and first.served == 0
    info = warm_daemon()
    assert info["current"] and info["identity"]["judge"] == str(Path(judge.__file__).parent)
    again = daemon.DaemonExecutor(hidden)
    assert grade(clipping, CLIPPING / "correct_loop.py", worker=again).passed and again.served == 1


def test_a_submission_cannot_stop_probe_or_steer_the_daemon(daemons: Path, clipping: Any, tmp_path: Path) -> None:
    """The daemon runs unsandboxed as the learner's own user, and a learner's child may run as
    that user too (Landlock, or root's child kept as root): peer uid alone let a submission stop
    the daemon, or make it mkdir any path and restart its server without the hidden folders. The
    socket's folder is hidden from the child (bubblewrap) and every request must carry a secret
    that only grind's processes can read; a same-user client without it gets "unauthorized"."""
    hidden = hidden_from_learners(clipping)
    assert daemons in hidden  # the runtime folder is among the folders a child must not see
    daemon.spawn(hidden)
    info = warm_daemon()
    path = daemon.socket_path()
    assert path is not None
    secret = daemon.secret_path(path)
    assert stat.S_IMODE(os.lstat(secret).st_mode) == 0o600 and len(secret.read_text()) == 64

    def ask(*frames: bytes) -> dict[str, Any]:
        with daemon.connect(path) as sock:
            try:
                sock.sendall(b"".join(struct.pack(">I", len(frame)) + frame for frame in frames))
            except BrokenPipeError:  # refused after the first frame, and closed before we sent the rest
                pass
            return daemon.parse_json(daemon.recv(sock, daemon.HEADER_CAP))

    # A process of this user that found the socket but not the secret: refused, whatever it asks.
    run = {"op": "grade", "key": info["key"], "hidden": [str(daemons / "planted")], "source": ""}
    for message in ({"op": "hello"}, {"op": "stop"}, run):
        assert ask(json.dumps(message).encode()) == {"ok": False, "unauthorized": True}  # no secret frame
        assert ask(b"guess", json.dumps(message).encode()) == {"ok": False, "unauthorized": True}
    assert not (daemons / "planted").exists()
    # Nor can it make the daemon read a big request first: a secret frame over 256 bytes is dropped unread.
    with daemon.connect(path) as sock:
        sock.sendall(struct.pack(">I", 64 << 20))
        sock.settimeout(5)
        assert sock.recv(4) == b""  # closed without an answer, the 64 MB never read
    assert daemon.status() is not None

    # A submission graded through the daemon tries the same from inside its sandbox.
    # It is told where the socket is, as a learner who computed grind's path for it would be.
    plant = daemons.parent / f"planted-{os.getpid()}"
    hostile = tmp_path / "clipping.py"
    source = (ROOT / "tests" / "hostile_speed" / "reach_the_daemon.py").read_text()
    hostile.write_text(source.replace("KNOWN = []", f"KNOWN = [{str(path)!r}]")
                       .replace('"/tmp/grind-planted-by-a-learner"', repr(str(plant))))
    verdict = grade(clipping, hostile, worker=daemon.DaemonExecutor(hidden))
    assert verdict.status is Status.FAILED, verdict.message
    assert not plant.exists()
    after = daemon.status()
    assert after is not None and after["pid"] == info["pid"], "the submission stopped the daemon"


def test_other_users_cannot_reach_the_socket_and_are_refused_by_peer_uid(daemons: Path, clipping: Any) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to act as another user")
    import pwd

    nobody = pwd.getpwnam("nobody").pw_uid
    daemon.spawn(hidden_from_learners(clipping))
    info = wait_for(daemon.status)
    path = daemon.socket_path()
    assert path is not None
    probe = textwrap.dedent(f'''
        import os, socket, struct, sys
        os.setgid({nobody}); os.setuid({nobody})
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect({str(path)!r})
        except PermissionError:
            print("no-permission"); sys.exit()
        try:
            s.sendall(struct.pack(">I", 15) + b'{{"op":"hello"}}')
            print("answered" if s.recv(4) else "refused")
        except OSError:  # closed unread: a reset
            print("refused")
    ''')

    def as_nobody() -> str:
        return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()

    assert as_nobody() == "no-permission"  # the 0700 folder and 0600 socket
    # Open both up, as a careless umask or a shared folder might: SO_PEERCRED still refuses.
    os.chmod(daemons, 0o755)
    os.chmod(path, 0o666)
    assert as_nobody() == "refused"
    os.chmod(daemons, 0o700)
    assert daemon.status() is not None and daemon.status()["pid"] == info["pid"]  # and it still serves us


def test_a_runtime_folder_of_another_user_is_never_used(daemons: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to own a folder as another user")
    import pwd

    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, pwd.getpwnam("nobody").pw_uid, -1)
    monkeypatch.setenv("GRIND_RUNTIME_DIR", str(theirs))
    assert daemon.runtime_dir() is None and daemon.socket_path() is None
    monkeypatch.setenv("GRIND_RUNTIME_DIR", str(daemons))
    os.chmod(daemons, 0o755)  # ours, but open to others: not used either
    assert daemon.runtime_dir() is None


def test_a_missing_runtime_folder_is_made_private_and_an_unsafe_one_is_said(daemons: Path, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """GRIND_RUNTIME_DIR naming a folder that does not exist yet: made 0700, as the default ones
    are (it meant no daemon ever, silently). One that cannot be used: `grind daemon status` says
    grind run grades cold, not that the next run starts a daemon."""
    from typer.testing import CliRunner

    from judge.cli import app

    missing = tmp_path / "not-yet"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_RUNTIME_DIR", "not-yet")  # relative: the daemon itself runs from /
    assert daemon.runtime_dir() == missing and stat.S_IMODE(missing.stat().st_mode) == 0o700
    os.chmod(missing, 0o755)  # ours, but open to others: not used
    said = CliRunner().invoke(app, ["daemon", "status"]).output
    assert "none can start" in said and "grades cold" in said and "starts it" not in said, said


def test_status_says_exactly_why_no_daemon_can_start(daemons: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reason a daemon cannot start is named (a socket path over the unix limit, a missing
    parent, a folder open to others), `grind run` then grades cold without trying, and
    `daemon status --json` says the same; where one can start, the JSON says so."""
    import json as json_

    from typer.testing import CliRunner

    from judge.cli import app

    def said(*extra: str) -> str:
        return CliRunner().invoke(app, ["daemon", "status", *extra]).output

    deep = tmp_path / ("d" * 60) / ("e" * 60)  # the folder exists and is private: only its length is wrong
    deep.mkdir(parents=True, mode=0o700)
    monkeypatch.setenv("GRIND_RUNTIME_DIR", str(deep))
    assert daemon.runtime_dir() == deep
    assert "over the 107" in (daemon.why_no_daemon() or "") and daemon.worker_for(list) is None
    assert "over the 107" in said() and "grades cold" in said() and "starts it" not in said()
    doc = json_.loads(said("--json"))
    assert doc["running"] is False and doc["can_start"] is False and "GRIND_RUNTIME_DIR" in doc["why_not"]

    monkeypatch.setenv("GRIND_RUNTIME_DIR", str(tmp_path / "gone" / "grind"))
    assert "parent" in said() and "does not exist" in said(), said()
    open_folder = tmp_path / "open"
    open_folder.mkdir(mode=0o700)
    os.chmod(open_folder, 0o755)
    monkeypatch.setenv("GRIND_RUNTIME_DIR", str(open_folder))
    assert "open to other users" in said(), said()

    monkeypatch.setenv("GRIND_RUNTIME_DIR", str(daemons))
    doc = json_.loads(said("--json"))
    assert doc == {"running": False, "can_start": True, "why_not": None, "socket": str(daemon.socket_path())}
    monkeypatch.setenv("GRIND_NO_DAEMON", "1")
    assert "GRIND_NO_DAEMON" in said()


def test_a_killed_daemon_means_a_cold_verdict_and_a_fresh_daemon(daemons: Path, clipping: Any) -> None:
    hidden = hidden_from_learners(clipping)
    daemon.spawn(hidden)
    old = warm_daemon()
    os.kill(old["pid"], signal.SIGKILL)
    wait_for(lambda: not Path(f"/proc/{old['pid']}").exists() or
             Path(f"/proc/{old['pid']}/stat").read_text().split()[2] == "Z", 10)
    worker = daemon.DaemonExecutor(hidden)
    verdict = grade(clipping, CLIPPING / "pitfall_no_clamp.py", worker=worker)
    assert worker.served == 0 and verdict.status is Status.FAILED and _pitfall(verdict) == "no-clamp"
    fresh = wait_for(lambda: (lambda s: s if s and s["pid"] != old["pid"] else None)(daemon.status()))
    assert fresh["current"]


def test_an_idle_daemon_exits_and_removes_its_socket(daemons: Path, clipping: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRIND_DAEMON_IDLE_S", "1")
    daemon.spawn(hidden_from_learners(clipping))
    info = wait_for(daemon.status, 30)
    path = daemon.socket_path()
    assert path is not None
    wait_for(lambda: not path.exists() and not _daemon_pids(daemons), 30)
    assert not Path(f"/proc/{info['pid']}").exists() or \
        Path(f"/proc/{info['pid']}/stat").read_text().split()[2] == "Z"


def test_the_folders_hidden_from_a_child_are_absolute_for_the_daemon_that_runs_from_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clipping: Any) -> None:
    """The hidden folders travel to the daemon, which runs from /: a relative GRIND_CACHE_DIR
    (or content folder) made it hide a folder of that name under / and not the client's cache."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_CACHE_DIR", "relative-cache")
    hidden = hidden_from_learners(clipping, Path("a-class-folder"))
    assert all(path.is_absolute() for path in hidden), hidden
    assert tmp_path / "relative-cache" in hidden and tmp_path / "a-class-folder" in hidden


def test_a_daemon_whose_code_changed_on_disk_exits_by_itself(daemons: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Installing grind again in the same environment (the README's quickstart, then its test
    setup: `pip install .`, then `pip install -e .`) moves the package, and with it the socket's
    name: no client would ever reach the old daemon to replace it, and it idled on for 15 minutes
    with its warm server. A daemon notices that its code on disk is no longer its own, and goes."""
    import threading

    monkeypatch.setattr(daemon_server, "CODE_CHECK_S", 0.1)
    served = daemon_server.Daemon(daemons / "old.sock", [], idle_s=60)
    monkeypatch.setattr(served, "warm", lambda: None)  # no server needed to watch the code
    assert served.bind()
    loop = threading.Thread(target=served.serve_forever, daemon=True)
    loop.start()
    try:
        time.sleep(0.5)
        assert loop.is_alive(), "the daemon stopped while its code was unchanged"
        monkeypatch.setattr(daemon_server, "code_fingerprint", lambda: "the code of the next install")
        loop.join(timeout=5)
        assert not loop.is_alive(), "the daemon kept running another version's code"
        assert not (daemons / "old.sock").exists()
    finally:
        served.stopping.set()
        loop.join(timeout=5)


def test_a_daemon_refuses_a_job_for_another_key_and_steps_aside(daemons: Path, clipping: Any) -> None:
    daemon.spawn(hidden_from_learners(clipping))
    wait_for(daemon.status, 30)
    path = daemon.socket_path()
    assert path is not None
    answer = daemon.request(path, {"op": "grade", "key": "another grind", "source": "", "hidden": []})
    assert answer == {"ok": False, "mismatch": True}
    wait_for(lambda: not path.exists(), 10)


# ---------------------------------------------------------------------------------------------
# Replacing and falling back, without a torch start where none is needed


@pytest.fixture()
def cold(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """A stand-in for starting a daemon: what the client decided, quickly (a None verdict is the
    client's word for "grade this cold", which ``grade`` then does, as without a daemon)."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(daemon, "spawn", lambda hidden: calls.append({"spawn": hidden}))
    return calls


def ask(source: str = "def clip_grad_norm(params, max_norm): ...\n") -> Any:
    """The daemon's verdict on one submission, or None: then the run is graded cold."""
    return daemon.DaemonExecutor([]).verdict(Submission(Catalog().get("clipping"), "a key", source,
                                                        "/nowhere/clipping.py"))


def test_no_daemon_yet_means_cold_and_a_start(daemons: Path, cold: list[dict[str, Any]]) -> None:
    assert ask() is None and cold == [{"spawn": []}]


def test_a_stale_socket_is_removed_and_the_job_runs_cold(daemons: Path, cold: list[dict[str, Any]]) -> None:
    path = daemon.socket_path()
    assert path is not None
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # the file stays, nobody listens: a daemon that died without cleaning up
    assert ask() is None
    assert not path.exists() and cold == [{"spawn": []}]


def test_a_daemon_of_another_version_is_replaced_without_a_word(fake_daemon: Any, cold: list[dict[str, Any]]) -> None:
    old = fake_daemon("old")
    assert ask() is None
    assert old.wait(timeout=10) == 0  # asked to stop, and it did
    assert cold == [{"spawn": []}]


def test_a_hung_daemon_is_replaced_and_the_job_runs_cold(fake_daemon: Any, cold: list[dict[str, Any]],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(daemon, "BUSY_WAIT_S", -9.5)  # the client waits BUSY_WAIT_S + 10 s for "accepted"
    hung = fake_daemon("hung")
    path = daemon.socket_path()
    assert path is not None
    assert ask() is None and cold == []
    assert not path.exists()  # its socket name taken away: the next run starts a fresh daemon
    hung.kill()


def test_a_daemon_that_dies_with_the_job_queued_is_replaced(fake_daemon: Any, cold: list[dict[str, Any]]) -> None:
    """A SIGKILLed daemon shows as a zombie while its other threads still hold its listener: a
    connect then succeeds and is reset unanswered. That is a dead daemon, not a busy one."""
    dying = fake_daemon("dying")
    path = daemon.socket_path()
    assert path is not None
    assert ask() is None and cold == [{"spawn": []}]
    assert dying.wait(timeout=10) == 0 and not path.exists()


def test_a_refusal_before_the_job_is_sent_runs_cold_and_keeps_the_daemon(fake_daemon: Any,
                                                                        cold: list[dict[str, Any]]) -> None:
    """A daemon that refuses the secret closes before reading the job: a big job's send then
    breaks its pipe. That daemon is alive (a new one whose secret was read a moment too early):
    the run is cold, and the daemon is neither stopped nor replaced."""
    server = fake_daemon("refuse")
    path = daemon.socket_path()
    assert path is not None
    assert ask("x = 1\n" * (2 << 20)) is None and cold == []
    assert path.exists() and server.poll() is None


def test_an_answer_over_the_cap_runs_cold_and_keeps_the_daemon(fake_daemon: Any, cold: list[dict[str, Any]]) -> None:
    """A reply too big to take is that job's problem, not a dead daemon: the job runs cold and
    the daemon is neither stopped nor replaced."""
    server = fake_daemon("oversize")
    path = daemon.socket_path()
    assert path is not None
    assert ask() is None and cold == []
    assert path.exists() and server.poll() is None


def test_a_garbled_daemon_answer_falls_back_to_the_right_cold_verdict(fake_daemon: Any, clipping: Any) -> None:
    fake_daemon("garbage")
    worker = daemon.DaemonExecutor(hidden_from_learners(clipping))
    verdict = grade(clipping, CLIPPING / "pitfall_sum_of_norms.py", worker=worker)
    assert worker.served == 0
    assert verdict.status is Status.FAILED and _pitfall(verdict) == "sum-of-norms"


def test_opting_out_never_uses_nor_starts_a_daemon(daemons: Path, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    assert daemon.worker_for(list) is not None
    assert daemon.worker_for(list, opt_out=True) is None
    monkeypatch.setenv("GRIND_NO_DAEMON", "1")
    assert daemon.worker_for(list) is None
    monkeypatch.delenv("GRIND_NO_DAEMON")

    # `grind run --no-daemon`: the CLI asks for no worker
    from typer.testing import CliRunner

    import judge.outcome
    from judge.cli import app

    seen: list[Any] = []

    def fake_grade_and_record(*args: Any, worker: Any = None, **kwargs: Any) -> Any:
        seen.append(worker)
        raise SystemExit(0)

    monkeypatch.setattr(judge.outcome, "grade_and_record", fake_grade_and_record)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    runner = CliRunner()
    runner.invoke(app, ["run", "clipping", "--file", str(CLIPPING / "correct_loop.py"), "--no-daemon"])
    runner.invoke(app, ["run", "clipping", "--file", str(CLIPPING / "correct_loop.py")])
    assert seen[0] is None and isinstance(seen[1], daemon.DaemonExecutor)


def test_daemon_status_says_when_the_daemon_is_grading(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that waits for another terminal's job (up to BUSY_WAIT_S, then cold) is explained by
    `grind daemon status`: it said "idle 1.5 s" while the daemon graded a looping submission."""
    from typer.testing import CliRunner

    from judge.cli import app

    info = {"pid": 4242, "jobs": 3, "idle_s": 1.5, "idle_limit_s": 900.0, "warm": True, "current": True,
            "socket": "/run/user/1000/grind/daemon-x.sock", "identity": {}}
    for busy, said in ((True, "grading a job now"), (False, "idle 1.5 s of 900.0 s")):
        monkeypatch.setattr(daemon, "status", lambda busy=busy: dict(info, busy=busy))
        output = CliRunner().invoke(app, ["daemon", "status"]).output
        assert said in output, output


def test_daemon_status_and_stop_commands(daemons: Path, fake_daemon: Any) -> None:
    from typer.testing import CliRunner

    from judge.cli import app

    runner = CliRunner()
    assert "No grind daemon is running" in runner.invoke(app, ["daemon", "status"]).output
    fake = fake_daemon("old")
    shown = runner.invoke(app, ["daemon", "status", "--json"]).output
    assert json.loads(shown)["pid"] == fake.pid and json.loads(shown)["current"] is False
    assert "replaces it" in runner.invoke(app, ["daemon", "status"]).output
    assert runner.invoke(app, ["daemon", "stop"]).output.strip() == "Stopped the grind daemon."
    assert fake.poll() == 0  # "stopped" is said once the process has exited, not before
    assert runner.invoke(app, ["daemon", "stop"]).output.strip() == "No grind daemon was running."


def test_with_no_daemon_and_a_cold_cache_the_reference_and_the_learner_run_side_by_side(
        course: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The very first run after an install: no daemon answers and nothing is cached. The daemon's
    client grades cold, so the reference's process and the learner's start together (their two
    torch imports overlap) rather than the reference going first through the client."""
    from judge.worker import sandbox

    monkeypatch.setattr(daemon, "socket_path", lambda: None)  # no daemon, and none started
    spans: list[tuple[float, float]] = []

    def timed(real: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.monotonic()
            try:
                return real(*args, **kwargs)
            finally:
                spans.append((started, time.monotonic()))
        return run

    monkeypatch.setattr(sandbox, "run_job", timed(sandbox.run_job))
    exercise = Catalog().get("clipping")
    verdict = grade(exercise, CLIPPING / "correct_loop.py", worker=daemon.DaemonExecutor(hidden_from_learners(exercise)))
    assert verdict.status is Status.PASSED, verdict.message
    (first_start, first_end), (second_start, _) = sorted(spans)
    assert len(spans) == 2 and second_start < first_end, spans


def test_a_job_for_other_folders_while_a_job_runs_is_told_busy_in_time(daemons: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A second terminal whose job needs other hidden folders (another course's cache), while a
    long job runs: the daemon says "busy" within BUSY_WAIT_S (that run goes cold) and keeps the
    running job's server. It used to wait for the running job before answering at all, past the
    client's patience, and the client then killed a healthy daemon."""
    import threading

    monkeypatch.setattr(daemon_server, "BUSY_WAIT_S", 0.2)
    served = daemon_server.Daemon(daemons / "unused.sock", [], idle_s=60)  # its server starts on a first job only
    first_server = served.worker
    served.job_lock.acquire()  # another terminal's job is running
    ours, theirs = socket.socketpair()
    message = {"op": "grade", "key": served.key, "source": "", "hidden": [str(daemons / "other-cache")]}
    answered = threading.Thread(target=served.grade, args=(theirs, message), daemon=True)
    answered.start()
    answered.join(timeout=5)
    try:
        assert not answered.is_alive(), "the daemon kept the second client waiting for the running job"
        ours.settimeout(1)
        assert daemon.parse_json(daemon.recv(ours, daemon.HEADER_CAP)) == {"ok": False, "busy": True}
        assert served.worker is first_server and served.hidden == []  # the running job's server is untouched
    finally:
        served.job_lock.release()
        answered.join(timeout=5)
        ours.close()
        theirs.close()
        served.worker.close()


def test_a_job_cannot_reach_or_steer_the_spare_forked_for_the_next_one(daemons: Path, clipping: Any) -> None:
    """The daemon's server forks the next job's process before that job arrives. A submission
    that leaves a hunter behind (double fork, new session) to stop, inject into, or open the
    memory of whatever process appears next, and to plant a result in the folders beside its own,
    reaches nothing: every process of a job is gone before the next spare is forked (the server is
    a subreaper), and a job writes only its own folder. The correct answer graded next passes,
    with nothing injected, through the same daemon."""
    hidden = hidden_from_learners(clipping)
    daemon.spawn(hidden)
    info = warm_daemon()
    worker = daemon.DaemonExecutor(hidden)
    hostile = grade(clipping, ROOT / "tests" / "hostile_warm" / "hunts_the_next_spare.py", worker=worker)
    assert hostile.status is Status.FAILED, hostile.message
    assert "hunter left behind" in hostile.stdout
    for _ in range(3):  # three spares in a row, each forked after the hunter's job ended
        verdict = grade(clipping, SUBMISSIONS / "clipping" / "correct_loop.py", worker=worker)
        assert verdict.status is Status.PASSED, verdict.message
        assert "INJECTED" not in verdict.stdout + verdict.stderr
    after = daemon.status()
    assert after is not None and after["pid"] == info["pid"]


@pytest.mark.parametrize("tmpdir", [None, "made", "missing", "", "/proc", "a file"])
def test_the_socket_folder_is_tempfiles_folder_without_tempfile(tmpdir: str | None, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """paths._temp_root answers what tempfile.gettempdir() would, for TMPDIR unset, a folder, a
    missing folder (skipped by both) and blank (ignored by both): the daemon's socket folder is
    where it was before tempfile was dropped from the client's imports."""
    import tempfile

    from judge import paths

    for name in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "a file").write_text("")
    if tmpdir is not None:
        value = {"made": str(tmp_path), "missing": str(tmp_path / "nope"), "": "", "/proc": "/proc",
                 "a file": str(tmp_path / "a file")}[tmpdir]
        monkeypatch.setenv("TMPDIR", value)
    monkeypatch.setattr(tempfile, "tempdir", None)  # both cache their first answer
    monkeypatch.setattr(paths, "_TEMP_ROOT", [])
    assert paths._temp_root() == tempfile.gettempdir()  # /proc: root may write there by os.access, not in fact
    assert not list(Path(paths._temp_root()).glob(".grind-probe-*"))


@pytest.mark.parametrize("home", ["abs", "relative", None])
@pytest.mark.parametrize("xdg", [None, "", "  ", "set", "relative"])
def test_the_user_folders_are_platformdirs_folders_without_platformdirs(
        xdg: str | None, home: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """judge.userdirs gives platformdirs' cache and state folders (the XDG variable unset, blank,
    spaces, absolute or relative; HOME absolute, relative or unset), so the reference cache and
    the progress database stay where every earlier grind kept them; and the daemon's folder
    under a private XDG_RUNTIME_DIR."""
    import platformdirs

    from judge import userdirs

    if home is None:
        monkeypatch.delenv("HOME", raising=False)
    else:
        monkeypatch.setenv("HOME", str(tmp_path / "home") if home == "abs" else "home")
    for variable in ("XDG_CACHE_HOME", "XDG_STATE_HOME"):
        if xdg is None:
            monkeypatch.delenv(variable, raising=False)
        else:
            monkeypatch.setenv(variable, {"set": str(tmp_path / variable), "relative": "rel"}.get(xdg, xdg))
    try:
        expected = platformdirs.user_cache_dir("grind", appauthor=False)
    except RuntimeError:  # recent platformdirs: no home to expand
        expected = None
    if expected is not None:
        assert userdirs.user_cache_dir() == expected
        assert userdirs.user_state_dir() == platformdirs.user_state_dir("grind", appauthor=False)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert userdirs.user_runtime_dir(str(runtime)) == platformdirs.user_runtime_dir("grind", appauthor=False)


_RUNTIME_CASES = ["plain", "open parent", "sticky parent", "linked parent", "mode 0500", "mode 0750", "dot-dot",
                  *(["parent of another user"] if os.geteuid() == 0 else [])]  # chown needs root


@pytest.mark.parametrize("case", _RUNTIME_CASES)
def test_the_daemons_folder_is_platformdirs_folder_whoever_could_replace_it(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """userdirs.user_runtime_dir takes $XDG_RUNTIME_DIR/grind only where platformdirs does: the
    folder this user's 0700 one and no parent replaceable by another user (a review found the
    first version took a folder under a parent another user owned, or anyone could write to).
    Anything else is platformdirs' own answer (recent versions fall back to /run/user/<uid>)."""
    import warnings

    import platformdirs

    from judge import userdirs

    parent = tmp_path / "parent"
    parent.mkdir(mode=0o755)
    runtime = parent / "run"
    if case == "open parent":
        parent.chmod(0o777)
    elif case == "sticky parent":
        parent.chmod(0o1777)
    elif case == "parent of another user":
        os.chown(parent, 12345, 12345)
    elif case == "linked parent":
        (tmp_path / "link").symlink_to(parent)
        runtime = tmp_path / "link" / "run"
    runtime.mkdir(mode=0o700)
    runtime.chmod({"mode 0500": 0o500, "mode 0750": 0o750}.get(case, 0o700))
    if case == "dot-dot":  # an open folder beside it, climbed out of: platformdirs refuses the path
        (parent / "open").mkdir(mode=0o777)
        (parent / "open").chmod(0o777)
        runtime = parent / "open" / ".." / "run"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns once per cause when it falls back
        expected = platformdirs.user_runtime_dir("grind", appauthor=False)
    assert userdirs.user_runtime_dir(str(runtime)) == expected
    assert (expected == str(runtime / "grind")) == (case in ("plain", "sticky parent", "linked parent"))


def test_the_builtin_sha256_gives_hashlibs_digest() -> None:
    import hashlib

    from judge.sha import sha256

    for data in (b"", b"grind", bytes(range(256)) * 300):
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    digest = sha256()
    digest.update(b"gr")
    digest.update(b"ind")
    assert digest.hexdigest() == hashlib.sha256(b"grind").hexdigest()
