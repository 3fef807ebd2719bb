"""The isolated worker: limits, capped output, honest results, cleanup."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import pytest

from judge.catalog import Catalog
from judge.grade import grade
from judge.models import Status
from judge.worker.sandbox import Limits


def _grade_source(tmp_path: Path, source: str, **limits: float):  # type: ignore[no-untyped-def]
    path = tmp_path / "submission.py"
    path.write_text(source)
    return grade(Catalog().get("clipping"), path, limits=Limits(**limits) if limits else None)


def test_stdout_is_captured_and_capped(tmp_path: Path) -> None:
    """A print in a hot loop does not flood the terminal: output is kept, truncated, and says so."""
    verdict = _grade_source(tmp_path, "def clip_grad_norm_(p, m, n=2.0):\n    print('x' * 100000)\n    return 0\n")
    assert verdict.status is Status.FAILED
    assert "output truncated" in verdict.stdout
    assert len(verdict.stdout) < 70_000


def test_exit_before_results_is_never_a_pass(tmp_path: Path) -> None:
    """os._exit(0) at import: the child ends cleanly but without a result, so it crashed."""
    verdict = _grade_source(tmp_path, "import os\nos._exit(0)\n")
    assert verdict.status is Status.CRASHED
    assert "without producing a result" in verdict.message


def test_sys_exit_inside_the_function_is_a_failed_check(tmp_path: Path) -> None:
    verdict = _grade_source(tmp_path, "import sys\ndef clip_grad_norm_(p, m, n=2.0):\n    sys.exit(0)\n")
    assert verdict.status is Status.FAILED
    assert "called exit(0)" in verdict.checks[0].message


def _alive(cmdline: str) -> bool:
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes().replace(b"\0", b" ").strip() == cmdline.encode():
                return (proc / "stat").read_text().split()[2] != "Z"
        except OSError:
            continue
    return False


def test_timeout_kills_the_process_group_and_leaves_no_temp_dir(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A child that starts a sleeper and loops: killed at the limit with its children, no temp left."""
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    source = (
        "import subprocess\n"
        "subprocess.Popen(['sleep', '987.654'])\n"
        "def clip_grad_norm_(params, m, n=2.0):\n    while True:\n        pass\n"
    )
    verdict = _grade_source(tmp_path, source, wall_s=3.0)
    assert verdict.status is Status.TIMEOUT, verdict.message
    # The loop is lines 4-5; the stack dump catches it on either.
    assert re.search(r"last seen at line [45]\b", verdict.message), verdict.message
    assert not _alive("sleep 987.654")
    assert list(private_tmp.iterdir()) == [], list(private_tmp.iterdir())


def test_forged_result_file_is_not_trusted(tmp_path: Path) -> None:
    """A submission that writes result.json itself and leaves: forged, so crashed, never passed."""
    source = (
        "import json, os\n"
        "json.dump({'token': 'guess', 'subjects': {}}, open('result.json', 'w'))\n"
        "os._exit(0)\n"
    )
    verdict = _grade_source(tmp_path, source)
    assert verdict.status is Status.CRASHED
    assert "forged" in verdict.message or "malformed" in verdict.message


def test_a_warm_worker_outlives_the_thread_that_started_it() -> None:
    """grind watch grades each save in a thread of its own: the warm server must survive that
    thread (bubblewrap's --die-with-parent follows the starting *thread*), or every save would
    pay a torch import again."""
    import threading

    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    exercise = Catalog().get("clipping")
    correct = Path(__file__).parent / "submissions" / "clipping" / "correct_loop.py"
    servers, statuses = [], []
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        def one() -> None:
            statuses.append(grade(exercise, correct, worker=worker).status)
            servers.append(worker.proc.pid if worker.proc else None)

        for _ in range(2):
            thread = threading.Thread(target=one)
            thread.start()
            thread.join()
    assert statuses == [Status.PASSED, Status.PASSED]
    assert servers[0] is not None and servers[0] == servers[1]


def test_a_warm_job_inherits_the_optimizer_machinery_when_its_checks_use_torch_optim(course: Path) -> None:
    """The first torch optimizer in a process imports torch._dynamo (as long as importing torch).
    When an exercise's checks or the job's files name torch.optim, the warm server imports
    torch._dynamo before the job, so no job pays for it again; when nothing does (clipping),
    nobody pays for it."""
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    learner = course / "clip.py"
    correct = Path(__file__).parent / "submissions" / "clipping" / "correct_loop.py"
    learner.write_text("import sys\nprint('dynamo already imported:', 'torch._dynamo' in sys.modules)\n"
                       + correct.read_text())
    checks = course / "solutions" / "clipping" / "checks.py"
    plain_checks, plain_learner = checks.read_text(), learner.read_text()
    seen = []
    # Nobody names it; the checks' code names it; only the learner's file does (an Optimizer
    # subclass imports torch._dynamo when built: 3 s of every such job when the checks use only
    # the kit). A mere optimizer.step() does not count, nor do the checks' comments and
    # docstrings (a docstring's "as in torch.optim.AdamW" cost every training-loop job 18 ms):
    # every fork of a server holding it costs more.
    for note, mention in (("", ""), ("\nimport torch.optim as _optim  # these cases build one\n", ""),
                          ("", "\n# written as a torch.optim.Optimizer subclass elsewhere\n"),
                          ("", "\n# then optimizer.step() and optimizer.zero_grad()\n"),
                          ('\n"""Unlike torch.optim.AdamW, nothing here builds an optimizer."""\n# torch.optim\n', "")):
        checks.write_text(plain_checks + note)
        learner.write_text(plain_learner + mention)
        exercise = Catalog().get("clipping")
        with WarmWorker(hidden_from_learners(exercise)) as worker:
            verdict = grade(exercise, learner, worker=worker)
        assert verdict.status is Status.PASSED, verdict.message
        seen.append("dynamo already imported: True" in verdict.stdout)
    assert seen == [False, True, True, False, False]


def test_a_warm_job_starts_from_a_frozen_heap(course: Path) -> None:
    """The warm server freezes its heap (gc.freeze, torch's functions indexed by their code)
    before it forks: a job's forbidden-API guards then look torch's functions up instead of
    walking every object torch made, in every job."""
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    learner = course / "clip.py"
    correct = Path(__file__).parent / "submissions" / "clipping" / "correct_loop.py"
    learner.write_text("import gc\nprint('frozen:', gc.get_freeze_count() > 10_000)\n" + correct.read_text())
    exercise = Catalog().get("clipping")
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        verdict = grade(exercise, learner, worker=worker)
    assert verdict.status is Status.PASSED, verdict.message
    assert "frozen: True" in verdict.stdout


def test_each_case_instance_starts_from_seed_0_without_queueing_a_cuda_seed(course: Path) -> None:
    """Every case instance starts from torch's generator seeded with 0, as before, but only the
    CPU generator is reset per instance: torch.manual_seed(0) runs once per job, so the CUDA
    seed it queues (recording the caller's stack, milliseconds each) is queued once, not once
    per instance. The learner's file counts the stacks recorded from its import on."""
    learner = course / "clip.py"
    correct = Path(__file__).parent / "submissions" / "clipping" / "correct_loop.py"
    learner.write_text(correct.read_text() + (
        "\nimport torch, traceback\n_graded, _stack, _stacks = clip_grad_norm_, traceback.format_stack, []\n"
        "traceback.format_stack = lambda *a, **k: _stacks.append(1) or _stack(*a, **k)\n\n\n"
        "def clip_grad_norm_(*args, **kwargs):\n"
        "    print('seen', len(_stacks), torch.initial_seed())\n"
        "    return _graded(*args, **kwargs)\n"))
    verdict = grade(Catalog().get("clipping"), learner)
    assert verdict.status is Status.PASSED, verdict.message
    seen = [line for line in verdict.stdout.splitlines() if line.startswith("seen ")]
    assert len(seen) > 10 and set(seen) == {"seen 0 0"}, seen[:3]


def test_a_worker_that_never_started_is_said_as_grinds_problem_not_the_learners(tmp_path: Path) -> None:
    """A child still importing torch when its start-up clock ran out (a busy machine) ran none of
    the submission: the verdict says so as grind's, never "the submission crashed the worker"."""
    from judge.pipeline import verdict_from_outcome
    from judge.worker.sandbox import Limits, RunOutcome, _conclude

    outcome = _conclude(RunOutcome(status="ok", returncode=-9), str(tmp_path), "token", Limits(), timed_out=True,
                        started=False)
    verdict = verdict_from_outcome(Catalog().get("clipping"), None, outcome, str(tmp_path / "clipping.py"))
    assert verdict.status is Status.CRASHED
    assert verdict.message.startswith("grind's worker did not get going") and "run it again" in verdict.message
    assert "The submission crashed" not in verdict.message


def test_a_run_folder_is_removed_however_deep_or_locked_it_is(tmp_path: Path) -> None:
    """What a submission leaves in its run folder is removed, never followed out of it, and never
    raises: 3000 nested folders (os.walk and shutil.rmtree recursed into a RecursionError, grind's
    internal error, leaving the folder behind; their paths also pass PATH_MAX), a folder locked
    with chmod 0, and a link to a folder outside whose file must survive."""
    import os

    from judge.worker.sandbox import remove_tree

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the run's")
    run = tmp_path / "run"
    run.mkdir()
    (run / "link").symlink_to(outside)
    locked = run / "locked"
    (locked / "inner").mkdir(parents=True)
    (locked / "inner" / "file").write_text("x")
    (locked / "file").write_text("x")
    # 3000 levels, built relative to one open folder at a time (their paths pass PATH_MAX)
    fd = os.open(run, os.O_RDONLY)
    for _ in range(3000):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    os.chmod(locked / "inner", 0)
    os.chmod(locked, 0o500)  # listable, but nothing in it may be removed
    remove_tree(str(run))
    assert not run.exists()
    assert (outside / "keep.txt").read_text() == "not the run's"


def test_removing_a_run_folder_never_empties_folders_above_it_when_a_folder_moves_mid_walk(tmp_path: Path,
                                                                                          monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A process of the run's user that outlived grind (a setsid grandchild on a laptop, `nobody`
    under a root grind) may move a folder while remove_tree (or the sweep) is inside it. The walk
    used to climb back with ``..`` and one remembered name per level, so a folder moved two
    levels up made it empty the two folders above the run's (red team 2,
    drive_remove_tree_dotdot.py): files outside every run folder went. A patched os.unlink plays
    the mover, deterministically; the files above must survive and the run's folder must go."""
    from judge.worker import sandbox

    above, upper = tmp_path / "L1", tmp_path / "L1" / "L2"
    run = upper / "grind-run-x"
    (run / "a" / "b" / "c").mkdir(parents=True)
    for i in range(50):
        (run / "a" / "b" / "c" / f"f{i}").write_text("")
    (above / "victim.txt").write_text("must survive")
    (upper / "victim.txt").write_text("must survive")
    (above / "victimdir").mkdir()
    (above / "victimdir" / "keep").write_text("must survive")
    real_unlink, moved = os.unlink, []

    def unlink(name, *args, dir_fd=None, **kwargs):  # type: ignore[no-untyped-def]
        if not moved and str(name).startswith("f"):
            os.rename(run / "a" / "b" / "c", run / "c")  # c jumps up while the walk is inside it
            moved.append(name)
        return real_unlink(name, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    sandbox.remove_tree(str(run))
    monkeypatch.setattr(os, "unlink", real_unlink)
    assert moved, "the mover never ran"
    assert (above / "victim.txt").read_text() == "must survive"
    assert (upper / "victim.txt").read_text() == "must survive"
    assert (above / "victimdir" / "keep").read_text() == "must survive"
    assert not run.exists()


def test_removing_a_deep_run_folder_re_opens_levels_by_identity_when_one_above_was_moved(tmp_path: Path,
                                                                                       monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Past _CHECKPOINT levels the walk closes the descriptors of the levels far above it and
    re-opens them by name on the way back up, each checked against what it saw going down. A
    level moved meanwhile (here the 5th of 100, to the run's top) is not followed by its old
    name: the walk gives up that branch, then finds it at its new place and removes it there,
    and the folders above the run's keep their files. The run sits 8 folders below tmp_path so
    that a walk that does escape (the ``..`` one went 5 levels up here) empties only those."""
    from judge.worker import sandbox

    outer = tmp_path.joinpath(*[f"o{i}" for i in range(8)])
    run = outer / "run"
    deep = run.joinpath(*["d"] * 100)
    deep.mkdir(parents=True)
    (deep / "f").write_text("")
    victims = [folder / "victim.txt" for folder in [outer, *outer.parents][:8]]
    for victim in victims:
        victim.write_text("must survive")
    real_unlink, moved = os.unlink, []

    def unlink(name, *args, dir_fd=None, **kwargs):  # type: ignore[no-untyped-def]
        if not moved and name == "f":
            os.rename(run.joinpath(*["d"] * 5), run / "moved")
            moved.append(name)
        return real_unlink(name, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    sandbox.remove_tree(str(run))
    monkeypatch.setattr(os, "unlink", real_unlink)
    assert moved, "the mover never ran"
    assert [victim.exists() for victim in victims] == [True] * 8
    assert not run.exists()


def test_a_warm_server_runs_the_checks_as_they_are_now_not_as_it_compiled_them(course: Path) -> None:
    """The warm server compiles each job's checks and kit for the jobs after it (runner.precompile):
    an author who edits the checks between two grades, in the same server and under the same file
    name, gets the edited checks run, never the server's copy of the old text."""
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    checks = course / "solutions" / "clipping" / "checks.py"
    plain = checks.read_text()
    correct = Path(__file__).parent / "submissions" / "clipping" / "correct_loop.py"
    seen = []
    with WarmWorker(hidden_from_learners(Catalog().get("clipping"))) as worker:
        for version in ("one", "one", "two"):
            checks.write_text(plain + f"\nprint('checks version {version}')\n")
            verdict = grade(Catalog().get("clipping"), correct, worker=worker)
            assert verdict.status is Status.PASSED, verdict.message
            seen.append(re.findall(r"checks version (\w+)", verdict.stdout))
    assert seen == [["one"], ["one"], ["two"]], seen


def test_closing_a_warm_worker_removes_its_cgroup_and_its_spares() -> None:
    """The warm server keeps the next job's process (its spare) waiting in a pids cgroup of its
    own, below the server's. Closing the worker kills the server without asking it: the spare's
    cgroup used to stay, so the server's could not be removed either (200 tries, 2 s on every
    close of watch or a batch worker, and one leaked cgroup per close)."""
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    exercise = Catalog().get("clipping")
    worker = WarmWorker(hidden_from_learners(exercise))
    try:
        assert grade(exercise, Path(__file__).parent / "submissions" / "clipping" / "correct_loop.py",
                     worker=worker).passed
        cgroup = worker.cgroup.path if worker.cgroup is not None else None
        if cgroup is None:
            pytest.skip("no pids cgroup here (an unprivileged user): nothing to remove")
        import time

        deadline = time.monotonic() + 30  # the server forks the spare once the last job is gone
        while not [p for p in cgroup.iterdir() if p.is_dir()] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [p for p in cgroup.iterdir() if p.is_dir()], "the spare waits in a cgroup of its own"
    finally:
        worker.close()
    assert not cgroup.exists(), sorted(cgroup.iterdir())


def test_a_warm_job_cannot_find_the_previous_jobs_prints_in_its_memory(tmp_path: Path) -> None:
    """A fork of the warm server is a copy of its memory, freed memory included. The server used to
    collect each job's stdout and stderr itself (to cap them and put them in its reply), so the
    next job's fork held a classmate's prints in freed memory, and a scan of /proc/self/mem found
    them. Now the job's streams go through FIFOs straight to grind, and the server never holds a
    byte of them: job 2 scans its memory and finds nothing of job 1's secret (which still reaches
    job 1's verdict, whole)."""
    import secrets as _secrets

    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    here = Path(__file__).parent / "hostile_warm"
    secret = _secrets.token_hex(16)
    first = tmp_path / "first.py"
    first.write_text((here / "prints_a_secret.py").read_text().replace("SECRET_HEX_PLACEHOLDER", secret))
    exercise = Catalog().get("clipping")
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        one = grade(exercise, first, worker=worker)
        assert f"GRINDLEAK:{secret}" in one.stdout and f"GRINDLEAK:{secret}" in one.stderr
        two = grade(exercise, here / "finds_the_secret.py", limits=Limits(wall_s=120), worker=worker)
    scanned = re.search(r"scanned (\d+) MB", two.stdout)
    assert scanned and int(scanned.group(1)) > 50, (two.message, two.stdout[:2000])  # torch's heap was read
    assert secret[::-1] not in two.stdout, "job 2 found job 1's printed secret in its own memory"


_HOLD_A_WARM_WORKER = """
import sys, tempfile, time
tempfile.tempdir = sys.argv[1]
from judge.worker.sandbox import WarmWorker
worker = WarmWorker([])
worker.start()
print(worker.root, flush=True)
time.sleep(600)
"""


def test_a_killed_graders_warm_folder_is_swept_by_the_next_run_and_a_live_one_is_not(
        tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``grind grade`` or watch killed with SIGKILL cannot remove its warm server's folder, which
    holds the jobs' files (a classmate's source among them while it runs). Each warm folder is
    locked by its grind for as long as it lives; the next grind run removes every folder whose
    lock nobody holds, and never one whose grind is still running."""
    import signal
    import subprocess
    import sys

    from judge.worker import folders, sandbox

    from .conftest import ROOT

    private = tmp_path / "tmp"
    private.mkdir()
    graders, roots = [], []
    try:
        for _ in range(2):
            proc = subprocess.Popen([sys.executable, "-c", _HOLD_A_WARM_WORKER, str(private)], cwd=ROOT,
                                    stdout=subprocess.PIPE, text=True, start_new_session=True)
            graders.append(proc)
            assert proc.stdout is not None
            roots.append(Path(proc.stdout.readline().strip()))
        killed, alive = roots
        assert killed.is_dir() and alive.is_dir() and killed.parent == private
        graders[0].send_signal(signal.SIGKILL)
        graders[0].wait()
        assert killed.is_dir(), "a SIGKILLed grader removes nothing itself"
        monkeypatch.setattr(tempfile, "tempdir", str(private))
        monkeypatch.setattr(folders, "STALE_AFTER_S", 0.0)
        monkeypatch.setattr(folders, "_SWEPT", False)
        verdict = grade(Catalog().get("clipping"), Path(__file__).parent / "submissions" / "clipping" / "correct_loop.py")
        assert verdict.passed, verdict.message
        assert not killed.exists(), "the killed grader's warm folder was left"
        assert alive.is_dir(), "a folder in use by a live grader was swept"
    finally:
        for proc in graders:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for root in roots:
            sandbox.remove_tree(str(root))


@pytest.mark.parametrize("attack", ["disk_many_files", "disk_unlinked_open"])
@pytest.mark.parametrize("mode", ["cold", "warm"])
def test_the_total_disk_a_run_writes_is_capped_not_only_each_file(attack: str, mode: str) -> None:
    """RLIMIT_FSIZE caps each file; many files under it, or files deleted while held open, used
    to fill the disk until the wall clock. The run's total is capped now (a tmpfs of that size
    where grind may mount one, a watch from grind's side everywhere): the run is stopped with a
    "disk limit" verdict instead of a timeout, and a correct answer under the same cap passes."""
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    exercise = Catalog().get("clipping")
    limits = Limits(wall_s=60, disk_mb=32)
    hostile = Path(__file__).parent / "hostile_warm" / f"{attack}.py"
    correct = Path(__file__).parent / "submissions" / "clipping" / "correct_loop.py"
    if mode == "warm":
        with WarmWorker(hidden_from_learners(exercise)) as worker:
            verdict = grade(exercise, hostile, limits=limits, worker=worker)
            after = grade(exercise, correct, limits=limits, worker=worker)
    else:
        verdict = grade(exercise, hostile, limits=limits)
        after = grade(exercise, correct, limits=limits)
    assert verdict.status is Status.CRASHED, (verdict.status, verdict.message, verdict.stdout)
    assert "disk limit of 32 MB" in verdict.message, verdict.message
    assert after.passed, after.message


_KILLED_MID_RUN = """
import sys, tempfile
tempfile.tempdir = sys.argv[1]
from pathlib import Path
from judge.catalog import Catalog
from judge.grade import grade
from judge.worker.sandbox import Limits
source = Path(sys.argv[1]) / "sleeper.py"
source.write_text("import time\\nprint('started', flush=True)\\ntime.sleep(600)\\n")
grade(Catalog().get("clipping"), source, limits=Limits(wall_s=300))
"""


def test_a_cold_runs_folder_left_by_a_killed_grind_is_swept(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A ``grind run`` killed with SIGKILL cannot remove its cold run's folder: as root a tmpfs of
    the run's disk cap (memory, until unmounted), on a laptop a plain folder with whatever the run
    wrote. The next grind run removes it (and unmounts it): the folder itself is the lock, held
    while its grind lives, so the learner's cwd holds no lock file. Runs as root and in CI's
    laptop mode (unprivileged), where such folders used to stay for good."""
    import signal
    import subprocess
    import sys
    import time

    from judge.worker import folders, sandbox

    from .conftest import ROOT

    root = os.geteuid() == 0
    private = tmp_path / "tmp"
    private.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_MID_RUN, str(private)], cwd=ROOT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120  # a hang guard: the grader imports torch first
        runs: list[Path] = []
        while time.monotonic() < deadline and not runs:
            runs = [p for p in private.glob("grind-run-*") if (os.path.ismount(p) or not root) and any(p.iterdir())]
            time.sleep(0.2)
        assert runs, "the cold run never started"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert runs[0].exists(), "a SIGKILLed grind removes nothing itself"
    assert os.path.ismount(runs[0]) == root, "as root the run's folder is a tmpfs of its own"
    assert sandbox.sweep_warm_folders(str(private)) == [], "a folder younger than STALE_AFTER_S is never taken"
    monkeypatch.setattr(folders, "STALE_AFTER_S", 0.0)
    assert str(runs[0]) in sandbox.sweep_warm_folders(str(private))
    assert not runs[0].exists() and not os.path.ismount(runs[0])


def test_a_cold_run_folder_in_use_is_never_swept(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The other side: a run folder whose grind is alive (it holds the folder's lock) stays,
    however old it is."""
    from judge.worker import folders, sandbox
    from judge.worker.isolation import isolation

    monkeypatch.setattr(folders.tempfile, "tempdir", str(tmp_path))
    workdir = folders._make_workdir(isolation())
    try:
        monkeypatch.setattr(folders, "STALE_AFTER_S", 0.0)
        assert sandbox.sweep_warm_folders(str(tmp_path)) == []
        assert os.path.isdir(workdir)
    finally:
        sandbox.remove_tree(workdir)
    assert not os.path.exists(workdir) and workdir not in folders._HELD


def test_a_warm_job_may_wrap_its_stdout_buffer_as_a_cold_one_may() -> None:
    """A warm job's stdout is a FIFO to grind. Its stream objects used to be made before the FIFO
    took fd 1, over /dev/null, which is seekable: a submission that wrapped sys.stdout.buffer in
    a TextIOWrapper of its own (which asks a seekable file its position) crashed "Illegal seek"
    warm and passed cold. The streams are made over the FIFO now."""
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    from .conftest import ADVERSARIAL

    exercise = Catalog().get("clipping")
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        for name in ("replaces_stdio_correct", "closes_stdout_correct", "surrogates_on_stdio_correct"):
            verdict = grade(exercise, ADVERSARIAL / f"{name}.py", worker=worker)
            assert verdict.status is Status.PASSED, (name, verdict.message)


_REPLY_FORGER = '''
import json, os

def _ancestors():
    pid = os.getpid()
    for _ in range(6):
        with open(f"/proc/{pid}/stat", "rb") as handle:
            pid = int(handle.read().rsplit(b")", 1)[1].split()[1])
        if pid < 1:
            return
        yield pid  # the server, and bwrap's pid 1 (it holds the server's pipes too)
        if pid == 1:
            return

for pid in _ancestors():
    try:
        fd = os.open(f"/proc/{pid}/fd/1", os.O_WRONLY)
    except OSError as error:
        print("forger: refused", pid, type(error).__name__)
        continue
    if not __import__("stat").S_ISFIFO(os.fstat(fd).st_mode):
        os.close(fd)
        continue
    os.write(fd, (json.dumps({"exit": 0, "timed_out": False, "ready": True}) + "\\n"
                  + json.dumps({"exit": -9, "timed_out": True, "ready": True, "last_case": "sabotaged"}) + "\\n"
                  ).encode())
    os.close(fd)
    print("forger: wrote into", pid)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 0.0
'''


def test_a_warm_job_cannot_forge_the_replies_of_the_classmates_after_it_under_bubblewrap_without_landlock(
        tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Under bubblewrap on a kernel without Landlock (simulated as tests/test_seccomp.py does),
    nothing scoped a warm job away from its server: it reopened the server's pipe to grind through
    /proc/<server>/fd/1 and wrote two reply lines (red team 2, warm_reply_forge.py). grind took
    one line per job in order, so both classmates graded after it by the same server got the
    forger's lines (crashed). bubblewrap's pid 1 held the same pipes (its stdio). Now the pipes
    are passed as other fds (pid 1 keeps only /dev/null), the server is not dumpable while a job
    runs (the open is refused), and each reply carries its job's token (a line that is not this
    job's is refused): the two classmates pass, and the forger's own verdict is not a pass."""
    from judge.grade import hidden_from_learners
    from judge.worker import isolation as isolation_module
    from judge.worker.sandbox import WarmWorker

    if isolation_module.isolation().level != "bubblewrap":
        pytest.skip(f"needs bubblewrap (level here: {isolation_module.isolation().level})")
    forger = tmp_path / "forger.py"
    forger.write_text(_REPLY_FORGER)
    correct = Path(__file__).parent / "submissions" / "clipping" / "correct_loop.py"
    monkeypatch.setattr(isolation_module, "_probe_landlock", lambda: 0)
    isolation_module.isolation.cache_clear()
    try:
        assert not isolation_module.isolation().landlock_abi
        exercise = Catalog().get("clipping")
        with WarmWorker(hidden_from_learners(exercise)) as worker:
            verdicts = [grade(exercise, path, worker=worker) for path in (forger, correct, correct)]
    finally:
        monkeypatch.undo()
        isolation_module.isolation.cache_clear()
    assert "forger: wrote" not in verdicts[0].stdout, verdicts[0].stdout  # the server's pipes are out of reach
    assert verdicts[0].status is not Status.PASSED, verdicts[0].message
    assert [v.status for v in verdicts[1:]] == [Status.PASSED, Status.PASSED], [v.message for v in verdicts[1:]]


_KILLED_WITH_A_SURVIVOR = """
import sys, tempfile
tempfile.tempdir = sys.argv[1]
from pathlib import Path
from judge.catalog import Catalog
from judge.grade import grade
from judge.worker.sandbox import Limits
source = Path(sys.argv[1]) / "survivor.py"
source.write_text('''
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open("survivor.pid", "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(600)
        os._exit(0)
    os._exit(0)
time.sleep(600)
''')
grade(Catalog().get("clipping"), source, limits=Limits(wall_s=300))
"""


def _processes_in(folder: Path) -> list[int]:
    """The processes whose working folder is ``folder`` (a run's, here), from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/cwd") == str(folder):
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_a_double_forked_grandchild_does_not_outlive_a_sigkilled_grind(tmp_path: Path) -> None:
    """A submission whose grandchild double-forks and takes its own session, graded cold by a grind
    that is then killed with SIGKILL: the run's waiter and worker died with grind (a parent-death
    SIGKILL), but the grandchild, re-parented to init, kept running (no wall clock, no disk watch)
    in a folder the next grind sweeps (red team 2, sweep_survivor_submission.py; at the laptop
    level, where no PID namespace ends it). Now the waiter catches grind's death and kills every
    process of the run first. Polled with a generous bound: a hang guard, not a speed claim."""
    import signal
    import subprocess
    import sys
    import time

    from judge.worker import sandbox

    from .conftest import ROOT

    private = tmp_path / "tmp"
    private.mkdir()
    errors = (tmp_path / "grader.err").open("w")
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WITH_A_SURVIVOR, str(private)], cwd=ROOT,
                            start_new_session=True, stderr=errors)
    runs: list[Path] = []
    try:
        # A hang guard, generous: the grader imports torch and may first compute clipping's
        # reference, on a machine the rest of the suite keeps busy.
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not runs and proc.poll() is None:
            runs = [p for p in private.glob("grind-run-*") if (p / "survivor.pid").exists()]
            time.sleep(0.2)
        errors.flush()
        assert runs, f"the grandchild never started; the grader said: {(tmp_path / 'grader.err').read_text()[-2000:]}"
        time.sleep(0.5)  # its pid file is written before it sleeps
        os.kill(proc.pid, signal.SIGKILL)  # grind, and grind only
        proc.wait()
        left = _processes_in(runs[0])
        deadline = time.monotonic() + 60
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = _processes_in(runs[0])
        assert not left, f"processes of the run outlived grind: {left}"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        for run in runs:
            for pid in _processes_in(run):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            sandbox.remove_tree(str(run))


def test_a_reply_line_that_is_not_the_jobs_own_is_refused_and_never_shifts_onto_the_next_job(
        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The token check alone, at any level: a line without the job's token reaching grind ahead of
    the server's reply (what a job that reached the server's pipe wrote) is refused: that job gets
    a crashed verdict saying its reply was forged, the server is replaced, and the two jobs after
    it pass. Before replies carried the job's token the line was taken as that job's reply, and
    each later job got the reply of the one before it."""
    import json

    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    exercise = Catalog().get("clipping")
    correct = Path(__file__).parent / "submissions" / "clipping" / "correct_loop.py"
    forged = [json.dumps({"exit": 0, "timed_out": False, "ready": True}).encode() + b"\n"]
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        real_receive = worker._receive

        def receive(timeout: float) -> bytes | None:
            return forged.pop() if forged else real_receive(timeout)

        assert grade(exercise, correct, worker=worker).passed  # the reference's jobs are behind us
        monkeypatch.setattr(worker, "_receive", receive)
        verdicts = [grade(exercise, correct, worker=worker) for _ in range(3)]
    assert verdicts[0].status is Status.CRASHED and "forged" in verdicts[0].message, verdicts[0].message
    assert [v.status for v in verdicts[1:]] == [Status.PASSED, Status.PASSED], [v.message for v in verdicts[1:]]


def test_a_list_of_plain_floats_or_bools_becomes_the_array_its_entries_would() -> None:
    """A long run's per-step record is converted in one step (numpy's own list conversion, held
    against the entry-by-entry stack it replaces); a mixed or subclassed list still goes entry
    by entry, and is refused as before."""
    import numpy as np
    import torch

    from judge.worker.child.values import BadOutput, to_array

    for value in ([1.5, float("nan"), float("inf"), -0.0], [True, False, True]):
        array = to_array(value, np, torch)
        stacked = np.stack([np.array(v) for v in value])
        assert array.dtype == stacked.dtype and array.shape == stacked.shape
        assert np.array_equal(array, stacked, equal_nan=True)
    assert to_array([1, 2.5], np, torch).dtype == np.float64  # mixed: entry by entry, as before

    class Lying(float):
        pass

    with pytest.raises(BadOutput):
        to_array([1.0, Lying(2.0)], np, torch)


def _flaky_bwrap(tmp_path: Path, real: str, failures: int) -> Path:
    """A bubblewrap that fails its first ``failures`` starts the way the real one does when the
    mount table changes while it remounts / (bubblewrap issue #650), then is the real one."""
    count = tmp_path / "starts"
    count.write_text("0")
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        f"n=$(cat {count}); echo $((n + 1)) > {count}\n"
        f"if [ \"$n\" -lt {failures} ]; then\n"
        "  echo 'bwrap: Can'\"'\"'t bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount "
        "\"/newroot/tmp/grind-run-gone\": No such file or directory' >&2\n"
        "  exit 1\n"
        "fi\n"
        f"exec {real} \"$@\"\n")
    fake.chmod(0o755)
    return count


@pytest.mark.parametrize("failures, mode, recovers", [(1, "cold", True), (2, "cold", True), (1, "warm", True),
                                                      (2, "warm", True), (3, "cold", False)])
def test_a_sandbox_bubblewrap_could_not_set_up_is_set_up_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: int, mode: str, recovers: bool) -> None:
    """bubblewrap exits 1 before the runner starts when another run's tmpfs goes away while it
    remounts / read-only (CI's root mode saw it once at -n 3: a stub reported 'crashed'). Nothing
    of the learner's has run then, so grind starts the sandbox again, up to BWRAP_TRIES times in
    all (three), and only then reports the crash."""
    import dataclasses

    from judge.grade import hidden_from_learners
    from judge.worker import isolation as levels
    from judge.worker import outputs, sandbox, warm

    real = levels.isolation()
    if not real.bwrap:
        pytest.skip(f"isolation level {real.level}: no bubblewrap to lose the race")
    count = _flaky_bwrap(tmp_path, real.bwrap, failures)
    fake = dataclasses.replace(real, bwrap=str(tmp_path / "bwrap"))
    for module in (levels, sandbox, warm, outputs):
        monkeypatch.setattr(module, "isolation", lambda: fake)
    exercise = Catalog().get("clipping")
    source = Path(__file__).parent / "submissions" / "clipping" / "pitfall_sum_of_norms.py"
    if mode == "warm":
        with sandbox.WarmWorker(hidden_from_learners(exercise)) as worker:
            verdict = grade(exercise, source, worker=worker)
    else:
        verdict = grade(exercise, source)
    starts = int(count.read_text())
    if recovers:
        assert verdict.status is Status.FAILED and verdict.diagnosis is not None, verdict.message
        assert verdict.diagnosis.slug == "sum-of-norms"
    else:
        assert verdict.status is Status.CRASHED and "bwrap: Can't bind mount" in verdict.stderr, verdict.message
    # the reference may have been graded in the same run (a cold cache): at least the tries of one sandbox
    assert starts >= min(failures + 1, 3)


def test_the_seal_reads_only_the_modules_a_job_added_and_falls_back_when_unsure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """sources._blocked_modules in a fork of the warm server reads the names it noted and those
    added since, from the end of sys.modules; whatever it returns must be what a walk of every
    name finds, also when a name before the noted ones was removed (then it walks)."""
    import types as types_

    from judge.worker.child import sources

    def walked() -> list[str]:
        return sorted(name for name in sys.modules if sources._blocked(name))

    monkeypatch.setattr(sources, "_NOTED", [])
    monkeypatch.setitem(sys.modules, "judge.zz_noted", types_.ModuleType("judge.zz_noted"))
    monkeypatch.setitem(sys.modules, "zz_plain_a", types_.ModuleType("zz_plain_a"))
    sources.note_modules()
    assert "judge.zz_noted" in sources._NOTED[2]
    assert sorted(sources._blocked_modules()) == walked()  # nothing added
    monkeypatch.setitem(sys.modules, "solutions.zz_added", types_.ModuleType("solutions.zz_added"))
    monkeypatch.setitem(sys.modules, "zz_plain_b", types_.ModuleType("zz_plain_b"))
    found = sources._blocked_modules()
    assert "solutions.zz_added" in found and sorted(found) == walked()
    # a name before the noted last one removed, one added: the same length, another order: walked
    del sys.modules["zz_plain_a"]
    monkeypatch.setitem(sys.modules, "judge.zz_late", types_.ModuleType("judge.zz_late"))
    found = sources._blocked_modules()
    assert "judge.zz_late" in found and sorted(found) == walked()
    monkeypatch.setattr(sources, "_NOTED", [])  # a cold run: every name
    assert sorted(sources._blocked_modules()) == walked()
