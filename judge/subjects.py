"""What one trusted or learner run observed of each subject, and the reference built from them.

A run of the child reports, for each subject (the learner, the reference, the oracle, each
pitfall or pair of pitfalls), a record per case instance and a flat mapping of observations.
``split_runs`` turns that into one ``SubjectRun`` per subject; a ``Reference`` is every trusted
thing the judge knows of an exercise's cases. Data only: judge.trusted computes and caches
these, judge.judging compares a learner's against them, judge.witnessed adds counted figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from judge.worker import protocol

if TYPE_CHECKING:
    from judge.compare import Observations


LEARNER = "learner"
REFERENCE = "reference"
ORACLE = "oracle"


@dataclass
class SubjectRun:
    """One subject's behaviour: its record (load error, per-instance records) and observations."""

    record: protocol.SubjectRecord
    obs: dict[str, Observations] = field(default_factory=dict)
    # Observations the learner's process reported that grind's own count contradicts: not
    # evidence for or against a named mistake (judge/witnessed.py)
    untrusted: frozenset[str] = frozenset()

    @property
    def load_error(self) -> protocol.ErrorInfo | None:
        return self.record.load_error

    @property
    def cases(self) -> dict[str, protocol.CaseRecord]:
        return self.record.cases

    @property
    def forbidden(self) -> list[protocol.ForbiddenHit]:
        return self.record.forbidden

    @property
    def elapsed_s(self) -> float:  # time spent on this subject's cases in the child
        return self.record.elapsed_s


@dataclass
class Reference:
    """Everything trusted the judge knows about an exercise's cases."""

    instances: list[protocol.Instance]
    pitfalls: list[protocol.PitfallMeta]
    subjects: dict[str, SubjectRun]
    unresolved: list[str] = field(default_factory=list)  # forbidden names that name nothing in torch
    speed: protocol.SpeedSample | None = None  # the reference's time on the checks' SPEED case
    witness_raw: float | None = None  # its own count on the witnessed case (judge/witnessed.py)

    @property
    def instance_names(self) -> list[str]:
        return [i.name for i in self.instances]


def split_runs(result: protocol.Result, observations: Observations) -> dict[str, SubjectRun]:
    runs = {sid: SubjectRun(record) for sid, record in result.subjects.items()}
    for key, array in observations.items():
        parts = protocol.split_obs_name(key)
        if parts is None:
            continue  # not a name the runner writes: ignore it rather than trust it
        sid, instance, name = parts
        if sid in runs:
            runs[sid].obs.setdefault(instance, {})[name] = array
    for run in runs.values():  # safetensors does not keep order: restore the case's own order
        for instance, obs in run.obs.items():
            record = run.cases.get(instance)
            rank = {k: i for i, k in enumerate(record.keys if record else [])}
            run.obs[instance] = dict(sorted(obs.items(), key=lambda kv: rank.get(kv[0], len(rank))))
    return runs


def group_cases(instances: list[protocol.Instance]) -> list[tuple[str, list[protocol.Instance]]]:
    groups: dict[str, list[protocol.Instance]] = {}
    for inst in instances:
        groups.setdefault(inst.case, []).append(inst)
    for members in groups.values():
        members.sort(key=lambda m: (m.params.get("size", 0), m.params.get("seed", 0)))
    return list(groups.items())
