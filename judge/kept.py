"""Observations of a kept checkpoint, made in grind's process from what the run left on disk.

A case that declares an entry named ``CHECKPOINT`` (its expected state_dict keys and shapes,
given by the checks' trusted ``entries`` function and carried by the trusted instances) runs on
ranks that each get a folder of their subject and instance (protocol.kept_folder, its path in
``GRIND_KEPT``): the learner's function writes the checkpoint there, and a save that the checks
held until the other ranks had settled writes only once the process that watches the ranks let
it go (worker/child/ranks.hold_save; that process notes when, on the kernel's clock). After the run, with none
of its processes alive, grind reads that folder (worker/outputs.read_kept) and makes, for every
rank, the observations that used to be made inside the ranks, where code that walks frames can
rewrite any value (issue 28):

- ``written by a held torch.save``: 1 when the watcher let a held save go (the ctime of a file it
  made then, of a name no rank knew, carried as a fourth number of ``protocol.KEPT_SEEN``) no
  later than the checkpoint's last change (ctimes are the kernel's; no process sets one back). A
  file written without ``torch.save`` was held by nothing, and then "readable at return" cannot
  show that the other ranks waited for it (a sleep instead of a barrier would pass): grind says
  so rather than guess which mistake was made.
- ``readable at return``: 1 when the checkpoint the run left is a finished zip and it is the very
  file (inode, ctime, size) that stood at its path the moment this rank's record reached the
  child (``protocol.KEPT_SEEN``, taken by the process that watches the ranks, not by the rank:
  rank_cases._seen_when_done). The watcher lets a held save go only after that look, so a
  rank that returned without waiting is seen before the file exists, however the ranks are
  scheduled and whatever they say about themselves; nothing a rank runs afterwards (a thread, a
  forked process that touches the file later) changes what was seen.
- ``loads with weights_only``: 1 when the file is a plain state_dict (worker/checkpoint.py, a
  reader that never unpickles), else 0;
- ``bare keys``: 1 when its keys are exactly the declared ones, else 0;
- ``saved state``: its values in the declared order, NaN where a key is missing or misshapen;
  for a large model ``saved state (sum, sum of squares, sampled sum)``.

Every subject is observed the same way (the reference and the pitfalls in their trusted job,
the learner in theirs), so the comparison is unchanged; whatever a learner's process reported
under these names is dropped first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judge.worker import protocol

if TYPE_CHECKING:
    import numpy as np

    from judge.worker.protocol import RunOutcome

CHECKPOINT = "checkpoint file"  # the entry a case declares: [(key, shape), ...] of the expected state_dict
READABLE, LOADS, BARE = "readable at return", "loads with weights_only", "bare keys"
HELD = "written by a held torch.save"
STATE, SUMMARY = "saved state", "saved state (sum, sum of squares, sampled sum)"
SUMMARY_OVER = 4096  # a state larger than this is observed as a summary: its every value per rank would be writes
NAMES = (HELD, READABLE, LOADS, BARE, STATE, SUMMARY, protocol.KEPT_SEEN)


def _rank_of(key: str) -> tuple[int, str] | None:
    head, sep, rest = key.partition(": ")
    if sep and head.startswith("rank ") and head[5:].isdigit():
        return int(head[5:]), rest
    return None


def _expected(instance: protocol.Instance) -> list[tuple[str, list[int]]] | None:
    for name, pieces in (instance.entries or {}).items():
        split = _rank_of(name)
        if (split[1] if split else name) == CHECKPOINT:
            return [(str(label), [int(n) for n in shape]) for label, shape in pieces]
    return None


def apply(outcome: RunOutcome, instances: list[protocol.Instance]) -> None:
    """Replace, in place, every subject's kept-checkpoint observations with grind's own (see the
    module's docstring). ``instances``: trusted ones (the reference's), which declare what is kept."""
    if outcome.result is None:
        return
    # The looks among the observations, found once: a daemon-served job has a hundred-odd
    # observations and thirty-odd instances, and a scan per instance cost a millisecond.
    looks = [k for k in outcome.observations if k.endswith(protocol.KEPT_SEEN)]
    for instance in instances:
        expected = _expected(instance)
        if expected is None:
            _drop_look(outcome, instance.name, looks)
            continue
        for sid, record in outcome.result.subjects.items():
            case = record.cases.get(instance.name)
            if case is not None:
                _apply_case(outcome, sid, instance.name, case, expected)


def _drop_look(outcome: RunOutcome, name: str, looks: list[str]) -> None:
    """A case that keeps no checkpoint: the child's look at the (empty) kept path, which it takes
    for every distributed case, is not one of its observations (the sharded-clip, ddp-token-loss
    and no-sync-accumulation statements know nothing of it)."""
    assert outcome.result is not None
    for sid, record in outcome.result.subjects.items():
        case = record.cases.get(name)
        if case is None:
            continue
        case.keys = [k for k in case.keys if _bare(k) != protocol.KEPT_SEEN]
        prefix = protocol.obs_name(sid, name, "")
        for key in [k for k in looks if k.startswith(prefix) and k in outcome.observations]:
            del outcome.observations[key]


def _apply_case(outcome: RunOutcome, sid: str, name: str, case: protocol.CaseRecord,
                expected: list[tuple[str, list[int]]]) -> None:
    """One subject's instance: drop its own word under ``NAMES``, then add grind's, rank by rank
    after each rank's other observations (the order the checks used to report them in)."""
    ranks = sorted({split[0] for split in map(_rank_of, case.keys) if split} or {0})
    looks = {rank: _look(outcome.observations.get(protocol.obs_name(sid, name, f"rank {rank}: {protocol.KEPT_SEEN}")))
             for rank in ranks}
    seen = {rank: look[0] for rank, look in looks.items()}
    held = next((look[1] for look in looks.values() if look[1] is not None), None)
    for key in [k for k in outcome.observations if _theirs(k, sid, name)]:
        del outcome.observations[key]  # the subject's own word for these: never kept
    case.keys = [k for k in case.keys if _bare(k) not in NAMES]
    if case.status != "ok":
        return
    observed = observe(outcome.kept.get(protocol.kept_folder(sid, name), protocol.KeptCase()), expected, seen, held)
    for rank in ranks:
        for key, value in observed[rank].items():
            outcome.observations[protocol.obs_name(sid, name, f"rank {rank}: {key}")] = value
    case.keys = _ordered(case.keys, ranks, observed)


def _ordered(own: list[str], ranks: list[int], observed: dict[int, dict[str, Any]]) -> list[str]:
    """Each rank's own keys, then grind's for that rank; keys of no rank last."""
    keys: list[str] = []
    for rank in ranks:
        keys += [k for k in own if (_rank_of(k) or (None,))[0] == rank]
        keys += [f"rank {rank}: {key}" for key in observed[rank]]
    return keys + [k for k in own if _rank_of(k) is None]


def _look(value: Any) -> tuple[tuple[int, int, int] | None, int | None]:
    """The child's look at the path when a rank's record arrived, (inode, ctime, size) or None,
    and the ctime of the case's first grant of a held save, or None."""
    try:
        numbers = [int(n) for n in value.reshape(-1)] if value is not None else []
    except (AttributeError, TypeError, ValueError, OverflowError):
        return None, None
    if len(numbers) != 4:
        return None, None
    seen = (numbers[0], numbers[1], numbers[2]) if min(numbers[:3]) >= 0 else None
    return seen, numbers[3] if numbers[3] >= 0 else None


def _theirs(name: str, sid: str, instance: str) -> bool:
    """Whether an observation's full name is one of ``NAMES`` of this subject's instance."""
    parts = protocol.split_obs_name(name)
    return parts is not None and parts[:2] == (sid, instance) and _bare(parts[2]) in NAMES


def _bare(key: str) -> str:
    split = _rank_of(key)
    return split[1] if split else key


def observe(folder: protocol.KeptCase, expected: list[tuple[str, list[int]]],
            seen: dict[int, tuple[int, int, int] | None], held: int | None = None) -> dict[int, dict[str, Any]]:
    """Each rank's observations of one kept folder (``seen``: what stood at the path when each
    rank's record arrived; ``held``: the ctime of the first grant of a held save, or None)."""
    import numpy as np

    state = folder.state
    loads = state is not None
    bare = loads and set(state or {}) == {key for key, _ in expected}
    values = _values(state, expected)
    total = sum(int(np.prod(shape)) for _, shape in expected)
    if total > SUMMARY_OVER:
        values = np.array([values.sum(), (values * values).sum(), values[:: max(len(values) // 64, 1)].sum()])
        name = SUMMARY
    else:
        name = STATE
    final = (folder.inode, folder.ctime_ns, folder.size)
    wrote = folder.ctime_ns is not None and held is not None and held <= folder.ctime_ns
    out = {}
    for rank, looked in seen.items():
        readable = folder.finished and looked is not None and looked == final
        out[rank] = {HELD: np.array(int(wrote), dtype=np.int64), READABLE: np.array(int(readable), dtype=np.int64),
                     LOADS: np.array(int(loads), dtype=np.int64),
                     BARE: np.array(int(bare), dtype=np.int64), name: values.copy()}
    return out


def _values(state: dict[Any, Any] | None, expected: list[tuple[str, list[int]]]) -> np.ndarray:
    """The saved values in the declared key order, as float64, NaN for a key missing or misshapen."""
    import numpy as np

    pieces = []
    for key, shape in expected:
        got = (state or {}).get(key)
        if isinstance(got, np.ndarray) and list(got.shape) == shape and got.dtype.kind in "biuf":
            pieces.append(got.astype(np.float64).reshape(-1))
        else:
            pieces.append(np.full(int(np.prod(shape)), np.nan))
    return np.concatenate(pieces) if pieces else np.zeros(0)
