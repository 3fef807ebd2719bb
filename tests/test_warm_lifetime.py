"""A warm server dies with the ``grind grade`` that started it, even when grind is SIGKILLed
mid-job (no cleanup code of grind's runs then). Before, the server only noticed at its next read
of stdin, after the job in flight reached its wall clock: a class graded with --time-limit 120
left servers, and their jobs, running for up to two minutes after grind was gone."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ADVERSARIAL

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _descendants(pid: int) -> dict[int, str]:
    """Every live process under ``pid``, with its command line (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in found:
                try:
                    found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode(
                        "utf-8", "replace")
                except OSError:
                    continue
                frontier.append(child)
    return found


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for whichever process inherited it to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.parametrize("sandbox", ["auto", "landlock", "limits-only"])
def test_warm_servers_die_with_a_sigkilled_grind_grade(tmp_path: Path, sandbox: str) -> None:
    root = tmp_path / "class"
    root.mkdir()
    for name in ("ann", "bob", "cat"):
        shutil.copyfile(ADVERSARIAL / "sleep_forever.py", root / f"{name}.py")
    env = dict(os.environ, GRIND_STATE_DIR=str(tmp_path / "state"), GRIND_SANDBOX=sandbox,
               GRIND_CACHE_DIR=str(tmp_path / "cache"))  # its own cache: independent of the user's
    grind = subprocess.Popen([sys.executable, "-m", "judge", "grade", str(root), "-e", "clipping", "-j", "1",
                              "--time-limit", "300", "--allow-weak-isolation", "--out", str(tmp_path / "out")],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Wait for a job in flight: a warm server ("runner.py --serve") with a child of its own.
        servers: dict[int, str] = {}
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            below = _descendants(grind.pid)
            servers = {pid: cmd for pid, cmd in below.items() if "--serve" in cmd and "runner" in cmd}
            if any(_descendants(pid) for pid in servers):
                break
            time.sleep(0.2)
        assert servers and any(_descendants(pid) for pid in servers), "no warm server with a job in flight"
        time.sleep(1.0)  # well inside the job: its wall clock is 300 s
        everything = _descendants(grind.pid)
        grind.send_signal(signal.SIGKILL)
        grind.wait(timeout=30)
        # Generous bound, and no speed claim: only that they go long before the 300 s job clock.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(pid) for pid in everything):
            time.sleep(0.1)
        left = {pid: cmd for pid, cmd in everything.items() if _alive(pid)}
        assert not left, f"still running after grind was SIGKILLed: {left}"
    finally:
        if grind.poll() is None:
            grind.kill()
        for pid in _descendants(grind.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
