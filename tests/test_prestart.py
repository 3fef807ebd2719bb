"""A cold run's child started before its job (judge.worker.sandbox.prestart), and the cold path's
other shortcuts: the Landlock probe in a fork, the wait on a process descriptor.

Every cold child confines itself and imports torch before it reads its job (runner.main), so a
cold ``grind run`` starts it as soon as it knows the exercise. What must hold: the learner's job
runs in that very child when it fits, any other job starts its own, and a child no job took is
killed with its folder, by the fast path once its grade is over and at exit whatever happened.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from judge.catalog import Catalog
from judge.executor import learner_limits, prestart_learner
from judge.grade import grade
from judge.models import Status
from judge.paths import hidden_from_learners
from judge.worker import isolation as isolation_module
from judge.worker import landlock, sandbox

from .conftest import ROOT, SUBMISSIONS

CORRECT = SUBMISSIONS / "clipping" / "correct_loop.py"


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def no_prestart_left() -> object:
    yield None
    sandbox.drop_prestarted()


def test_the_learners_job_runs_in_the_prestarted_child(no_prestart_left: object,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    exercise = Catalog().get("clipping")
    prestart_learner(exercise)
    start = sandbox._PRESTARTED
    assert start is not None and start.child.proc is not None
    pid, workdir = start.child.proc.pid, start.workdir
    begun: list[tuple[object, ...]] = []
    real = sandbox._ColdStart.begin.__func__  # type: ignore[attr-defined]

    def counted(cls, limits, hidden, witnessed):  # type: ignore[no-untyped-def]
        begun.append((limits, tuple(hidden)))
        return real(cls, limits, hidden, witnessed)

    monkeypatch.setattr(sandbox._ColdStart, "begin", classmethod(counted))
    verdict = grade(exercise, CORRECT)
    assert verdict.status is Status.PASSED, verdict.message
    assert sandbox._PRESTARTED is None, "the learner's job took the prestarted child"
    learner_key = (learner_limits(exercise), tuple(hidden_from_learners(exercise)))
    assert learner_key not in begun, "no second child was started for the learner's job"
    assert not _alive(pid) and not os.path.exists(workdir), "the child and its folder are gone after the job"


def test_a_job_that_does_not_fit_the_prestarted_child_starts_its_own(no_prestart_left: object) -> None:
    exercise = Catalog().get("clipping")
    limits = learner_limits(exercise)
    other = sandbox.Limits(wall_s=limits.wall_s + 1, memory_mb=limits.memory_mb)
    sandbox.prestart(hidden_from_learners(exercise), other)
    start = sandbox._PRESTARTED
    assert start is not None and start.child.proc is not None
    verdict = grade(exercise, CORRECT)
    assert verdict.status is Status.PASSED, verdict.message
    assert sandbox._PRESTARTED is start and _alive(start.child.proc.pid), "other limits: left for a job that fits"
    sandbox.drop_prestarted()
    assert sandbox._PRESTARTED is None
    assert not _alive(start.child.proc.pid) and not os.path.exists(start.workdir)


def test_a_wrong_answer_in_the_prestarted_child_fails_as_in_its_own() -> None:
    exercise = Catalog().get("clipping")
    wrong = SUBMISSIONS / "clipping" / "pitfall_per_tensor.py"
    own = grade(exercise, wrong)
    prestart_learner(exercise)
    try:
        early = grade(exercise, wrong)
    finally:
        sandbox.drop_prestarted()
    assert own.status is Status.FAILED
    assert own.diagnosis is not None
    assert (early.status, early.message, early.diagnosis) == (own.status, own.message, own.diagnosis)


_UNTAKEN = """
import json, sys
from judge.catalog import Catalog
from judge.executor import prestart_learner
from judge.worker import sandbox
prestart_learner(Catalog().get("clipping"))
start = sandbox._PRESTARTED
print(json.dumps([start.child.proc.pid, start.workdir]), flush=True)
"""


def test_a_prestarted_child_no_job_took_is_killed_with_its_folder_at_exit(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _UNTAKEN], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    import json

    pid, workdir = json.loads(done.stdout)
    assert workdir.startswith(str(tmp_path))
    assert not _alive(pid)
    assert not os.path.exists(workdir), "the exit handler removed the untaken child's folder"


def test_the_fast_path_prestarts_no_child_for_a_file_that_does_not_parse(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from judge import fast_run

    started: list[object] = []
    monkeypatch.setattr(sandbox, "prestart", lambda *a, **k: started.append(a))
    monkeypatch.setenv("GRIND_NO_DAEMON", "1")
    broken = tmp_path / "clipping.py"
    broken.write_text("def clip_grad_norm_(parameters, max_norm:\n")
    args = fast_run.RunArgs("clipping", broken, False, True)
    early = fast_run._early(args, Catalog().get("clipping"), broken)
    assert early.verdict is not None and early.verdict.status is Status.ERROR
    assert started == []
    broken.write_text(CORRECT.read_text())
    fast_run._early(args, Catalog().get("clipping"), broken)
    assert len(started) == 1, "a file that parses gets its child started early"


def test_the_landlock_probe_in_a_fork_offers_the_abi_only_when_confining_works(
        monkeypatch: pytest.MonkeyPatch) -> None:
    abi = landlock.abi()
    if abi < 1:
        pytest.skip("this kernel has no Landlock: the probe has nothing to offer")
    assert isolation_module._probe_landlock() == abi

    def refused(*args: object, **kwargs: object) -> int:
        raise landlock.LandlockError("refused here")

    monkeypatch.setattr(landlock, "restrict", refused)
    assert isolation_module._probe_landlock() == 0, "a kernel (or a container) that refuses: no level offered"
    monkeypatch.setattr(landlock, "restrict", lambda *args, **kwargs: 0)
    assert isolation_module._probe_landlock() == 0, "a restriction that stops nothing: no level offered"
    monkeypatch.setattr(landlock, "restrict", lambda *args, **kwargs: os._exit(0))
    assert isolation_module._probe_landlock() == 0, "a probe that dies before it answers: no level offered"


def test_the_cold_wait_without_process_descriptors_still_sees_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels before 5.3 and other systems have no pidfd_open: Popen.wait's polling, as before."""
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    assert sandbox._pidfd(os.getpid()) is None
    verdict = grade(Catalog().get("clipping"), CORRECT)
    assert verdict.status is Status.PASSED, verdict.message


_SIGCHLD_IGNORED = """
import signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
from judge.worker import isolation, landlock
print(isolation._probe_landlock(), landlock.abi(), signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN)
isolation.isolation()
print(signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL)
"""


def test_a_sigchld_inherited_ignored_neither_hides_landlock_nor_stays(tmp_path: Path) -> None:
    """With SIGCHLD ignored the kernel reaps the probe's fork itself, and its exit status is lost:
    a review's grind then graded at limits-only. The probe answers on a pipe, and isolation()
    takes SIGCHLD's default back for the runs that follow."""
    if landlock.abi() < 1:
        pytest.skip("this kernel has no Landlock: the probe has nothing to offer")
    done = subprocess.run([sys.executable, "-c", _SIGCHLD_IGNORED], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    probed, abi, still_ignored, default_back = done.stdout.split()
    assert (probed, still_ignored, default_back) == (abi, "True", "True")


def test_where_grind_cannot_fork_the_probe_runs_in_an_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.12 warns when a process with threads forks; under -W error that is an exception."""
    abi = landlock.abi()
    if abi < 1:
        pytest.skip("this kernel has no Landlock: the probe has nothing to offer")

    def no_fork() -> int:
        raise DeprecationWarning("This process is multi-threaded, use of fork() may lead to deadlocks")

    monkeypatch.setattr(os, "fork", no_fork)
    assert isolation_module._probe_landlock() == abi


def test_the_first_run_of_a_session_with_no_daemon_yet_prestarts_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without GRIND_NO_DAEMON, a run that finds no daemon's socket is graded cold (and starts a
    daemon for the next run): that cold grade gets its child early as well."""
    from judge import daemon, fast_run

    started: list[object] = []
    real_prestart = sandbox.prestart

    def counted(*args: object, **kwargs: object) -> None:
        started.append(args)
        real_prestart(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sandbox, "prestart", counted)
    monkeypatch.setattr(daemon, "spawn", lambda hidden: None)  # no daemon started for later runs
    monkeypatch.delenv("GRIND_NO_DAEMON", raising=False)
    monkeypatch.setenv("GRIND_RUNTIME_DIR", str(tmp_path / "run"))
    args = fast_run.RunArgs("clipping", CORRECT, False, False)
    early = fast_run._early(args, Catalog().get("clipping"), CORRECT)
    assert early.worker is not None and early.worker.absent()
    assert early.verdict is not None and early.verdict.status is Status.PASSED, early.error
    assert len(started) == 1 and sandbox._PRESTARTED is None, "started early, and taken by the grade"


def test_a_daemon_is_absent_exactly_when_its_socket_is_not_there(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from judge import daemon

    monkeypatch.setenv("GRIND_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv("GRIND_NO_DAEMON", raising=False)
    executor = daemon.DaemonExecutor([])
    path = daemon.socket_path()
    assert path is not None and executor.absent()
    path.write_text("not a socket")
    assert executor.absent(), "a file in the socket's place: _ask grades cold"
    path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        assert not executor.absent(), "a socket there: the daemon is asked first, nothing prestarted"
    finally:
        listener.close()


_IGNORED_IN_A_THREAD = """
import json, os, pathlib, signal, sys, threading
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
from judge.catalog import Catalog
from judge.grade import grade
from judge.worker import isolation
out = {}
def go():
    out["level"] = isolation.isolation().level
    out["notes"] = list(isolation.isolation().notes)
    verdict = grade(Catalog().get(sys.argv[1]), pathlib.Path(sys.argv[2]))
    out["status"], out["message"] = verdict.status.value, verdict.message
thread = threading.Thread(target=go)
thread.start()
thread.join()
print(json.dumps(out))
"""


@pytest.mark.parametrize("name, answer", [("clipping", "clipping/correct_loop.py"),
                                          ("rank0-checkpoint", "rank0-checkpoint/alt_async_barrier.py")])
def test_an_ignored_sigchld_changes_neither_the_level_nor_a_witnessed_reference(
        name: str, answer: str, tmp_path: Path) -> None:
    """grind watch and batch grade in threads, where SIGCHLD's disposition cannot be changed. A
    review's run there lost bubblewrap (it waits forever for its child under an ignored SIGCHLD)
    and computed rank0-checkpoint's reference with none of its ranks' writes counted (the kernel
    reaped them), which then failed every correct answer from the cache. Every child grind
    starts takes the default back (limit_child, the runner)."""
    expected = isolation_module.isolation()
    done = subprocess.run([sys.executable, "-c", _IGNORED_IN_A_THREAD, name, str(SUBMISSIONS / answer)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, GRIND_CACHE_DIR=str(tmp_path / "cache"), GRIND_NO_DAEMON="1"))
    assert done.returncode == 0, done.stderr
    import json

    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["level"] == expected.level
    assert out["notes"][1:] == list(expected.notes) and out["notes"][0].startswith("SIGCHLD is ignored"), \
        "a thread cannot reset it: the level's notes say so (grind doctor)"
    assert out["status"] == "passed", out["message"]


def test_landlock_in_the_kernel_that_cannot_confine_here_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    if landlock.abi() < 1:
        pytest.skip("this kernel has no Landlock: nothing to say about it")
    monkeypatch.setattr(isolation_module, "_probe_landlock", lambda: 0)
    isolation_module.isolation.cache_clear()
    try:
        notes = isolation_module.isolation().notes
    finally:
        isolation_module.isolation.cache_clear()
    assert any("Landlock is in this kernel" in note for note in notes), notes
