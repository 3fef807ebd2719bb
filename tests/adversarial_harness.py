"""Grade hostile submissions the way grind does, in a process of its own, and report as JSON.

``tests/test_adversarial.py`` and ``bench/adversarial.py`` start one of these per attacker::

    python tests/adversarial_harness.py SPEC.json

It exists because some attacks, when they work, hang grind in a system call (a FIFO opened
for reading) or make it read until memory runs out (a link to /dev/zero): no in-process check
survives that. Here the process that grades has a capped address space, the grading runs in a
thread that is abandoned after ``limit + HANG_MARGIN_S``, and the whole process (with every
process below it) can be killed by the test. It is also a child subreaper, so a grandchild that
``setsid()``-ed its way out of a run is reparented here, where it is seen and killed, instead of
escaping to init.

SPEC keys: ``mode`` (cold, warm or batch), ``out`` (where the report goes), ``cache`` (becomes
GRIND_CACHE_DIR; the test passes it in the environment too, as a user's shell would), ``tmp``
(tempfile's folder: every temp dir grind makes lands there, so leftovers can be seen),
``limit_s``, ``memory_mb``; for cold/warm ``limits_s`` (optional: a wall clock per attacker
path) and ``neighbour_limit_s`` (optional: the neighbours' wall clock), ``attacker`` (the submission to grade) or ``attackers``
(several, graded one after another by the same worker, each followed by the correct and the
wrong submission; roles then read "attacker:NAME", NAME being the attacker's folder) and
``neighbours`` (folder for the correct and wrong submissions graded after it: in cold mode by
one warm worker started after the attack); ``probe`` (true:
first prove that a submission cannot signal this process or the test, and stop if it can); for
batch ``class_dir``, ``results_dir`` and ``jobs``.

The report: ``grades`` (one entry per graded submission: role, status, message, elapsed_s,
exception, hung, survivors, leftovers), ``rows`` (batch), ``survivors_at_exit``, ``error``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import resource
import signal
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

HANG_MARGIN_S = 60.0  # a hang detector, not a speed claim: bench/adversarial.py measures overruns
ADDRESS_SPACE = 6 << 30  # enough for grind's parent (no torch); a read of /dev/zero stops here

CORRECT = '''import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads])
    total = torch.linalg.vector_norm(norms, float(norm_type))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))
    return total
'''

# Plainly wrong: the right norm, the gradients never scaled. A poisoned reference would pass it.
WRONG = '''import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads]),
                                    float(norm_type))
'''

# Can a submission signal grind? It tries signal 0 on the harness and on the test process.
PROBE = '''import os

for _pid in ({pids}):
    try:
        os.kill(_pid, 0)
        print("GRIND-PROBE reachable", _pid)
    except OSError:
        print("GRIND-PROBE contained", _pid)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 0.0
'''


# ---------------------------------------------------------------------------------------------
# Processes


def become_subreaper() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def cap_memory() -> None:
    """Lower the soft address-space limit only: children can still set their own (lower) ones."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(ADDRESS_SPACE, hard)
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _processes() -> dict[int, tuple[int, str, int, str]]:
    """pid -> (parent, state, start time, first word of the command line), from /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            argv0 = (entry / "cmdline").read_bytes().split(b"\0", 1)[0].decode("utf-8", "replace")
        except (OSError, IndexError):
            continue
        table[int(entry.name)] = (int(fields[1]), fields[0], int(fields[19]), argv0)
    return table


def descendants(pid: int, table: dict[int, tuple[int, str, int, str]] | None = None) -> set[int]:
    """Live (not zombie) processes below ``pid``."""
    table = table if table is not None else _processes()
    children: dict[int, list[int]] = {}
    for child, (parent, state, _, _) in table.items():
        if state not in ("Z", "X"):
            children.setdefault(parent, []).append(child)
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _cwd(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def server_tree(worker: Any, table: dict[int, tuple[int, str, int, str]]) -> set[int]:
    """The warm worker's own processes: the server (under bubblewrap: bwrap, the namespace's
    init, then the server, each the oldest child of the one before) and its spare, the next
    job's process forked ahead of the job (judge.worker.child.server._Spare: a child of the server, and
    its shielding fork where Landlock cannot keep jobs from signalling), which still works in
    the server's own folder: a job's process moves to its job folder before any learner code
    runs. Jobs, and anything a job left behind, are not part of it. (A submission could chdir
    back to the server's folder to pass for a spare here; grind itself does not go by this: the
    server kills and reaps everything of a job before it forks the next spare.)"""
    proc = getattr(worker, "proc", None)
    if proc is None or proc.poll() is not None:
        return set()
    tree, node = {proc.pid}, proc.pid
    while os.path.basename(table.get(node, (0, "", 0, ""))[3]) == "bwrap":
        kids = [p for p, (parent, state, _, _) in table.items() if parent == node and state not in ("Z", "X")]
        if not kids:
            break
        node = min(kids, key=lambda p: (table[p][2], p))
        tree.add(node)
    home = _cwd(node)
    todo = [node]
    while todo and home is not None:
        parent_pid = todo.pop()
        for pid, (parent, state, _, _) in table.items():
            if parent == parent_pid and state not in ("Z", "X") and _cwd(pid) == home:
                tree.add(pid)
                todo.append(pid)
    return tree


def survivors(*workers: Any, grace_s: float = 3.0) -> list[dict[str, Any]]:
    """Processes below this one that are not a live warm worker's own (``workers``). A run's
    processes are killed as it ends; ``grace_s`` only lets the kernel finish delivering those
    kills."""
    deadline = time.monotonic() + grace_s
    while True:
        table = _processes()
        left = descendants(os.getpid(), table).difference(*(server_tree(w, table) for w in workers))
        if not left or time.monotonic() >= deadline:
            return [{"pid": p, "cmd": table[p][3], "state": table[p][1]} for p in sorted(left) if p in table]
        time.sleep(0.05)


def kill_all_below(keep: set[int] | None = None) -> None:
    """SIGKILL every process below this one (by pid), then reap what was reparented here."""
    for _ in range(20):
        left = descendants(os.getpid()) - (keep or set())
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break


# ---------------------------------------------------------------------------------------------
# Grading


def _render(verdict: Any, exercise: Any) -> None:
    """What `grind run` and `grind run --json` do with a verdict: both must work."""
    from rich.console import Console

    from judge.render import render_verdict

    render_verdict(Console(file=io.StringIO(), width=100, force_terminal=False), verdict, exercise)
    json.dumps(verdict.to_json())


# One long-lived grading thread: a warm worker started from a thread dies when that thread ends
# (bubblewrap's --die-with-parent is PR_SET_PDEATHSIG, which follows the thread), so every grade
# of one harness runs on this same thread, and the main thread only waits for it.
_GRADER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grader")


def grade_once(exercise: Any, path: Path, limits: Any, worker: Any, role: str) -> dict[str, Any]:
    """One grade, as grind would give it; abandoned (``hung``) after limit + HANG_MARGIN_S."""
    from judge.grade import grade

    entry: dict[str, Any] = {"role": role, "file": path.name}

    def target() -> None:
        try:
            verdict = grade(exercise, path, limits=limits, worker=worker)
            entry.update(status=verdict.status.value, message=(verdict.message or "")[:2000],
                         stdout=(verdict.stdout or "")[:2000],
                         pitfall=verdict.diagnosis.slug if verdict.diagnosis else None)
            _render(verdict, exercise)
        except BaseException as exc:  # noqa: BLE001 - anything grind raises is the finding
            entry["exception"] = f"{type(exc).__name__}: {str(exc)[:500]}"
            entry["traceback"] = traceback.format_exc()[-4000:]

    started = time.monotonic()
    future = _GRADER.submit(target)
    try:
        future.result(timeout=limits.wall_s + HANG_MARGIN_S)
    except FutureTimeout:
        entry["hung"] = True
    entry["elapsed_s"] = round(time.monotonic() - started, 3)
    entry["limit_s"] = limits.wall_s
    return entry


def _leftovers(tmp: Path, worker: Any, servers: list[Any]) -> list[str]:
    """A warm job's leftovers are job folders in its server's folder; a cold run's are anything
    in the temp folder except a live server's own folder (cold mode's neighbour server)."""
    root = getattr(worker, "root", None) if worker is not None else None
    if root:
        return sorted(str(p) for p in Path(root).glob("job-*"))
    own = {str(s.root) for s in servers if s is not None and s.root}
    return sorted(str(p) for p in tmp.iterdir() if str(p) not in own)


def _write(spec: dict[str, Any], report: dict[str, Any]) -> None:
    out = Path(spec["out"])
    out.write_text(json.dumps(report, indent=1, default=str))


def run(spec: dict[str, Any]) -> dict[str, Any]:
    from judge.catalog import Catalog
    from judge.grade import hidden_from_learners
    from judge.trusted import reference_for
    from judge.worker.sandbox import Limits, WarmWorker, isolation

    report: dict[str, Any] = {"grades": [], "level": isolation().level, "harness_pid": os.getpid()}
    exercise = Catalog().get("clipping")
    limits = Limits(wall_s=float(spec["limit_s"]), memory_mb=int(spec["memory_mb"]))
    tmp = Path(spec["tmp"])
    reference_for(exercise)  # the cache entry exists before any submission runs (so it can be attacked)

    if spec["mode"] == "batch":
        return run_batch(spec, exercise, limits, report)

    neighbours = Path(spec["neighbours"])
    correct, wrong, probe = (neighbours / name / "clipping.py" for name in ("correct", "wrong", "probe"))
    for path, text in ((correct, CORRECT), (wrong, WRONG),
                       (probe, PROBE.format(pids=f"{os.getpid()}, {os.getppid()}"))):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    worker = WarmWorker(hidden_from_learners(exercise)) if spec["mode"] == "warm" else None
    plan = [("before", correct)] if worker is not None else []  # starts the server: its processes are known
    if spec.get("probe"):
        plan.append(("probe", probe))
    # One attacker, or (``attackers``) several one after another, each followed by the neighbours;
    # then a role is suffixed with the name of the attacker's folder ("attacker:NAME").
    # ``neighbours_after``: true or false for every attacker, or the list of those followed.
    after = spec.get("neighbours_after", True)
    for attacker in [Path(a) for a in spec.get("attackers", [spec.get("attacker")])]:
        suffix = f":{attacker.parent.name}" if "attackers" in spec else ""
        plan.append(("attacker" + suffix, attacker))
        if after is True or (isinstance(after, list) and str(attacker) in after):
            plan += [("correct" + suffix, correct), ("wrong" + suffix, wrong)]
    neighbour_worker = None  # cold mode: the neighbours' own warm worker, started after the attack
    try:
        for role, path in plan:
            grader = worker
            if worker is None and role.split(":")[0] in ("correct", "wrong"):
                # Cold mode: the attacker ran in a fresh process; what it can leave behind (the
                # cache, a process, a file) is on disk or in the process table, and a server
                # started after it meets all of that as a fresh process would. One server for
                # both neighbours: one torch import instead of two cold children.
                if neighbour_worker is None:
                    neighbour_worker = WarmWorker(hidden_from_learners(exercise))
                grader = neighbour_worker
            # ``limits_s``: a wall clock per attacker (and ``neighbour_limit_s`` for the
            # neighbours): an attack that is not meant to time out may take longer, at no cost.
            wall = spec.get("limits_s", {}).get(str(path)) if role.startswith("attacker") else (
                spec.get("neighbour_limit_s") if role.split(":")[0] in ("correct", "wrong") else None)
            used = dataclasses.replace(limits, wall_s=float(wall)) if wall else limits
            entry = grade_once(exercise, path, used, grader, role)
            report["grades"].append(entry)
            if entry.get("hung"):
                report["error"] = f"grading {role} ({path.name}) did not come back"
                break
            entry["survivors"] = survivors(worker, neighbour_worker)
            entry["leftovers"] = _leftovers(tmp, grader, [worker, neighbour_worker])
            if neighbour_worker is not None and role.split(":")[0] == "wrong":
                # Cold mode: each attack's neighbours get a server started after that attack (it
                # meets what the attack left as any fresh process would), closed once they are
                # graded, so no server outlives them into the next attack's cold run.
                neighbour_worker.close()
                neighbour_worker = None
            shown = entry.get("stdout", "")
            if role == "probe" and ("GRIND-PROBE reachable" in shown or "GRIND-PROBE contained" not in shown):
                report["unsafe"] = ("a submission could signal the harness or the test at level "
                                    f"{report['level']}: {shown[:300]!r}")
                break
    finally:
        for started in (worker, neighbour_worker):
            if started is not None and not any(g.get("hung") for g in report["grades"]):
                started.close()
    report["survivors_at_exit"] = survivors(grace_s=0.2)
    return report


def run_batch(spec: dict[str, Any], exercise: Any, limits: Any, report: dict[str, Any]) -> dict[str, Any]:
    from judge.batch import grade_class
    from judge.formats import FORMATS, write_all

    class_dir, results = Path(spec["class_dir"]), Path(spec["results_dir"])
    done: dict[str, Any] = {}

    def target() -> None:
        try:
            rows = grade_class(exercise, class_dir, results, jobs=int(spec["jobs"]), limits=limits)
            write_all(rows, exercise.slug, results, list(FORMATS))
            done["rows"] = [{"student": r["student"], "status": r["verdict"]["status"],
                             "message": (r["verdict"].get("message") or "")[:500]} for r in rows]
        except BaseException as exc:  # noqa: BLE001
            done["exception"] = f"{type(exc).__name__}: {str(exc)[:500]}"
            done["traceback"] = traceback.format_exc()[-4000:]

    students = len(list(class_dir.iterdir()))
    thread = threading.Thread(target=target, daemon=True, name="grade-class")
    started = time.monotonic()
    thread.start()
    thread.join(students * (limits.wall_s + HANG_MARGIN_S))
    report["elapsed_s"] = round(time.monotonic() - started, 3)
    if thread.is_alive():
        report["error"] = "grading the class did not come back"
        return report
    report.update(done)
    report["survivors_at_exit"] = survivors()
    report["leftovers"] = sorted(str(p) for p in Path(spec["tmp"]).iterdir())
    return report


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    become_subreaper()
    cap_memory()
    os.environ["GRIND_CACHE_DIR"] = spec["cache"]
    tempfile.tempdir = spec["tmp"]
    try:
        report = run(spec)
    except BaseException as exc:  # noqa: BLE001 - the test reads the report, whatever happened
        report = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]}
    hung = bool(report.get("error")) and "did not come back" in report["error"]
    kill_all_below()
    _write(spec, report)
    sys.stdout.flush()
    # A hung grading thread may be blocked in a system call for good: do not wait for it.
    os._exit(3 if hung else 0)


if __name__ == "__main__":
    main()
