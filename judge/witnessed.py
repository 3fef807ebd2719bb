"""Figures counted outside the learner's process, as observations of the witnessed case.

An exercise whose mistakes show in how the code ran rather than in its numbers (every microbatch
all-reduced, every rank writing the checkpoint) names one case in ``exercise.toml``::

    [witness]
    case = "large_model"   # the case its figure is shown under
    counter = "traffic"    # or "writes" (see judge/worker/witness.py)

Every run of that exercise is then counted by the kernel, and read by a process that runs no
learner code: a trusted job measures each of its subjects itself (the reference, each pitfall),
a learner's job is measured by its witness (the waiter of a cold run, the warm server). The
figure shown is the subject's count over the reference's, rounded: 1 for a correct answer, about
k for one that all-reduces each of k microbatches of the witnessed case, R for R ranks that all
write the checkpoint. The witnessed case is built so that its own traffic or writes dwarf the
other cases' (a large model), which keeps the rounding honest.

Why a ratio and not the raw count: bytes depend on gloo's framing, torch's zip layout and the
machine, and the reference, run on the same machine with the same torch, cancels all of that.
Why it cannot be forged: a submission can only add traffic or writes, never remove them, and
the figure in its own observations is thrown away before the comparison (a learner's job never
writes one: only trusted jobs do, see worker/child/job.record_witnessed).

Where no witness could count (no private network namespace for traffic, a run killed before
its waiter reported, the ``limits-only`` level), the figure is taken as the reference's and
the verdict says that it was not counted: an honest "not checked" rather than a false reject.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from judge.models import Exercise
from judge.subjects import REFERENCE
from judge.worker import protocol

if TYPE_CHECKING:
    from judge.compare import Observations
    from judge.subjects import Reference, SubjectRun

FIGURES = {
    "traffic": "communication between ranks, counted by grind (x a correct answer's)",
    "writes": "bytes written to files, counted by grind (x a correct answer's)",
}


def raw_key(counter: str) -> str:
    return protocol.WITNESSED + counter


def figure_key(exercise: Exercise) -> str | None:
    return FIGURES[exercise.witness[1]] if exercise.witness else None


def _gate_instances(exercise: Exercise, instances: list[protocol.Instance]) -> list[str]:
    assert exercise.witness is not None
    return [i.name for i in instances if i.case == exercise.witness[0]]


def reference_raw(exercise: Exercise, runs: dict[str, SubjectRun], instances: list[protocol.Instance]) -> float | None:
    """The reference's own raw count on the witnessed case (before :func:`trusted` turns it into
    a figure), or None when it has none."""
    if not exercise.witness:
        return None

    own = runs.get(REFERENCE)
    for name in _gate_instances(exercise, instances):
        value = own.obs.get(name, {}).get(raw_key(exercise.witness[1])) if own else None
        if value is not None:
            return float(value)
    return None


def _figure(value: float, reference: float) -> int:
    return int(round(value / reference)) if reference > 0 else (1 if value <= 0 else 2)


def _set(run: SubjectRun, instance: str, key: str, figure: int) -> None:
    import numpy as np  # here, not at import: a cold `grind run` loads numpy only after its child is done

    record = run.cases[instance]
    run.obs.setdefault(instance, {})[key] = np.array(figure, dtype=np.int64)
    record.keys = [k for k in record.keys if k != key] + [key]


def _strip(run: SubjectRun, instance: str, exercise: Exercise) -> None:
    """Drop every witness key from one case of a subject: raw counts and any figure."""
    figure = figure_key(exercise)
    obs = run.obs.get(instance, {})
    for key in [k for k in obs if k.startswith(protocol.WITNESSED) or k == figure]:
        del obs[key]
    record = run.cases.get(instance)
    if record is not None:
        record.keys = [k for k in record.keys if not (k.startswith(protocol.WITNESSED) or k == figure)]


def trusted(exercise: Exercise, runs: dict[str, SubjectRun], instances: list[protocol.Instance],
            reference: float | None) -> None:
    """Turn trusted subjects' raw counts into figures, in place. A subject without a count on
    the witnessed case (one that did not reach it, a pitfall that raised) keeps no figure."""
    if not exercise.witness:
        return
    counter = exercise.witness[1]
    key = FIGURES[counter]
    for run in runs.values():
        run.record = copy.deepcopy(run.record)  # the parsed result may be stored in the cache as it is
        for name in _gate_instances(exercise, instances):
            raw = run.obs.get(name, {}).get(raw_key(counter))
            _strip(run, name, exercise)
            record = run.cases.get(name)
            if raw is not None and reference and record is not None and record.status == "ok":
                _set(run, name, key, _figure(float(raw), reference))


def learner(exercise: Exercise, ref: Reference, run: SubjectRun, outside: dict[str, int | None] | None) -> str | None:
    """Give the learner's witnessed case the figure its witness counted, replacing whatever the
    learner's own process put there. Returns a notice when nothing outside could count."""
    if not exercise.witness:
        return None
    value = (outside or {}).get(exercise.witness[1])
    notice = None
    run.record = copy.deepcopy(run.record)
    for name in _gate_instances(exercise, ref.instances):
        _strip(run, name, exercise)
        record = run.cases.get(name)
        own = ref.subjects[REFERENCE].obs.get(name, {})
        expected = own.get(FIGURES[exercise.witness[1]])
        if record is None or record.status != "ok" or expected is None:
            continue
        notice = _give_figure(exercise, ref.witness_raw, run, name, own, int(expected), value) or notice
    return notice


def _give_figure(exercise: Exercise, reference: float | None, run: SubjectRun, name: str, own: Observations,
                 expected: int, value: int | None) -> str | None:
    """Set the figure of one witnessed instance of the learner's; a notice when it was not
    counted, or when the learner's own process claimed a count that grind's contradicts."""
    assert exercise.witness is not None
    counter = exercise.witness[1]
    key = FIGURES[counter]
    if value is None or not reference:
        _set(run, name, key, expected)
        return (f"grind could not count {('the traffic between ranks' if counter == 'traffic' else 'file writes')} "
                "from outside your code at this isolation level (see grind doctor): case "
                f"'{name}' was judged on what your code's own process observed.")
    figure = _figure(float(value), reference)
    _set(run, name, key, figure)
    said = _said_as_correct(exercise, run.obs.get(name, {}), own)
    if figure != expected and said:
        # The process reported a correct answer's counts; the kernel counted otherwise. Those
        # counts are the learner's word, not evidence: the diagnosis sets them aside.
        run.untrusted = frozenset(k for obs in run.obs.values() for k in obs if _superseded(exercise, k))
        return (f"Your code's own process reported {', '.join(sorted({_bare(k) for k in said}))} as a "
                f"correct answer would, but grind counted from outside it {figure} times a correct "
                "answer's: the verdict goes by grind's count.")
    return None


def _said_as_correct(exercise: Exercise, obs: Observations, own: Observations) -> list[str]:
    """The in-process observations the witness's figure stands for, when the learner's process
    reported every one of them as the reference did (else none)."""
    import numpy as np

    said = {k: v for k, v in obs.items() if _superseded(exercise, k)}
    return list(said) if said and all(k in own and np.array_equal(v, own[k]) for k, v in said.items()) else []


def _bare(key: str) -> str:
    """An observation's name without its rank ("rank 1: torch.save calls" -> "torch.save calls")."""
    head, sep, rest = key.partition(": ")
    return rest if sep and head.startswith("rank ") and head[5:].isdigit() else key


def _superseded(exercise: Exercise, key: str) -> bool:
    return exercise.witness is not None and _bare(key) in exercise.witness[2]
