"""Prove an exercise adequate: the reference passes (and equals the oracle), the stub fails,
and every pitfall fails at least one case and is diagnosed as itself.

This is mutation testing of the checks: a pitfall that no case catches, or that the judge
would name as a different mistake, means the exercise is not ready for learners.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from judge.grade import ORACLE, REFERENCE, Reference, compute_reference, grade, judge_subject
from judge.models import Exercise, Status, Verdict


@dataclass
class AdequacyReport:
    exercise: str
    cases: int
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # subject id -> verdict
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_adequacy(exercise: Exercise, *, seeds: int | None = None, with_stub: bool = True) -> AdequacyReport:
    with_oracle = exercise.oracle_path.is_file()
    ref: Reference = compute_reference(exercise, seeds=seeds, with_oracle=with_oracle)
    report = AdequacyReport(exercise.slug, len(ref.instances))
    for subject_id, run in ref.subjects.items():
        report.verdicts[subject_id] = judge_subject(exercise, ref, run)

    for subject_id in (REFERENCE, ORACLE):
        verdict = report.verdicts.get(subject_id)
        if verdict is not None and verdict.status is not Status.PASSED:
            failure = verdict.first_failure
            detail = f"{failure.name}: {failure.message}" if failure else verdict.message
            report.problems.append(f"the {subject_id} does not pass: {detail}")
    for meta in ref.pitfalls:
        verdict = report.verdicts[f"pitfall:{meta['slug']}"]
        if verdict.status is Status.PASSED:
            report.problems.append(f"pitfall '{meta['slug']}' ({meta['name']}) passes every case: no case catches it")
        elif verdict.diagnosis is None or verdict.diagnosis.slug != meta["slug"]:
            named = f"'{verdict.diagnosis.slug}'" if verdict.diagnosis else "nothing"
            report.problems.append(f"pitfall '{meta['slug']}' is caught but diagnosed as {named}")
    if with_stub:
        stub = grade(exercise, exercise.stub_path)
        report.verdicts["stub"] = stub
        if stub.status is Status.PASSED:
            report.problems.append("the untouched stub passes")
    return report
