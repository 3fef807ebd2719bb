"""The adversarial suite: hostile and broken submissions against the clipping exercise.

Each file in ``tests/adversarial/`` says on its first line which verdicts are acceptable
(``# expect: crashed`` or ``# expect: error|crashed|timeout``), and optionally on its second
what isolation it relies on (``# needs: bwrap`` for a hidden solutions folder, ``# needs:
isolation`` for a read-only workspace, given by bubblewrap or by the unprivileged user;
``# needs: pids`` for a bound on processes, a pids cgroup or the unprivileged user's NPROC).

For every submission the suite also proves that the judge came back, that nothing in the
learner's workspace changed, and that no process the run started is still alive.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

from judge.catalog import Catalog
from judge.grade import grade, hidden_from_learners
from judge.worker.sandbox import Limits, WarmWorker, can_bound_processes, isolation

ADVERSARIAL = Path(__file__).parent / "adversarial"
FILES = sorted(ADVERSARIAL.glob("*.py"))
LIMITS = Limits(wall_s=2.0, memory_mb=1536)


def _header(path: Path) -> tuple[set[str], str | None, str | None]:
    # utf-8-sig and "replace": some submissions start with a BOM, or are not UTF-8 at all, on purpose
    lines = path.read_bytes().decode("utf-8-sig", errors="replace").splitlines() + ["", ""]
    match = re.match(r"#\s*expect:\s*([\w|]+)(?:\s+pitfall=(\S+))?", lines[0])
    assert match, f"{path.name}: first line must be '# expect: STATUS[|STATUS...] [pitfall=SLUG]'"
    needs = re.match(r"#\s*needs:\s*(\w+)", lines[1])
    return set(match.group(1).split("|")), match.group(2), needs.group(1) if needs else None


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_the_suite_is_large_enough() -> None:
    assert len(FILES) >= 25


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmWorker]:
    exercise = Catalog().get("clipping")
    with WarmWorker(hidden_from_learners(exercise)) as worker:
        yield worker


@pytest.mark.parametrize("mode", ["cold", "warm"])
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_hostile_submission_gets_its_verdict_and_leaves_no_trace(
    path: Path, mode: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge returns, with an acceptable verdict, the workspace untouched, no process left;
    in a fresh process (cold) and in a fork of the warm worker (watch mode, batch grading)."""
    expected, pitfall, needs = _header(path)
    iso = isolation()
    if needs == "bwrap" and not iso.bwrap:
        pytest.skip("hiding the solutions folder needs bubblewrap")
    if needs == "isolation" and not (iso.bwrap or iso.drop_to is not None):
        pytest.skip("a read-only workspace needs bubblewrap or running as root")
    if needs == "pids" and not can_bound_processes():
        pytest.skip("without a pids cgroup only the clock would stop this: not run on a shared machine")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    submission = workspace / "clipping.py"
    shutil.copyfile(path, submission)
    (workspace / "canary.txt").write_text("the learner's other work")
    before = _snapshot(workspace)
    worker = request.getfixturevalue("warm") if mode == "warm" else None
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    if worker is None:  # cold runs make their temp dir here, so we can see it is removed
        monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    baseline = set(_descendants(os.getpid()))

    started = time.monotonic()
    verdict = grade(Catalog().get("clipping"), submission, limits=LIMITS, worker=worker)
    elapsed = time.monotonic() - started

    assert verdict.status.value in expected, f"{verdict.status.value}: {verdict.message or verdict.first_failure}"
    if pitfall:
        assert verdict.diagnosis is not None and verdict.diagnosis.slug == pitfall
    assert elapsed < LIMITS.wall_s + 90, "the judge hung"  # a hang detector, not a speed claim: see bench/
    assert _snapshot(workspace) == before
    survivors = set(_descendants(os.getpid())) - baseline
    if worker is not None and worker.proc is not None:
        # The server itself stays (under bubblewrap: bwrap, the namespace's init, the server);
        # nothing below it may.
        servers, level = {worker.proc.pid}, {worker.proc.pid}
        for _ in range(2 if isolation().bwrap else 0):
            level = {p for p in _descendants(worker.proc.pid) if _parent(p) in level}
            servers |= level
        survivors -= servers
    assert not survivors, "a process from the run survived"
    leftovers = list(private_tmp.iterdir()) if worker is None else list(Path(worker.root or "/nonexistent").glob("job-*"))
    assert not leftovers, f"temp dirs left behind: {leftovers}"
