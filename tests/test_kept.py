"""rank0-checkpoint's file facts come from outside the learner's ranks (issue 28; judge/kept.py).

A case keeps the checkpoint it wrote in a folder grind names; after the run, with none of its
processes alive, grind reads that file as hostile bytes (never a link, never a FIFO, capped),
parses it with a reader that never unpickles (judge/worker/checkpoint.py), and makes "loads with
weights_only", "bare keys", "saved state" and "readable at return" itself, the last from what
the process that watches the ranks saw at the path when each rank returned. These tests prove:

- the reader reads what torch.save writes, and refuses what a state_dict never holds (a pickled
  module, a tensor reaching past its storage), without running any of it;
- the folder reader refuses links, FIFOs and folders in the checkpoint's place;
- "readable at return" is what the child saw at the path when each rank's record arrived (not a
  rank's word, nor a marker a rank could touch again later), and a file that no held save wrote is
  said to be so ("written by a held torch.save");
- the attacks in ``tests/adversarial/kept/`` (forgers that rewrite every in-process value, writers
  that skip torch.save) fail, named by the real mistake, in practice and for marks.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from judge import kept
from judge.catalog import Catalog
from judge.worker import protocol
from judge.worker.checkpoint import read_state_dict
from judge.worker.outputs import read_kept

from .conftest import ROOT

# A hole left open, said in the README's security model: the checks' hold on rank 0's save rests on
# what each rank says about itself (its marker files), so a rank that lies in them lets rank 0
# write early, and a rank that returned without waiting may then be looked at after the write.
KNOWN: dict[str, str] = {}
ATTACKS = sorted((ROOT / "tests" / "adversarial" / "kept").glob("*.py"))


def _saved(obj: object) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    net(torch.randn(4, 3))
    return net


def test_the_reader_reads_a_state_dict_as_torch_saved_it() -> None:
    state = _model().state_dict()
    read = read_state_dict(_saved(state))
    assert read is not None and list(read) == list(state)
    for key, value in state.items():
        assert np.array_equal(read[key], value.numpy()), key
    strided = {"every other": torch.arange(10)[::2], "transposed": torch.randn(3, 4).t()}
    read = read_state_dict(_saved(strided))
    assert read is not None and all(np.array_equal(read[k], v.numpy()) for k, v in strided.items())


def test_the_reader_refuses_a_pickled_module_and_garbage() -> None:
    assert read_state_dict(_saved(_model())) is None  # a module object: a global outside the allow-list
    assert read_state_dict(b"PK\x05\x06" + b"\0" * 18) is None  # an empty zip: no pickle in it
    assert read_state_dict(b"not a zip at all") is None


class _Storage:
    """Stands for a storage in a hand-made pickle (its persistent id names torch.FloatStorage)."""


class _Tensor:
    def __init__(self, size: tuple[int, ...], stride: tuple[int, ...], offset: int = 0) -> None:
        self.size, self.stride, self.offset = size, stride, offset

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return torch._utils._rebuild_tensor_v2, (_STORAGE, self.offset, self.size, self.stride, False,
                                                 collections.OrderedDict())


_STORAGE = _Storage()


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: object) -> object:
        return ("storage", torch.FloatStorage, "0", "cpu", 4) if obj is _STORAGE else None


def _hand_made(tensor: _Tensor) -> bytes:
    """A torch.save-shaped zip whose one tensor has the given size and stride over 4 floats."""
    program = io.BytesIO()
    _Pickler(program, protocol=2).dump(collections.OrderedDict(weight=tensor))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("archive/data.pkl", program.getvalue())
        archive.writestr("archive/data/0", np.arange(4, dtype=np.float32).tobytes())
    return out.getvalue()


def test_a_tensor_that_reaches_past_its_storage_is_refused_not_read() -> None:
    """numpy's as_strided reads whatever memory lies past a buffer: the reader checks first."""
    good = read_state_dict(_hand_made(_Tensor((2, 2), (2, 1))))
    assert good is not None and good["weight"].tolist() == [[0.0, 1.0], [2.0, 3.0]]
    for tensor in (_Tensor((1000,), (1,)), _Tensor((2,), (4,)), _Tensor((2,), (1,), offset=3),
                   _Tensor((2,), (-1,), offset=1), _Tensor((1 << 40,), (0,))):
        assert read_state_dict(_hand_made(tensor)) is None, (tensor.size, tensor.stride, tensor.offset)


def _kept_folder(tmp_path: Path) -> Path:
    folder = tmp_path / protocol.KEPT / protocol.kept_folder("learner", "case")
    folder.mkdir(parents=True)
    return folder


def _read(tmp_path: Path) -> protocol.KeptCase:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return read_kept(fd)[protocol.kept_folder("learner", "case")]
    finally:
        os.close(fd)


def test_the_kept_checkpoint_is_read_only_as_a_regular_file(tmp_path: Path) -> None:
    folder = _kept_folder(tmp_path)
    good = tmp_path / "good.pt"
    good.write_bytes(_saved(_model().state_dict()))
    (folder / "checkpoint.pt").symlink_to(good)
    case = _read(tmp_path)
    assert case.state is None and not case.finished and case.ctime_ns is None
    (folder / "checkpoint.pt").unlink()
    os.mkfifo(folder / "checkpoint.pt")
    assert _read(tmp_path).state is None
    (folder / "checkpoint.pt").unlink()
    (folder / "checkpoint.pt").write_bytes(good.read_bytes())
    case = _read(tmp_path)
    assert case.state is not None and case.finished
    assert (case.inode, case.size) == ((folder / "checkpoint.pt").stat().st_ino, len(good.read_bytes()))


def _case(final: int | None, held: int | None, finished: bool = True) -> tuple[protocol.KeptCase, int | None]:
    """A kept folder whose checkpoint last changed at ``final``, and the watcher's first grant at ``held``."""
    return protocol.KeptCase(state={}, finished=finished, ctime_ns=final, inode=7, size=100), held


def _readable(case: tuple[protocol.KeptCase, int | None], seen: dict[int, tuple[int, int, int] | None]) -> list[int]:
    observed = kept.observe(case[0], [("w", [1])], seen, case[1])
    return [int(observed[r][kept.READABLE]) for r in sorted(seen)]


def _held(case: tuple[protocol.KeptCase, int | None]) -> int:
    return int(kept.observe(case[0], [("w", [1])], {0: None}, case[1])[0][kept.HELD])


def test_readable_at_return_is_what_the_child_saw_when_the_rank_returned() -> None:
    """A rank is readable when the file the run left is the very one (inode, ctime, size) that
    stood at the path when its record reached the child."""
    final = (7, 20, 100)
    assert _readable(_case(final=20, held=10), {0: final, 1: final}) == [1, 1]
    assert _readable(_case(final=20, held=10), {0: final, 1: None}) == [1, 0]  # nothing there yet for rank 1
    assert _readable(_case(final=20, held=10), {0: final, 1: (7, 12, 100)}) == [1, 0]  # changed since
    assert _readable(_case(final=20, held=10), {0: final, 1: (8, 20, 100)}) == [1, 0]  # another file since
    assert _readable(_case(final=20, held=10, finished=False), {0: final, 1: final}) == [0, 0]
    assert _readable(_case(final=None, held=10), {0: final, 1: final}) == [0, 0]


def test_a_file_no_held_save_wrote_is_said_to_be_so() -> None:
    """Written without torch.save, the file was held by nothing: whether the ranks waited for it
    cannot be told, and grind says that instead of guessing which mistake was made."""
    assert _held(_case(final=20, held=10)) == 1
    assert _held(_case(final=20, held=20)) == 1  # one tick of the file clock: in order
    assert _held(_case(final=20, held=None)) == 0
    assert _held(_case(final=20, held=25)) == 0  # the file's last change came before the hold
    assert _held(_case(final=None, held=10)) == 0


def _header(path: Path) -> tuple[str, str | None, str | None]:
    """(status, pitfall or None, what a failing check must say or None) from the attack's header."""
    text = path.read_text()
    expect = re.search(r"^# expect: (\w+) pitfall=([\w-]+)$", text, re.M)
    assert expect and re.search(r"^# attack: ", text, re.M), f"{path.name}: needs '# expect: ...' and '# attack: ...'"
    says = re.search(r"^# says: (.+)$", text, re.M)
    return expect.group(1), None if expect.group(2) == "-" else expect.group(2), says.group(1) if says else None


@pytest.mark.parametrize("path", ATTACKS, ids=[path.stem for path in ATTACKS])
def test_an_attack_on_the_checkpoints_facts_fails_named_in_practice_and_for_marks(path: Path) -> None:
    """In practice the scan lets frame walking and profile hooks through: the forgers rewrite
    every value the ranks report, and still fail with the real mistake's name, because those
    values are no longer the ranks' to report. For marks each is refused before it runs, or
    fails the same way."""
    from judge.grade import grade

    status, pitfall, says = _header(path)
    exercise = Catalog().get("rank0-checkpoint")
    practice = grade(exercise, path)
    assert practice.status.value == status, (practice.message, [c.message for c in practice.checks if c.message])
    if pitfall is not None:
        assert practice.diagnosis is not None and practice.diagnosis.slug == pitfall, practice.diagnosis
    if says is not None:
        assert any(says in c.message for c in practice.checks), [c.message for c in practice.checks]
    if path.stem in KNOWN:
        # the practice half above must hold; the marks half is the known hole: said, not skipped quietly
        pytest.xfail(KNOWN[path.stem])
    marked = grade(exercise, path, marked=True)
    assert marked.status.value in (status, "forbidden"), marked.message
    if marked.status.value == status and pitfall is not None:
        assert marked.diagnosis is not None and marked.diagnosis.slug == pitfall, marked.diagnosis


def test_what_a_learners_ranks_say_about_the_file_is_replaced_by_what_grind_read() -> None:
    """The learner's process reports a correct file on every rank (readable, loads, bare keys, the
    right values, and a look at the path of its own); grind's read of the kept folder, a wrapper's
    state_dict ("module." keys) that no rank was looked at with, replaces every one of them."""
    from judge.worker.protocol import CaseRecord, Instance, Result, RunOutcome, SubjectRecord

    expected = [("weight", [2]), ("bias", [1])]
    instance = Instance("case", "case", "fixed", {}, entries={f"rank {r}: {kept.CHECKPOINT}": expected
                                                             for r in range(2)})
    forged = {"torch.save calls": np.array(1), kept.READABLE: np.array(1), kept.LOADS: np.array(1),
              kept.BARE: np.array(1), kept.STATE: np.array([1.0, 2.0, 3.0]),
              protocol.KEPT_SEEN: np.array([7, 20, 100, 10])}
    observations = {protocol.obs_name("learner", "case", f"rank {r}: {k}"): v for r in range(2) for k, v in forged.items()}
    record = CaseRecord("ok", keys=[f"rank {r}: {k}" for r in range(2) for k in forged])
    wrapper = {"module.weight": np.array([1.0, 2.0], dtype=np.float32), "module.bias": np.array([3.0], dtype=np.float32)}
    outcome = RunOutcome(status="ok", result=Result(token="", observations_sha256="",
                                                    subjects={"learner": SubjectRecord(cases={"case": record})}),
                         observations=observations)
    outcome.kept = {protocol.kept_folder("learner", "case"): protocol.KeptCase(
        state=wrapper, finished=True, ctime_ns=20, inode=7, size=100)}
    outcome.observations = {k: v for k, v in observations.items() if not k.endswith(protocol.KEPT_SEEN)}
    kept.apply(outcome, [instance])  # the child's look is missing: the rank's own was never kept
    got = {k.split("::")[-1]: v for k, v in outcome.observations.items()}
    for rank in range(2):
        assert int(got[f"rank {rank}: {kept.HELD}"]) == 0  # no grant was seen either
        assert int(got[f"rank {rank}: {kept.READABLE}"]) == 0
        assert int(got[f"rank {rank}: {kept.LOADS}"]) == 1
        assert int(got[f"rank {rank}: {kept.BARE}"]) == 0
        assert np.isnan(got[f"rank {rank}: {kept.STATE}"]).all()
        assert int(got[f"rank {rank}: torch.save calls"]) == 1  # not a kept fact: left as it was
        assert f"rank {rank}: {protocol.KEPT_SEEN}" not in got
    assert record.keys == [f"rank {r}: {k}" for r in range(2)
                           for k in ("torch.save calls", kept.HELD, kept.READABLE, kept.LOADS, kept.BARE, kept.STATE)]
