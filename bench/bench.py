"""Speed and memory of grind, each figure a median ratio against a baseline measured in the same run.

    python bench/bench.py            # the full run (about 5 minutes on 2 cores)
    python bench/bench.py --quick    # fewer repetitions and a 20-submission batch
    python bench/bench.py --loop     # only the learner's loop: cold run, daemon, watch (add --quick)

Uses only Python's own timing (time.perf_counter, resource.getrusage) and subprocesses, so
anyone can rerun it. The machine is shared and noisy: read ratios, not absolute seconds.
"""

from __future__ import annotations

import argparse
import atexit
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# This checkout's judge, in this process and in every grind it starts: run as `python bench/bench.py`,
# Python puts bench/ first on the path, and an installed grind (`pip install .`) would then answer
# `from judge import ...` here while `python -m judge` ran the checkout's, two daemons' keys apart.
sys.path.insert(0, str(ROOT))
SUBMISSIONS = ROOT / "tests" / "submissions" / "clipping"
# What the `grind` console script runs (pip's script imports judge.entry and calls it), for the
# judge first on the path: `python -m judge` added runpy's 3 ms to every figure. A checkout from
# before the quick exit has only `main`.
GRIND = [sys.executable, "-c", "import sys; sys.argv[0] = 'grind'; import judge.entry as e; "
         "(getattr(e, 'script', None) or e.main)()"]


def timed(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False, cwd=cwd)
    return time.perf_counter() - start


def median_of(runs: int, fn) -> float:  # type: ignore[no-untyped-def]
    return statistics.median(fn() for _ in range(runs))


def _tree_kb(root: int) -> tuple[int, int]:
    """(PSS, RSS, anonymous PSS) of a process and all its descendants, summed, from /proc.

    PSS counts a page shared by n processes as 1/n in each, so the sum over a tree is the memory
    the tree really uses; summed RSS counts shared pages (libraries, forked copies) again in
    every process and overstates a tree of several pythons. Both move with the machine: a
    library page mapped by other processes (other pythons that imported torch) counts less in
    PSS. The anonymous part of PSS (``Pss_Anon``: heaps, module objects, copied-on-write pages)
    is shared only between a process and its forks, all of them in the tree, so it does not:
    the steadier reading, reported beside PSS (the goal's measure)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    pss = rss = anon = 0
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss_Anon:"):
                    anon += int(line.split()[1])
        except OSError:
            pass
        todo += [child for child, parent in parents.items() if parent == pid]
    return pss, rss, anon


def peak_memory_mb(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Peaks of the summed (PSS, RSS, anonymous PSS) of the command's whole process tree, sampled
    every 10 ms: for `grind run` that is the parent and the learner's child together."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peaks = [0, 0, 0]
    while proc.poll() is None:
        peaks = [max(peak, now) for peak, now in zip(peaks, _tree_kb(proc.pid))]
        time.sleep(0.01)
    return peaks[0] / 1024, peaks[1] / 1024, peaks[2] / 1024


def tree_cpu_s(root: int) -> float:
    """CPU seconds used so far by a live process tree: each process's own, plus what its reaped
    children used (a warm server's finished jobs)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
            stats[int(entry.name)] = fields
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += sum(int(v) for v in stats[pid][11:15])  # utime stime cutime cstime
        todo += [child for child, parent in parents.items() if parent == pid]
    return total / tick


def cpu_of(fn, daemon_pid: int | None = None) -> float:  # type: ignore[no-untyped-def]
    """CPU seconds a call costs: this process, its waited-for children and (if given) the daemon's
    tree. On a shared machine wall time depends on who else runs; CPU time much less."""
    before = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    daemon_before = tree_cpu_s(daemon_pid) if daemon_pid else 0.0
    fn()
    after = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    used = sum(a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime for a, b in zip(after, before))
    return used + (tree_cpu_s(daemon_pid) - daemon_before if daemon_pid else 0.0)


def daemon_before_row(before: Path, runs: int, denv: dict[str, str], correct: Path, work: Path) -> tuple[str, ...]:
    """A daemon-served run of this checkout ÷ one of the other checkout, alternating: each has a
    daemon of its own (the socket's name comes from the judge package's folder), both warm. Run
    from a neutral folder so that PYTHONPATH decides which judge each imports."""
    this, that = dict(denv, PYTHONPATH=str(ROOT)), dict(denv, PYTHONPATH=str(before.resolve()))
    run = [*GRIND, "run", "clipping", "--file", str(correct)]
    try:
        for side, name in ((this, "this checkout"), (that, str(before))):
            subprocess.run(run, env=side, cwd=work, capture_output=True)  # starts its daemon (if not up)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                said = subprocess.run([*GRIND, "daemon", "status"], env=side, cwd=work, capture_output=True,
                                      text=True)
                if "server warm" in said.stdout:
                    break
                time.sleep(0.2)
            else:
                raise AssertionError(f"{name}'s daemon did not start")
        pairs = [(timed(run, this, work), timed(run, that, work)) for _ in range(runs * 2)]
        ours, theirs = (statistics.median(p[i] for p in pairs) for i in range(2))
        return (f"  the same ÷ a daemon-served run from {before.name} (alternating, a daemon each)",
                f"{ours:.3f} s", f"{theirs:.3f} s", f"{ours / theirs:.2f}", "-")
    finally:
        subprocess.run([*GRIND, "daemon", "stop"], env=that, cwd=work, capture_output=True)


def daemon_rows(runs: int, env: dict[str, str], correct: Path, cold: float, work: Path,
                before: Path | None = None) -> list[tuple[str, ...]]:
    """The daemon's figures. Its first run starts it (and grades cold); the timed runs after it
    is warm are the learner's second, third... run of the day."""
    from judge import daemon
    from judge.catalog import Catalog
    from judge.grade import grade, hidden_from_learners

    denv = {k: v for k, v in env.items() if k != "GRIND_NO_DAEMON"}
    os.environ.pop("GRIND_NO_DAEMON")
    rows: list[tuple[str, ...]] = []
    # torch on its own, before the daemon starts: nothing of ours maps its libraries yet
    daemon.stop()
    torch_alone = [peak_memory_mb([sys.executable, "-c", "import torch"], env) for _ in range(runs)]
    try:
        subprocess.run([*GRIND, "run", "clipping", "--file", str(correct)], env=denv, capture_output=True)
        deadline = time.monotonic() + 120
        while not (daemon.status() or {}).get("warm") and time.monotonic() < deadline:
            time.sleep(0.1)
        info = daemon.status()
        assert info and info.get("warm"), "the daemon did not start"
        run = [*GRIND, "run", "clipping", "--file", str(correct)]
        # Alternating pairs (a cold run, then a daemon-served one) so that both see the same load;
        # the ratio of the medians. The bare interpreter start is the floor of the second.
        pairs = [(timed(run, env), timed(run, denv), timed([sys.executable, "-c", "pass"], env))
                 for _ in range(runs * 2)]
        cold_p, over, bare = (statistics.median(p[i] for p in pairs) for i in range(3))
        rows.append(("daemon-served grind run clipping ÷ cold run (alternating pairs)", f"{over:.3f} s",
                     f"{cold_p:.2f} s", f"{over / cold_p:.3f}", "≤ 0.08"))
        rows.append(("  the same ÷ python -c pass (the interpreter's start, its floor)", f"{over:.3f} s",
                     f"{bare:.3f} s", f"{over / bare:.1f}", "-"))
        cpu_pairs = [(cpu_of(lambda: timed(run, env)), cpu_of(lambda: timed(run, denv), info["pid"]))
                     for _ in range(runs)]
        cold_cpu, over_cpu = (statistics.median(p[i] for p in cpu_pairs) for i in range(2))
        rows.append(("  the same in CPU seconds (grind, its children and the daemon)", f"{over_cpu:.3f} s",
                     f"{cold_cpu:.2f} s", f"{over_cpu / cold_cpu:.3f}", "-"))
        if before is not None:
            rows.append(daemon_before_row(before, runs, denv, correct, work))

        exercise = Catalog().get("clipping")
        worker = daemon.DaemonExecutor(hidden_from_learners(exercise))
        target = work / "daemon_clipping.py"
        source = correct.read_text()

        def regrades(pause: float) -> tuple[list[float], list[float]]:
            samples, cpu = [], []
            for i in range(runs * 4):
                time.sleep(pause)

                def regrade(i: int = i) -> None:  # timed inside: cpu_of's reading of /proc is not the re-grade's
                    start = time.perf_counter()
                    target.write_text(source + f"\n# edit {i}\n")
                    verdict = grade(exercise, target, worker=worker)
                    samples.append(time.perf_counter() - start)
                    assert verdict.passed, verdict.message

                cpu.append(cpu_of(regrade, info["pid"]))
            return samples, cpu

        # A learner saves, reads the verdict, edits, saves again: seconds apart. The daemon's warm
        # server forks the next job's process (and tears down the last one's) in that pause; the
        # pause here is a tenth of a second past what that takes. Back to back, both are on the clock.
        samples, cpu = regrades(0.3)
        rows.append(("re-grade over the daemon (file written -> verdict)", f"{statistics.median(samples):.3f} s",
                     "-", "-", "≤ 0.05 s"))
        rows.append(("the same in CPU seconds (grind and the daemon)", f"{statistics.median(cpu):.3f} s",
                     "-", "-", "-"))
        samples, _ = regrades(0.0)
        rows.append(("the same, back to back (the next job's fork on the clock)",
                     f"{statistics.median(samples):.3f} s", "-", "-", "-"))
        assert worker.served == runs * 8, "a re-grade went cold"

        time.sleep(1.0)  # idle: no job in flight
        rows += daemon_memory_rows(info["pid"], runs, env, torch_alone)
    finally:
        daemon.stop()
        os.environ["GRIND_NO_DAEMON"] = "1"
    return rows


def daemon_memory_rows(pid: int, runs: int, env: dict[str, str],
                       torch_alone: list[tuple[float, float, float]]) -> list[tuple[str, ...]]:
    """The idle daemon's whole tree against a process that imported torch, read so that both
    sides count torch's library pages the same way.

    PSS splits a file page among the processes that map it. Until this pass the bench read the
    daemon alone and then ran ``import torch`` beside it: torch's pages, shared with the daemon's
    warm server, counted half in the baseline and whole in the daemon, and the ratio came out
    about 0.2 higher than either fair reading (1.40 against 1.16 and 1.22 for the same tree).
    The goal's row samples both at the same moment, torch idling after its import; the second
    reads each alone (torch before the daemon started); the old reading stays for comparison."""
    beside = []
    for _ in range(runs):
        proc = subprocess.Popen([sys.executable, "-c", "import sys, torch; print(flush=True); sys.stdin.read()"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        try:
            assert proc.stdout is not None and proc.stdout.readline(), "import torch failed"
            time.sleep(0.3)
            beside.append((_tree_kb(pid), _tree_kb(proc.pid)))
        finally:
            proc.kill()
            proc.wait()
    ours = [statistics.median(b[0][i] for b in beside) / 1024 for i in range(3)]
    theirs = [statistics.median(b[1][i] for b in beside) / 1024 for i in range(3)]
    ratio = statistics.median(b[0][0] / b[1][0] for b in beside)
    alone = _tree_kb(pid)
    alone_torch = [statistics.median(t[i] for t in torch_alone) for i in range(3)]
    later_torch = statistics.median(peak_memory_mb([sys.executable, "-c", "import torch"], env)[0]
                                    for _ in range(runs))
    return [
        ("daemon idle memory ÷ import torch, side by side (PSS)", f"{ours[0]:.0f} MB", f"{theirs[0]:.0f} MB",
         f"{ratio:.2f}", "≤ 1.3"),
        ("  the same, each alone (torch before the daemon started)", f"{alone[0] / 1024:.0f} MB",
         f"{alone_torch[0]:.0f} MB", f"{alone[0] / 1024 / alone_torch[0]:.2f}", "-"),
        ("  the earlier reading: the daemon alone ÷ torch beside it (PSS)", f"{alone[0] / 1024:.0f} MB",
         f"{later_torch:.0f} MB", f"{alone[0] / 1024 / later_torch:.2f}", "-"),
        ("  the same in summed RSS (shared pages counted in every process)", f"{ours[1]:.0f} MB",
         f"{theirs[1]:.0f} MB", f"{ours[1] / theirs[1]:.2f}", "-"),
        ("  the same in anonymous PSS (heaps; other processes do not move it)", f"{ours[2]:.0f} MB",
         f"{theirs[2]:.0f} MB", f"{ours[2] / theirs[2]:.2f}", "-"),
    ]


def watch_save_to_verdict(slug: str, saves: int, env: dict[str, str], work: Path) -> float:
    """Median seconds from writing the learner's file to the end of the verdict ("Exercises: x of
    N passed."), read from `grind watch`'s plain output: the file watch is included."""
    import queue
    import threading

    from judge.catalog import Catalog

    folder = work / f"watch-{slug}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([*GRIND, "init", str(folder)], env=env, capture_output=True, check=True, cwd=folder.parent)
    exercise = Catalog().get(slug)
    from judge.workspace import learner_file

    learner = learner_file(folder, exercise)  # lr-schedule/lr_schedule.py: importable names
    source = exercise.reference_path.read_text()
    learner.write_text(source)
    proc = subprocess.Popen([*GRIND, "watch", slug], cwd=folder, env=dict(env, COLUMNS="100"), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None and proc.stdin is not None
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()  # type: ignore[union-attr]

    def verdict_line(timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            if line.startswith("Exercises:"):
                return

    try:
        verdict_line(180)  # graded on start: the warm server is up
        samples = []
        for i in range(saves):
            time.sleep(0.3)  # past the file watch's debounce of the previous save
            start = time.perf_counter()
            learner.write_text(source + f"\n# edit {i}\n")
            verdict_line(60)
            samples.append(time.perf_counter() - start)
    finally:
        proc.stdin.write("q\n")
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return statistics.median(samples)


def shared_job_row(runs: int, slug: str = "loss-scaling") -> tuple[str, ...]:
    """A practice job of ``slug``'s reference in one warm worker, its case instances shared with a
    fork (the reference's costs sent, as the daemon and watch send them) and not (none sent),
    alternating: the job alone, from sending it to its outcome (judge/worker/child/halves.py)."""
    from judge.catalog import Catalog
    from judge.grade import hidden_from_learners
    from judge.pipeline import run_learner
    from judge.subjects import REFERENCE
    from judge.trusted import reference_for
    from judge.worker.sandbox import WarmWorker

    exercise = Catalog().get(slug)
    costs = reference_for(exercise).subjects[REFERENCE].record.case_s
    source = exercise.reference_path.read_text()
    shared, alone = [], []
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        run_learner(exercise, source, "learner.py", worker=worker)  # the server up, the checks compiled
        for _ in range(runs * 4):
            for samples, sent in ((shared, costs), (alone, None)):
                time.sleep(0.3)  # the server forks the next job's process meanwhile, as between saves
                start = time.perf_counter()
                outcome = run_learner(exercise, source, "learner.py", worker=worker, costs=sent)
                samples.append(time.perf_counter() - start)
                assert outcome.status == "ok", outcome.message
    ours, base = statistics.median(shared), statistics.median(alone)
    return (f"{slug}'s practice job, cases shared with a fork ÷ one process (alternating)", f"{ours:.3f} s",
            f"{base:.3f} s", f"{ours / base:.2f}", "-")


def before_rows(before: Path, runs: int, env: dict[str, str], correct: Path, work: Path) -> list[tuple[str, ...]]:
    """This checkout's `grind --help` and cold `grind run` against another checkout's, timed in
    alternation (this, that, this, that...) under the same load: "its time today" in the same run.

    Both run in a folder holding neither checkout: `python -m judge` puts its current folder
    first on sys.path, so run from this checkout, "that" imported this checkout's judge too."""
    that = dict(env, PYTHONPATH=str(before.resolve()))
    this = dict(env, PYTHONPATH=str(ROOT))
    for side, tree in ((this, ROOT), (that, before.resolve())):  # each imports its own judge, or the row is void
        found = subprocess.run([sys.executable, "-c", "import judge; print(judge.__file__)"], env=side, cwd=work,
                               capture_output=True, text=True, check=True).stdout.strip()
        assert Path(found).resolve().parent.parent == tree, f"{found} is not {tree}'s"
    rows: list[tuple[str, ...]] = []
    for label, argv, goal in (("grind --help", ["--help"], "≤ 0.5"),
                              ("cold grind run clipping", ["run", "clipping", "--file", str(correct)], "≤ 1.0")):
        pairs = [(timed([*GRIND, *argv], this, work), timed([*GRIND, *argv], that, work)) for _ in range(runs * 2)]
        ours, theirs = (statistics.median(p[i] for p in pairs) for i in range(2))
        rows.append((f"{label} ÷ the same from {before.name} (alternating)", f"{ours:.3f} s", f"{theirs:.3f} s",
                     f"{ours / theirs:.2f}", goal))
        if argv == ["--help"]:  # the help replayed above; the first one after a change prints it through typer
            kept = Path(env["GRIND_CACHE_DIR"]) / ".help"

            def first(side: dict[str, str], kept: Path = kept) -> float:
                shutil.rmtree(kept, ignore_errors=True)
                return timed([*GRIND, "--help"], side, work)

            pairs = [(first(this), timed([*GRIND, *argv], that, work)) for _ in range(runs)]
            ours, theirs = (statistics.median(p[i] for p in pairs) for i in range(2))
            rows.append(("  the first grind --help after a change (printed by typer, then kept) ÷ the same",
                         f"{ours:.3f} s", f"{theirs:.3f} s", f"{ours / theirs:.2f}", "-"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--loop", action="store_true", help="only the learner's loop: a cold run, the daemon "
                        "and watch (issue 12's figures, in about a minute)")
    parser.add_argument("--before", metavar="CHECKOUT", type=Path,
                        help="another checkout of grind (say, main's): its `grind --help` and cold `grind run` "
                        "timed in alternation with this one's, each figure this ÷ that")
    args = parser.parse_args()
    runs = 3 if args.quick else 5
    batch_size = 20 if args.quick else 100

    work = Path(tempfile.mkdtemp(prefix="grind-bench-"))
    atexit.register(shutil.rmtree, work, True)  # a failed run leaves no folder behind either
    runtime = work / "run"
    runtime.mkdir(mode=0o700)
    # Every figure but the daemon's own is measured without it (GRIND_NO_DAEMON=1): a cold run is cold.
    env = dict(os.environ, GRIND_CACHE_DIR=str(work / "cache"), GRIND_STATE_DIR=str(work / "state"),
               GRIND_RUNTIME_DIR=str(runtime), GRIND_NO_DAEMON="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    # grind's modules compiled once, as an install leaves them: with PYTHONDONTWRITEBYTECODE set
    # (some containers do) every command compiled the whole package again, 50 ms of a warm run.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for tree in [ROOT / "judge", *([args.before / "judge"] if args.before else [])]:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], env=env, check=False,
                       stdout=subprocess.DEVNULL)
    os.environ.update({k: env[k] for k in ("GRIND_CACHE_DIR", "GRIND_STATE_DIR", "GRIND_RUNTIME_DIR",
                                           "GRIND_NO_DAEMON")})
    correct = SUBMISSIONS / "correct_loop.py"
    rows: list[tuple[str, str, str, str, str]] = []

    # 1. cold `grind run clipping` (reference already cached, as on every run after the first)
    subprocess.run([*GRIND, "run", "clipping", "--file", str(correct)], env=env, capture_output=True)
    pairs = [(timed([sys.executable, "-c", "import torch"], env),
              timed([*GRIND, "run", "clipping", "--file", str(correct)], env)) for _ in range(runs)]
    torch_import, cold = (statistics.median(p[i] for p in pairs) for i in range(2))
    rows.append(("cold grind run clipping ÷ import torch (alternating pairs)", f"{cold:.2f} s",
                 f"{torch_import:.2f} s", f"{cold / torch_import:.2f}", "≤ 1.0"))
    if args.before:
        rows += before_rows(args.before, runs, env, correct, work)
    if args.loop:
        loop_rows(rows, runs, env, correct, cold, work, args.before)
        return

    # 2. warm re-grade: from writing the file to the verdict, in a warm worker
    from judge.catalog import Catalog
    from judge.grade import grade, hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    exercise = Catalog().get("clipping")
    target = work / "clipping.py"
    source = correct.read_text()
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        grade(exercise, correct, worker=worker)  # start the server
        samples = []
        for i in range(runs * 3):
            start = time.perf_counter()
            target.write_text(source + f"\n# edit {i}\n")
            verdict = grade(exercise, target, worker=worker)
            samples.append(time.perf_counter() - start)
            assert verdict.passed, verdict.message
    warm = statistics.median(samples)
    rows.append(("warm re-grade (file written -> verdict)", f"{warm:.3f} s", "-", "-", "≤ 0.15 s"))

    # 2b. how late a timeout verdict comes: warm, so there is no torch import to subtract
    from judge.worker.sandbox import Limits

    loops = [ROOT / "tests" / "adversarial" / f"{name}.py" for name in ("infinite_loop", "sleep_forever",
                                                                          "torch_op_loop")]
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        grade(exercise, correct, worker=worker)
        late = []
        for path in loops:
            start = time.perf_counter()
            verdict = grade(exercise, path, worker=worker, limits=Limits(wall_s=1.0))
            late.append(time.perf_counter() - start - 1.0)
            assert verdict.status.value == "timeout", verdict.message
    rows.append(("timeout verdict after the limit (worst of 3 loops)", f"+{max(late):.2f} s", "limit 1 s", "-",
                 "≤ +1 s"))

    # 3. batch: N submissions on 2 cores, vs one pytest process per submission (2 at a time)
    from judge.batch import grade_many

    pool = sorted(SUBMISSIONS.glob("*.py"))
    class_dir = work / "class"
    class_dir.mkdir()
    paths = []
    for i in range(batch_size):
        path = class_dir / f"student{i:03d}.py"
        shutil.copyfile(pool[i % len(pool)], path)
        paths.append(path)
    start = time.perf_counter()
    verdicts = grade_many(exercise, paths, jobs=2)
    ours = time.perf_counter() - start
    assert len(verdicts) == batch_size

    naive_test = ROOT / "bench" / "naive_judge_test.py"

    def naive(path: Path) -> float:
        return timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(naive_test)],
                     dict(env, SUBMISSION=str(path)))

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as threads:
        list(threads.map(naive, paths))
    baseline = time.perf_counter() - start
    rows.append((f"batch of {batch_size} on 2 cores ÷ one pytest per submission", f"{ours:.1f} s",
                 f"{baseline:.1f} s", f"{ours / baseline:.3f}", "≤ 0.1"))

    # 4. commands that never import torch
    python_start = median_of(runs, lambda: timed([sys.executable, "-c", "pass"], env))
    for argv in (["--help"], ["list"]):
        took = median_of(runs, lambda argv=argv: timed([*GRIND, *argv], env))
        rows.append((f"grind {' '.join(argv)}", f"{took:.3f} s", f"{python_start:.3f} s (python -c pass)",
                     f"{took / python_start:.1f}", "≤ 0.25 s"))

    # 5. peak memory of a cold run vs import torch
    torch_mem = [peak_memory_mb([sys.executable, "-c", "import torch"], env) for _ in range(runs)]
    run_mem = [peak_memory_mb([*GRIND, "run", "clipping", "--file", str(correct)], env) for _ in range(runs)]
    for index, name in ((0, "PSS"), (1, "RSS, shared pages counted in each process")):
        base = statistics.median(m[index] for m in torch_mem)
        ours = statistics.median(m[index] for m in run_mem)
        rows.append((f"peak memory of a cold run ÷ import torch ({name})", f"{ours:.0f} MB", f"{base:.0f} MB",
                     f"{ours / base:.2f}", "≤ 1.3"))

    loop_rows(rows, runs, env, correct, cold, work, args.before)


def loop_rows(rows: list[tuple[str, ...]], runs: int, env: dict[str, str], correct: Path, cold: float,
              work: Path, before: Path | None = None) -> None:
    """The learner's loop, then the table: the daemon's figures and watch's save -> verdict."""
    # 6. the per-user daemon: a second `grind run` over it, a re-grade over it, its idle memory
    rows += daemon_rows(runs, env, correct, cold, work, before)

    # 7. grind watch: from writing the file to the verdict line, as a learner sees it; with
    # --before, the other checkout's watch in alternating sessions (this, that, this, that), each
    # from its own workspace (a folder holding neither checkout, so PYTHONPATH decides)
    for slug in ("clipping", "loss-scaling"):
        if before is None:
            took = watch_save_to_verdict(slug, runs * 3, env, work)
            rows.append((f"watch save -> verdict ({slug})", f"{took:.3f} s", "-", "-",
                         "≤ 0.1 s" if slug == "clipping" else "≤ 0.2 s"))
            continue
        this, that = dict(env, PYTHONPATH=str(ROOT)), dict(env, PYTHONPATH=str(before.resolve()))
        ours, theirs = [], []
        for i in range(2):
            ours.append(watch_save_to_verdict(slug, runs * 2, this, work / f"this{i}"))
            theirs.append(watch_save_to_verdict(slug, runs * 2, that, work / f"that{i}"))
        took, then = statistics.median(ours), statistics.median(theirs)
        rows.append((f"watch save -> verdict ({slug}) ÷ the same from {before.name} (alternating)",
                     f"{took:.3f} s", f"{then:.3f} s", f"{took / then:.2f}",
                     "≤ 0.1 s" if slug == "clipping" else "≤ 0.2 s"))

    rows.append(shared_job_row(runs))

    shutil.rmtree(work, ignore_errors=True)
    widths = [max(len(r[i]) for r in rows + [("figure", "measured", "baseline", "ratio", "goal")])
              for i in range(5)]
    header = ("figure", "measured", "baseline", "ratio", "goal")
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths)))
    print(f"\n{runs} runs per figure, medians; python {sys.version.split()[0]}, {os.cpu_count()} cores; "
          f"peak memory = the whole process tree, summed.")


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))
    main()
