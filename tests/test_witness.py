"""Figures counted outside the learner's process (judge/worker/witness.py, judge/witnessed.py).

The second red team forged passes on no-sync-accumulation and rank0-checkpoint by rewriting the
counters the checks keep in the learner's own process (``sys._getframe``, ``gc``). These tests
prove that the figures that now decide those verdicts come from outside: the run's loopback
traffic and its bytes written, read by the cold run's waiter and the warm server after the run is
reaped, and that whatever a learner's process writes under a witness key is thrown away. The
forgeries in ``tests/adversarial/witness/`` are graded cold and warm at the level the machine
gives (CI: root with bubblewrap, and the laptop mode's unprivileged Landlock).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judge.catalog import Catalog, load_exercise
from judge.errors import ManifestError
from judge.models import CheckStatus
from judge.worker import protocol, witness

from .conftest import ROOT

FORGERIES = sorted((ROOT / "tests" / "adversarial" / "witness").glob("*.py"))


def _header(path: Path) -> tuple[str, str, str]:
    text = path.read_text()
    expect = re.search(r"^# expect: (\w+) pitfall=([\w-]+)$", text, re.M)
    exercise = re.search(r"^# exercise: ([\w-]+)$", text, re.M)
    assert expect and exercise, f"{path.name}: needs '# expect: failed pitfall=...' and '# exercise: ...'"
    return exercise.group(1), expect.group(1), expect.group(2)


def test_counters_read_this_process_and_only_grow() -> None:
    before = witness.sample()
    if before["writes"] is None:
        pytest.skip("no /proc/self/io on this system: the witness has nothing to read (README, Security model)")
    with open(os.devnull, "wb") as sink:
        sink.write(b"x" * 100_000)
    after = witness.since(before)
    assert after["writes"] is not None and after["writes"] >= 100_000
    later = dict(witness.sample(), writes=10**15)
    assert witness.since(later)["writes"] == 0  # never negative


def test_printing_is_taken_off_the_writes_only_up_to_an_allowance() -> None:
    """A learner's prints are not checkpoints; but bytes reach a pipe without write(2) (vmsplice),
    so a run cannot print its way back under its count: at most PRINT_ALLOWANCE comes off."""
    from judge.worker.sandbox import PRINT_ALLOWANCE, less_printed

    assert less_printed({"traffic": 5, "writes": 5000}, 1000) == {"traffic": 5, "writes": 4000}
    big = 12 * PRINT_ALLOWANCE
    assert less_printed({"traffic": None, "writes": big}, big)["writes"] == big - PRINT_ALLOWANCE
    assert less_printed({"traffic": 1, "writes": None}, 10) == {"traffic": 1, "writes": None}
    assert less_printed(None, 10) is None


@pytest.mark.parametrize("raw, expected", [
    ({"traffic": 5, "writes": None}, {"traffic": 5, "writes": None}),
    ({"traffic": -1, "writes": 3}, None),
    ({"traffic": 1.5}, None),
    ({"traffic": True}, None),
    ("traffic", None),
    (None, None),
])
def test_a_witness_report_is_parsed_strictly(raw: Any, expected: Any) -> None:
    assert protocol.parse_witness(raw) == expected


def _manifest(tmp_path: Path, witness_table: str) -> Path:
    folder = tmp_path / "exercises" / "demo"
    folder.mkdir(parents=True)
    (folder / "exercise.toml").write_text(
        'title = "t"\ntopic = "t"\ndifficulty = "easy"\nentry = ["f"]\nhints = ["h"]\n' + witness_table)
    (folder / "README.md").write_text("x")
    (folder / "stub.py").write_text("x")
    solutions = tmp_path / "solutions" / "demo"
    solutions.mkdir(parents=True)
    for name in ("reference.py", "checks.py", "pitfalls.py"):
        (solutions / name).write_text("x")
    return folder


@pytest.mark.parametrize("table", ['[witness]\ncase = "c"\n', '[witness]\ncase = "c"\ncounter = "bytes"\n',
                                   'witness = 3\n', '[witness]\ncase = 1\ncounter = "writes"\n',
                                   '[witness]\ncase = "c"\ncounter = "writes"\nsupersedes = "saves"\n',
                                   '[witness]\ncase = "c"\ncounter = "writes"\nextra = 1\n'])
def test_a_malformed_witness_table_is_a_one_line_manifest_error(tmp_path: Path, table: str) -> None:
    folder = _manifest(tmp_path, table)
    with pytest.raises(ManifestError, match="witness") as caught:
        load_exercise(folder, tmp_path / "solutions")
    assert "\n" not in str(caught.value)
    good = load_exercise(_manifest(tmp_path / "ok", '[witness]\ncase = "c"\ncounter = "writes"\n'),
                         tmp_path / "ok" / "solutions")
    assert good.witness == ("c", "writes", ())
    listed = load_exercise(_manifest(tmp_path / "listed", '[witness]\ncase = "c"\ncounter = "writes"\n'
                                     'supersedes = ["saves"]\n'), tmp_path / "listed" / "solutions")
    assert listed.witness == ("c", "writes", ("saves",))


def test_a_figure_the_learners_process_wrote_is_replaced_by_the_witnesss() -> None:
    """No learner job writes a witness key; one that forges one (raw or figure) loses it, and
    the figure is the witness's count over the reference's. Without a count, the reference's
    figure stands and the verdict says it was not counted."""
    from judge import witnessed
    from judge.subjects import REFERENCE, Reference, SubjectRun

    exercise = Catalog().get("no-sync-accumulation")
    case, counter, _ = exercise.witness
    key = witnessed.FIGURES[counter]
    instance = protocol.Instance(case, case, "edge", {})
    reference = SubjectRun(protocol.SubjectRecord(cases={case: protocol.CaseRecord("ok", keys=[key])}),
                           {case: {key: np.array(1)}})
    ref = Reference([instance], [], {REFERENCE: reference}, witness_raw=1000.0)

    def forged() -> Any:
        keys = ["grads", key, protocol.WITNESSED + counter]
        return SubjectRun(protocol.SubjectRecord(cases={case: protocol.CaseRecord("ok", keys=keys)}),
                          {case: {"grads": np.zeros(2), key: np.array(1), protocol.WITNESSED + counter: np.array(1000)}})

    run = forged()
    assert witnessed.learner(exercise, ref, run, {"traffic": 3900, "writes": 0}) is None
    assert int(run.obs[case][key]) == 4
    assert protocol.WITNESSED + counter not in run.obs[case]
    assert run.cases[case].keys == ["grads", key]
    uncounted = forged()
    notice = witnessed.learner(exercise, ref, uncounted, None)
    assert notice and "could not count" in notice and int(uncounted.obs[case][key]) == 1


@pytest.mark.parametrize("path", FORGERIES, ids=[p.stem for p in FORGERIES])
def test_a_forged_in_process_count_fails_named_cold_and_warm(path: Path) -> None:
    """The forgeries rewrite every counter the learner's process holds; the verdict still fails
    on the witnessed case, with the real mistake's name, in a fresh child and in a warm fork."""
    from judge.worker.isolation import isolation

    from .conftest import graded_cold_and_warm

    if isolation().level not in ("bubblewrap", "landlock"):
        pytest.skip(f"isolation level {isolation().level}: no witness outside the run (README, Security model)")
    slug, status, pitfall = _header(path)
    exercise = Catalog().get(slug)
    case = exercise.witness[0]
    for verdict in graded_cold_and_warm(exercise, path):
        assert verdict.status.value == status, (verdict.message, [c.message for c in verdict.checks if c.message])
        failing = [c.name for c in verdict.checks if c.status is not CheckStatus.PASSED]
        assert failing == [case], failing
        assert verdict.diagnosis is not None and verdict.diagnosis.slug == pitfall, verdict.diagnosis
        assert not any("could not count" in notice for notice in verdict.notices)
        assert any("grind counted from outside" in notice for notice in verdict.notices), verdict.notices


REBINDINGS = sorted((ROOT / "tests" / "adversarial" / "rebind").glob("*.py"))


@pytest.mark.parametrize("path", REBINDINGS, ids=[p.stem for p in REBINDINGS])
def test_a_rank_that_never_waited_fails_however_torch_load_is_rebound_or_the_file_faked(path: Path) -> None:
    """A second red team passed a rank0-checkpoint answer with no barrier by rebinding
    ``torch.load`` (or ``torch.serialization``'s helpers) by plain assignment, so that the
    checks' read after each rank returned "found" a complete file. "readable at return" is now
    read with the system calls themselves, bound before the learner's file loads, and must be the
    very file every rank reads at the end (a third red team wrote an empty zip's end record at the
    path from the ranks that never waited): practice names the real mistake; for marks, changing
    a module's attribute is refused before anything runs."""
    from judge.grade import grade

    slug, status, pitfall = _header(path)
    exercise = Catalog().get(slug)
    practice = grade(exercise, path)
    assert practice.status.value == status, (practice.message, [c.message for c in practice.checks if c.message])
    assert practice.diagnosis is not None and practice.diagnosis.slug == pitfall, practice.diagnosis
    marked = grade(exercise, path, marked=True)  # refused outright, or graded as practice is
    assert (marked.status.value == "forbidden" and "changing " in marked.message) or (
        marked.status.value == status and marked.diagnosis is not None and marked.diagnosis.slug == pitfall), \
        marked.message
