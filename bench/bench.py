"""Speed and memory of grind, each figure a median ratio against a baseline measured in the same run.

    python bench/bench.py            # the full run (about 4 minutes on 2 cores)
    python bench/bench.py --quick    # fewer repetitions and a 20-submission batch

Uses only Python's own timing (time.perf_counter, resource.getrusage) and subprocesses, so
anyone can rerun it. The machine is shared and noisy: read ratios, not absolute seconds.
"""

from __future__ import annotations

import argparse
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
SUBMISSIONS = ROOT / "tests" / "submissions" / "clipping"
GRIND = [sys.executable, "-m", "judge"]


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def median_of(runs: int, fn) -> float:  # type: ignore[no-untyped-def]
    return statistics.median(fn() for _ in range(runs))


def _tree_kb(root: int) -> tuple[int, int]:
    """(PSS, RSS) of a process and all its descendants, summed, from /proc.

    PSS counts a page shared by n processes as 1/n in each, so the sum over a tree is the memory
    the tree really uses; summed RSS counts shared pages (libraries, forked copies) again in
    every process and overstates a tree of several pythons."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    pss = rss = 0
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss += int(line.split()[1])
        except OSError:
            pass
        todo += [child for child, parent in parents.items() if parent == pid]
    return pss, rss


def peak_memory_mb(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Peaks of the summed (PSS, RSS) of the command's whole process tree, sampled every 10 ms:
    for `grind run` that is the parent and the learner's child together."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak_pss = peak_rss = 0
    while proc.poll() is None:
        pss, rss = _tree_kb(proc.pid)
        peak_pss, peak_rss = max(peak_pss, pss), max(peak_rss, rss)
        time.sleep(0.01)
    return peak_pss / 1024, peak_rss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 3 if args.quick else 5
    batch_size = 20 if args.quick else 100

    work = Path(tempfile.mkdtemp(prefix="grind-bench-"))
    env = dict(os.environ, GRIND_CACHE_DIR=str(work / "cache"), GRIND_STATE_DIR=str(work / "state"))
    os.environ.update(GRIND_CACHE_DIR=env["GRIND_CACHE_DIR"], GRIND_STATE_DIR=env["GRIND_STATE_DIR"])
    correct = SUBMISSIONS / "correct_loop.py"
    rows: list[tuple[str, str, str, str, str]] = []

    # 1. cold `grind run clipping` (reference already cached, as on every run after the first)
    subprocess.run([*GRIND, "run", "clipping", "--file", str(correct)], env=env, capture_output=True)
    torch_import = median_of(runs, lambda: timed([sys.executable, "-c", "import torch"], env))
    cold = median_of(runs, lambda: timed([*GRIND, "run", "clipping", "--file", str(correct)], env))
    rows.append(("cold grind run clipping ÷ import torch", f"{cold:.2f} s", f"{torch_import:.2f} s",
                 f"{cold / torch_import:.2f}", "≤ 1.2"))

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
        took = median_of(runs, lambda: timed([*GRIND, *argv], env))
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
