"""The adversarial suite: hostile and broken submissions against the clipping exercise.

Each file in ``tests/adversarial/`` says on its first line which verdicts are acceptable
(``# expect: crashed`` or ``# expect: error|crashed|timeout``), and optionally on its second
the isolation levels at which the guarantee it tests holds (``# needs: landlock|bubblewrap``;
the levels are those of ``isolation().level``: bubblewrap, landlock, macos-sandbox,
limits-only). Elsewhere it is skipped, with the level named in the reason. Three older words are
kept: ``bwrap`` (= bubblewrap), ``isolation`` (a read-only workspace: any sandbox level, or the
unprivileged user grind drops to as root) and ``pids`` (a bound on processes: a pids cgroup or
the unprivileged user's NPROC). A file that signals every process it can reach also says
``# danger: signals ...``: before it runs, a probe submission must prove that a run cannot
signal the suite; if it can, the test fails without running the attack.

Every file is graded in cold mode (a fresh process) and in warm mode (a fork of the warm worker,
as ``grind watch`` and ``grind grade`` do), by ``tests/adversarial_harness.py`` in a process of
its own (see there why; a few attacks per harness: see BATCHES), and right after each attack,
with the same cache, a correct and a plainly wrong submission are graded (in warm mode by the
worker that graded the attacker, as the next students of a class are; in cold mode, after the
attacks that can leave something behind (see LEAVES_SOMETHING), by a warm worker started after
the attack and closed once they are graded, which meets whatever the attack left on disk or in
the process table as any fresh process would): a correct student graded
next to an attacker still passes, and nothing the attacker did (a poisoned cache, a process left
behind) makes a wrong one pass. A batched attack that is not meant to time out runs with a 10 s
clock (WARM_BATCH_LIMIT_S), not 2 s: what it proves is a verdict, not a speed.
For every grade the suite also proves that the judge came back with a verdict (never an
internal error, never a hang: within the limit plus a generous margin; bench/adversarial.py
measures the real overrun), that nothing in the learner's workspace changed, that no process the
run started is still alive, and that no temp dir is left.

A batch test grades a class folder holding attackers next to a correct and a wrong student.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from judge.worker.sandbox import Limits, can_bound_processes, isolation

ADVERSARIAL = Path(__file__).parent / "adversarial"
HARNESS = Path(__file__).with_name("adversarial_harness.py")
FILES = sorted(ADVERSARIAL.glob("*.py"))
LIMITS = Limits(wall_s=2.0, memory_mb=1536)
WARM_BATCH_LIMIT_S = 10.0  # the wall clock of a batched attack that may not time out, and of its neighbours
LEVELS = ("bubblewrap", "landlock", "macos-sandbox", "limits-only")
SANDBOXES = ("bubblewrap", "landlock", "macos-sandbox")
LEGACY_NEEDS = ("bwrap", "isolation", "pids")
HARNESS_BACKSTOP_S = 600  # the harness gives up on a hung grade by itself long before this
# A cold run is a fresh process: only an attack that leaves something behind (the cache, a
# process, a file, a classmate's folder) can reach the next student, so in cold mode only those
# are followed by a correct and a wrong student (warm mode follows every attacker with them).
# Not here: the kill_* attacks (in cold mode no warm worker or neighbour exists while they run, and
# a process they leave is caught by the check for survivors after every attack; setsid_killer,
# which leaves one on purpose, is followed) and the forge_* ones (they write inside their own run
# folder, which the check for leftover temp dirs covers; the fifo forgery is still followed).
# Each follow is one more torch process, the suite's unit of cost.
LEAVES_SOMETHING = re.compile(r"poison|setsid|classmate|outside|delete|fork|thread|sleep|fifo")
# Attacks made of values, text, exceptions and tricks on the guards or the child's own runner module:
# they touch no file, descriptor, process, signal, limit, clock or result file, so the isolation
# level cannot change their verdict, and they are marked ``level_independent``. CI runs the whole
# suite as root (bubblewrap) and, in "laptop mode" (an unprivileged user, Landlock only), skips
# these (``--skip-level-independent``, see tests/conftest.py): every attack the level can matter
# for runs in both. A file not named here runs in both modes.
LEVEL_INDEPENDENT = frozenset({
    "bom_correct", "latin1_file", "empty_file", "syntax_error", "import_error", "missing_function",
    "raises_at_import", "raises_in_function", "exception_str_raises", "markup_in_message",
    "surrogate_message", "sys_exit_at_import", "sys_exit_in_function", "recursion_caught_then_correct",
    "recursion_unbounded", "returns_inf", "returns_nan", "returns_none", "returns_string",
    "returns_wrong_shape", "returns_list_of_norms", "huge_integer", "float128_output", "eq_always_true",
    "lazy_object", "numpy_subclass", "tensor_subclass", "wrong_dtype_grad", "forbidden_closure_cell",
    "forbidden_getattr", "forbidden_module_alias", "forbidden_partial", "forbidden_unhook",
    "patch_comparisons", "patch_runner", "inject_observation_key", "forbidden_reload", "forbidden_exec_source",
    "surrogates_on_stdio_correct", "replaces_stdio_correct", "closes_stdout_correct",
})
# Every file in cold mode and in warm mode, except the level-independent ones, which are graded
# one after another by one harness in each mode (test_level_independent_attacks_one_after_another);
# these in a few batches per mode (BATCHES, below).
HOSTILE = [pytest.param(p, mode, id=f"{p.stem}-{mode}") for p in FILES for mode in ("cold", "warm")
           if p.stem not in LEVEL_INDEPENDENT]


def _header(path: Path) -> tuple[set[str], str | None, str | None]:
    # utf-8-sig and "replace": some submissions start with a BOM, or are not UTF-8 at all, on purpose
    lines = path.read_bytes().decode("utf-8-sig", errors="replace").splitlines() + ["", ""]
    match = re.match(r"#\s*expect:\s*([\w|]+)(?:\s+pitfall=(\S+))?", lines[0])
    assert match, f"{path.name}: first line must be '# expect: STATUS[|STATUS...] [pitfall=SLUG]'"
    needs = re.match(r"#\s*needs:\s*(\w+)", lines[1])
    return set(match.group(1).split("|")), match.group(2), needs.group(1) if needs else None


def _lines(path: Path, count: int = 6) -> list[str]:
    return path.read_bytes().decode("utf-8-sig", errors="replace").splitlines()[:count] + [""] * count


def _needs(path: Path) -> list[str]:
    """Every alternative on the ``# needs:`` line (``_header`` keeps only the first word)."""
    match = re.match(r"#\s*needs:\s*([\w|-]+)", _lines(path)[1])
    return match.group(1).split("|") if match else []


def _dangerous(path: Path) -> bool:
    return any(re.match(r"#\s*danger:\s*signals", line) for line in _lines(path))


def _unmet(path: Path) -> str | None:
    """Why this file's guarantee does not hold here (the skip reason), or None."""
    needs = _needs(path)
    if not needs:
        return None
    iso = isolation()
    level = iso.level
    for word in needs:
        if word == level or (word == "bwrap" and level == "bubblewrap"):
            return None
        if word == "isolation" and (level in SANDBOXES or iso.drop_to is not None):
            return None
        if word == "pids" and can_bound_processes():
            return None
    return f"{path.name} (needs {'|'.join(needs)}): not guaranteed at level {level}: see README security model"


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None), so a new empty folder shows too."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def _kill_tree(pid: int) -> None:
    from tests.adversarial_harness import descendants

    for child in descendants(pid):
        try:
            os.kill(child, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def run_harness(spec: dict[str, Any], folder: Path, backstop_s: float = HARNESS_BACKSTOP_S) -> dict[str, Any]:
    """Run tests/adversarial_harness.py on ``spec`` and return its report. GRIND_CACHE_DIR is
    in its environment from the start, as in a user's shell (a submission may look there)."""
    spec = dict(spec, out=str(folder / "report.json"))
    spec_path = folder / "spec.json"
    spec_path.write_text(json.dumps(spec))
    env = dict(os.environ, GRIND_CACHE_DIR=spec["cache"])
    proc = subprocess.Popen([sys.executable, str(HARNESS), str(spec_path)], cwd=folder, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        output, _ = proc.communicate(timeout=backstop_s)
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        output, _ = proc.communicate()
        pytest.fail(f"the harness did not finish in {backstop_s:g} s:\n{output.decode(errors='replace')[-4000:]}")
    report_path = Path(spec["out"])
    if not report_path.is_file():
        pytest.fail(f"the harness wrote no report (exit {proc.returncode}):\n{output.decode(errors='replace')[-4000:]}")
    report: dict[str, Any] = json.loads(report_path.read_text())
    report["output"] = output.decode(errors="replace")[-4000:]
    return report


@pytest.fixture(scope="session")
def pristine_cache() -> Path:
    """The reference's cache entry, and every pair of clipping's mistakes run together, computed
    once per session (the pairs in one trusted job: a diagnosis asks for some of them, and each
    test would otherwise run them in a cold child of its own); each test grades with a copy."""
    import fcntl
    import itertools

    from judge.cache import cache_root
    from judge.catalog import Catalog
    from judge.trusted import pair_source, reference_for

    exercise = Catalog().get("clipping")
    cache_root().mkdir(parents=True, exist_ok=True)
    with open(cache_root() / ".adversarial-lock", "w") as lock:  # one xdist worker computes, the other waits
        fcntl.flock(lock, fcntl.LOCK_EX)
        slugs = [p.slug for p in reference_for(exercise).pitfalls]
        pair_source(exercise)([f"{a}+{b}" for a, b in itertools.combinations(slugs, 2)])
    return cache_root()


def _private_cache(pristine: Path, target: Path) -> Path:
    target.mkdir()
    for entry in [*pristine.glob("clipping-*"), *pristine.glob("clipping.pair.*")]:
        shutil.copytree(entry, target / entry.name)
    return target


def _grade_problems(entry: dict[str, Any] | None, role: str, expected: set[str]) -> list[str]:
    what = {"attacker": "the attacker", "correct": "a correct student graded next to the attacker",
            "wrong": "a plainly wrong student graded next to the attacker",
            "before": "a correct student graded before the attacker", "probe": "the signal probe"}[role]
    if entry is None:
        return [f"{what} was not graded"]
    if entry.get("hung"):
        return [f"{what}: the judge hung (no verdict {entry['elapsed_s']:.0f} s after the start, "
                f"limit {entry['limit_s']:g} s)"]
    if "exception" in entry:
        return [f"{what}: grind raised instead of giving a verdict (exit 4): {entry['exception']}\n"
                f"{entry.get('traceback', '')}"]
    problems = []
    if role != "probe" and entry["status"] not in expected:
        problems.append(f"{what}: {entry['status']} (expected {'|'.join(sorted(expected))}): {entry['message']}")
    if entry.get("survivors"):
        problems.append(f"{what}: a process from the run survived: {entry['survivors']}")
    if entry.get("leftovers"):
        problems.append(f"{what}: temp dirs left behind: {entry['leftovers']}")
    return problems


def test_the_suite_is_large_enough() -> None:
    assert len(FILES) >= 25


def test_every_level_independent_attack_exists_and_needs_nothing() -> None:
    """A stale name here would drop nothing silently (the file would run alone in both modes),
    but say so; and a level-independent attack needs no level and signals nothing."""
    assert LEVEL_INDEPENDENT <= {p.stem for p in FILES}, LEVEL_INDEPENDENT - {p.stem for p in FILES}
    assert COLD_TOO <= LEVEL_INDEPENDENT, COLD_TOO - LEVEL_INDEPENDENT
    for path in FILES:
        if path.stem in LEVEL_INDEPENDENT:
            assert not _needs(path) and not _dangerous(path), path.name
            # graded with WARM_BATCH_LIMIT_S in the warm batch: none may rely on hitting a deadline
            assert "timeout" not in _header(path)[0], path.name


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_file_has_a_header_the_suite_understands(path: Path) -> None:
    """A misspelt level would silently skip a test everywhere: every word must be known."""
    expected, _, _ = _header(path)
    assert expected <= {"passed", "failed", "forbidden", "error", "timeout", "crashed"}, expected
    unknown = set(_needs(path)) - set(LEVELS) - set(LEGACY_NEEDS)
    assert not unknown, f"{path.name}: unknown '# needs:' words {unknown}; use {'|'.join(LEVELS)}"


# The other attacks are graded in a few batches per mode, each by one harness: in warm mode by
# one warm worker (as ``grind grade`` grades a class: whatever an attacker does to the worker,
# the next student meets it), in cold mode each attacker in a fresh process, and its neighbours
# by a warm worker started after it and closed after them. A harness and a server start per
# attack were most of the suite's cost. Each attack is still a test of its own, which reads its grades from its batch's
# report (an xdist unit per batch: tests/conftest.py), and is skipped with its reason where its
# guarantee does not hold.
BATCHES = {"cold": 4, "warm": 3}
_BATCHED = [p for p in FILES if p.stem not in LEVEL_INDEPENDENT]


def batch_of(stem: str, mode: str) -> int:
    """The batch an attack is graded in (round robin over the sorted files)."""
    return [p.stem for p in _BATCHED].index(stem) % BATCHES[mode]


def _workspaces(root: Path, paths: list[Path]) -> tuple[dict[str, Path], dict[str, dict[str, bytes | None]]]:
    """One learner workspace per attacker (its file as clipping.py, beside other work), and a
    snapshot of each. Each sits alone in a folder of its own: an attack on classmates (the
    folders next to its own) must not find the other attackers graded by the same harness."""
    workspaces, before = {}, {}
    for path in paths:
        workspace = root / "workspaces" / path.stem / path.stem
        workspace.mkdir(parents=True)
        shutil.copyfile(path, workspace / "clipping.py")
        (workspace / "canary.txt").write_text("the learner's other work")
        workspaces[path.stem], before[path.stem] = workspace, _snapshot(workspace)
    return workspaces, before


_BATCH_REPORTS: dict[tuple[str, int], dict[str, Any]] = {}


def _batch_report(mode: str, batch: int, factory: pytest.TempPathFactory, pristine: Path) -> dict[str, Any]:
    """Grade one batch's attackers (those whose guarantee holds here) once per session."""
    key = (mode, batch)
    if key in _BATCH_REPORTS:
        return _BATCH_REPORTS[key]
    paths = [p for p in _BATCHED if batch_of(p.stem, mode) == batch and _unmet(p) is None]
    root = factory.mktemp(f"adversarial-{mode}-{batch}")
    workspaces, before = _workspaces(root, paths)
    tmp = root / "tmp"
    tmp.mkdir()
    # Cold: only an attack that can leave something behind (LEAVES_SOMETHING) is followed by the
    # neighbours; warm: every one.
    followed = [str(workspaces[p.stem] / "clipping.py") for p in paths
                if mode == "warm" or LEAVES_SOMETHING.search(p.stem)]
    try:
        report = run_harness({
            "mode": mode, "attackers": [str(workspaces[p.stem] / "clipping.py") for p in paths],
            "limit_s": LIMITS.wall_s, "memory_mb": LIMITS.memory_mb,
            # An attack that may not time out gets the batch's longer clock, as the neighbours do:
            # a correct answer printing 200 MB took over 2 s on a loaded machine.
            "limits_s": {str(workspaces[p.stem] / "clipping.py"): WARM_BATCH_LIMIT_S for p in paths
                         if "timeout" not in _header(p)[0]},
            "neighbour_limit_s": WARM_BATCH_LIMIT_S,
            "cache": str(_private_cache(pristine, root / "cache")), "tmp": str(tmp),
            # two folders down: a submission looking for classmates next to its folder finds none
            "neighbours": str(root / "others" / "students"), "probe": any(_dangerous(p) for p in paths),
            "neighbours_after": followed,
        }, root, backstop_s=HARNESS_BACKSTOP_S * 2)
    except pytest.fail.Exception as exc:  # the harness itself failed: every test of the batch says so
        report = {"error": str(exc), "harness_failed": True}
    report["changed"] = [stem for stem, workspace in workspaces.items() if _snapshot(workspace) != before[stem]]
    report["followed"] = [Path(f).parent.name for f in followed]
    report["tmp_left"] = [str(p) for p in tmp.iterdir()]
    _BATCH_REPORTS[key] = report
    return report


@pytest.mark.parametrize("path, mode", HOSTILE)
def test_hostile_submission_gets_its_verdict_and_leaves_no_trace(
    path: Path, mode: str, tmp_path_factory: pytest.TempPathFactory, pristine_cache: Path
) -> None:
    """The judge returns, with an acceptable verdict, the workspace untouched, no process left and
    no temp dir left; in a fresh process (cold) and in a fork of the warm worker (watch mode, batch
    grading). Then, same mode, same cache: a correct student passes and a wrong one fails (graded
    by the warm worker that graded the attacker, or in cold mode by a warm worker started after the attack)."""
    expected, pitfall, _ = _header(path)
    reason = _unmet(path)
    if reason:
        pytest.skip(reason)
    report = _batch_report(mode, batch_of(path.stem, mode), tmp_path_factory, pristine_cache)
    if report.get("harness_failed"):
        pytest.fail(f"the batch's harness failed: {report['error']}")
    if report.get("unsafe"):
        pytest.fail(f"not running {path.name}'s batch, which holds an attack that would signal processes "
                    f"outside its run: {report['unsafe']}")
    grades = {g["role"]: g for g in report.get("grades", [])}
    me = f":{path.stem}"
    problems = []
    if mode == "warm":
        problems += _grade_problems(grades.get("before"), "before", {"passed"})
    problems += _grade_problems(grades.get("attacker" + me), "attacker", expected)
    attacker = grades.get("attacker" + me) or {}
    if pitfall and attacker.get("status") in expected and attacker.get("pitfall") != pitfall:
        problems.append(f"the attacker was diagnosed as {attacker.get('pitfall')}, not {pitfall}")
    if path.stem in report["followed"]:
        problems += _grade_problems(grades.get("correct" + me), "correct", {"passed"})
        problems += _grade_problems(grades.get("wrong" + me), "wrong", {"failed"})
    if path.stem in report["changed"]:
        problems.append("the learner's workspace changed")
    hung = any(g.get("hung") for g in grades.values())
    if report.get("error") and (not hung or ("attacker" + me) not in grades):
        # a hang stops the batch: the attacks after it say which grade hung
        problems.append(f"the harness failed: {report['error']}\n{report.get('traceback', '')}")
    if not hung:  # after a hang the worker was never closed: what it left says nothing more
        # Found only at the end of the batch (each grade's own survivors and temp dirs are checked
        # above, with the attack that left them): every test of the batch says so.
        if report.get("survivors_at_exit"):
            problems.append(f"processes were still alive at the end of the batch: {report['survivors_at_exit']}")
        if report["tmp_left"]:
            problems.append(f"temp dirs left behind at the end of the batch: {report['tmp_left']}")
    assert not problems, "\n".join(problems) + f"\n--- harness output ---\n{report.get('output', '')}"


# Level-independent attacks that are graded cold as well as warm: those that act on the child
# process or on the judge's own code in it (exits, recursion, the guards, the runner module),
# where a fresh interpreter and a fork of the warm server could differ. The others are values,
# text and exceptions the learner's function returns or raises (a NaN, a tensor subclass, a
# lying __eq__, a message that breaks markup): a fork and a fresh child run the very same code
# on them (runner.execute, then the same result file and the same comparison in the parent),
# so a cold grade of each proved nothing a warm one did not, at a torch start apiece.
COLD_TOO = frozenset({
    "sys_exit_at_import", "sys_exit_in_function", "recursion_caught_then_correct", "recursion_unbounded",
    "forbidden_closure_cell", "forbidden_getattr", "forbidden_module_alias", "forbidden_partial",
    "forbidden_unhook", "patch_comparisons", "patch_runner", "inject_observation_key", "forbidden_reload",
    "forbidden_exec_source",
})
COLD_BATCHES = 2  # cold grades take seconds each: two harnesses, so xdist can run them side by side


@pytest.mark.level_independent
@pytest.mark.parametrize("mode, batch", [("warm", 0), *[("cold", i) for i in range(COLD_BATCHES)]],
                         ids=["warm", *[f"cold-{i + 1}of{COLD_BATCHES}" for i in range(COLD_BATCHES)]])
def test_level_independent_attacks_one_after_another(mode: str, batch: int, tmp_path: Path,
                                                     pristine_cache: Path) -> None:
    """The level-independent attacks (LEVEL_INDEPENDENT: values, text, exceptions, guard tricks,
    none touching anything outside its own process) graded one after another by one harness.
    Warm: one warm worker grades them, as ``grind grade`` grades a class, after a correct student
    and with a correct and a wrong student right after each; the worker passes the correct
    student and fails the wrong one after every attacker (one server start for all of them).
    Cold: those of COLD_TOO, each in a fresh process of its own, as ``grind run --no-daemon``
    grades, like the other attacks' cold tests but in one harness (none leaves anything behind
    for a neighbour).
    Each attacker gets an acceptable verdict (and pitfall) and leaves its workspace untouched, no
    process and no temp dir behind; each attacker's failure is named."""
    paths = [p for p in FILES if p.stem in LEVEL_INDEPENDENT]
    if mode == "cold":
        paths = [p for p in paths if p.stem in COLD_TOO][batch::COLD_BATCHES]
    workspaces, before = _workspaces(tmp_path, paths)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    warm = mode == "warm"
    report = run_harness({
        "mode": mode, "attackers": [str(workspaces[p.stem] / "clipping.py") for p in paths],
        # None of these attacks waits for its deadline (none expects a timeout), so a longer one
        # costs nothing; 2 s per job was hit by correct students on a machine loaded to 6 on 2 cores.
        "limit_s": WARM_BATCH_LIMIT_S, "memory_mb": LIMITS.memory_mb,
        "cache": str(_private_cache(pristine_cache, tmp_path / "cache")), "tmp": str(tmp),
        "neighbours": str(tmp_path / "others" / "students"), "probe": False, "neighbours_after": warm,
    }, tmp_path, backstop_s=HARNESS_BACKSTOP_S * 2)

    grades = {g["role"]: g for g in report.get("grades", [])}
    problems = _grade_problems(grades.get("before"), "before", {"passed"}) if warm else []
    for path in paths:
        expected, pitfall, _ = _header(path)
        mine = _grade_problems(grades.get(f"attacker:{path.stem}"), "attacker", expected)
        if warm:
            mine += [*_grade_problems(grades.get(f"correct:{path.stem}"), "correct", {"passed"}),
                     *_grade_problems(grades.get(f"wrong:{path.stem}"), "wrong", {"failed"})]
        attacker = grades.get(f"attacker:{path.stem}") or {}
        if pitfall and attacker.get("status") in expected and attacker.get("pitfall") != pitfall:
            mine.append(f"the attacker was diagnosed as {attacker.get('pitfall')}, not {pitfall}")
        if _snapshot(workspaces[path.stem]) != before[path.stem]:
            mine.append("the learner's workspace changed")
        problems += [f"{path.name}: {problem}" for problem in mine]
    hung = any(g.get("hung") for g in grades.values())
    if report.get("error") and not hung:
        problems.append(f"the harness failed: {report['error']}\n{report.get('traceback', '')}")
    if not hung:
        if report.get("survivors_at_exit"):
            problems.append(f"processes were still alive at the end: {report['survivors_at_exit']}")
        if list(tmp.iterdir()):
            problems.append(f"temp dirs left behind: {list(tmp.iterdir())}")
    assert not problems, "\n".join(problems) + f"\n--- harness output ---\n{report.get('output', '')}"


# A class: attackers on the class folder and the cache, graded next to a correct and a wrong
# student, by the same code as `grind grade` (warm workers, jobs=2). Names set the order.
CLASS = {
    "a_append": "classmate_append", "b_poison": "poison_reference_cache", "c_copy": "classmate_copy",
    "d_drop": "classmate_drop_student",
}


def test_a_class_with_attackers_in_it_is_graded_fairly(tmp_path: Path, pristine_cache: Path) -> None:
    """Every student gets a row with the right status; the class folder is byte-for-byte the same
    afterwards and no student appears; the cache stays honest (the wrong student still fails)."""
    from judge.batch import find_students
    from judge.catalog import Catalog
    from judge.introspection import reaches_into_judge
    from tests.adversarial_harness import CORRECT, WRONG

    level = isolation().level
    if level not in SANDBOXES:
        pytest.skip(f"a read-only, hidden class folder is not guaranteed at level {level}: see README security model")
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    expected: dict[str, set[str]] = {"y_wrong": {"failed"}, "z_correct": {"passed"}}
    for student, stem in CLASS.items():
        source = ADVERSARIAL / f"{stem}.py"
        if _unmet(source) is None:
            shutil.copyfile(source, class_dir / f"{student}.py")
            expected[student] = set(_header(source)[0])
            if reaches_into_judge(source.read_text(), dynamic=True):
                expected[student].add("forbidden")  # grading for marks refuses it before it runs
    (class_dir / "y_wrong.py").write_text(WRONG)
    (class_dir / "z_correct.py").write_text(CORRECT)
    before = _snapshot(class_dir)
    exercise = Catalog().get("clipping")
    names = [s.name for s in find_students(class_dir, exercise)]
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    report = run_harness({
        "mode": "batch", "class_dir": str(class_dir), "results_dir": str(tmp_path / "results"), "jobs": 2,
        "limit_s": LIMITS.wall_s, "memory_mb": LIMITS.memory_mb, "tmp": str(tmp),
        "cache": str(_private_cache(pristine_cache, tmp_path / "cache")),
    }, tmp_path)

    problems = []
    if report.get("error") or report.get("exception"):
        problems.append(f"grading the class failed: {report.get('error') or report.get('exception')}\n"
                        f"{report.get('traceback', '')}")
    rows = {row["student"]: row for row in report.get("rows", [])}
    if sorted(rows) != sorted(names):
        problems.append(f"rows for {sorted(rows)}, students {sorted(names)}")
    for student, want in expected.items():
        row = rows.get(student)
        if row is not None and row["status"] not in want:
            problems.append(f"{student}: {row['status']} (expected {'|'.join(sorted(want))}): {row['message']}")
    if _snapshot(class_dir) != before:
        changed = sorted(set(before) ^ set(_snapshot(class_dir))) or "contents"
        problems.append(f"the class folder changed: {changed}")
    if [s.name for s in find_students(class_dir, exercise)] != names:
        problems.append(f"a student appeared: {[s.name for s in find_students(class_dir, exercise)]}")
    if report.get("survivors_at_exit"):
        problems.append(f"processes were still alive at the end: {report['survivors_at_exit']}")
    if list(tmp.iterdir()):
        problems.append(f"temp dirs left behind: {list(tmp.iterdir())}")
    assert not problems, "\n".join(problems) + f"\n--- harness output ---\n{report.get('output', '')}"
