"""An exercise's corpus: submissions written independently of its pitfalls, with what grind must say.

The pitfalls prove that grind names its own mistakes; a corpus proves it names other people's.
``<corpus root>/<slug>/*.py`` holds correct answers in unusual styles, single mistakes made the
way people make them, pairs of mistakes, and look-alikes of real libraries' conventions (each
written for the project, with a header naming the library and behaviour it imitates). Line 1
says what grind must answer, line 2 where the behaviour comes from:

    # expect: passed
    # expect: failed pitfall=per-tensor            (named with exactly this pitfall)
    # expect: failed pitfall=a+b                   (named with both, in any order)
    # expect: failed                               (a real difference no pitfall describes)
    # source: ...

``grind validate`` grades an exercise's corpus when it has one and reports the share of wrong
submissions named right; below ``TARGET``, or with a correct file rejected, it is a problem.

It reports the **wrong-name rate** beside it: the share of the rejected wrong files whose
verdict names a mistake their header does not give (a file expecting no name that gets one
included). A missing name leaves the learner where they were; a wrong one sends them after a
mistake they did not make, so any wrong name is a problem, whatever the share.
"""

from __future__ import annotations

import math
import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from judge.catalog import content_root
from judge.errors import ManifestError
from judge.models import Exercise, Status, Verdict

if TYPE_CHECKING:
    from judge.worker.sandbox import WarmWorker

TARGET = 0.95  # share of wrong corpus files that must be named with exactly the right pitfalls
HEADER = re.compile(r"#\s*expect:\s*(passed|failed)(?:\s+pitfall=(\S+))?\s*$")


def default_root() -> Path:
    """The repository's ``tests/corpus`` (an installed wheel ships no corpus)."""
    return content_root() / "tests" / "corpus"


def corpus_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.py")) if folder.is_dir() else []


def expectation(path: Path) -> tuple[str, frozenset[str] | None]:
    """("passed" | "failed", the pitfall slugs it must be named with, or None)."""
    lines = path.read_text(encoding="utf-8").splitlines() + ["", ""]
    match = HEADER.match(lines[0])
    if not match:
        raise ManifestError(f"{path}: line 1 must be '# expect: passed' or '# expect: failed [pitfall=a+b]'")
    if not lines[1].startswith("# source:"):
        raise ManifestError(f"{path}: line 2 must say '# source: ...' (where the behaviour comes from)")
    names = frozenset(match.group(2).split("+")) if match.group(2) else None
    return match.group(1), names


def named(verdict: Verdict) -> frozenset[str]:
    """Every pitfall the verdict names (a compound diagnosis names several)."""
    found = verdict.diagnoses or ([verdict.diagnosis] if verdict.diagnosis else [])
    return frozenset(d.slug for d in found)


@dataclass
class CorpusReport:
    """How one exercise's corpus was judged."""

    exercise: str
    correct: int = 0  # files that must pass
    accepted: int = 0
    wrong: int = 0  # files that must fail
    rejected: int = 0
    to_name: int = 0  # wrong files whose header names the pitfall(s)
    named_right: int = 0
    wrongly_named: int = 0  # rejected wrong files named with a pitfall their header does not give
    misses: list[str] = field(default_factory=list)  # one line per file grind got wrong

    @property
    def wrong_name_rate(self) -> float | None:
        return self.wrongly_named / self.rejected if self.rejected else None

    def wrong_name_text(self) -> str:
        """"1/19 (5.3%)": rounded up, so a rate over zero never reads as zero."""
        if self.wrong_name_rate is None:
            return "none rejected"
        return f"{self.wrongly_named}/{self.rejected} ({math.ceil(self.wrong_name_rate * 1000) / 10:g}%)"

    @property
    def share(self) -> float | None:
        return self.named_right / self.to_name if self.to_name else None

    def share_text(self) -> str:
        """"18/19 (94.7%)": rounded down, so a share under the target never reads as the target."""
        if self.share is None:
            return "none to name"
        return f"{self.named_right}/{self.to_name} ({math.floor(self.share * 1000) / 10:g}%)"

    def summary(self) -> str:
        return (f"{self.share_text()} of the wrong submissions named right, {self.wrong_name_text()} named wrongly, "
                f"{self.accepted}/{self.correct} correct ones accepted, {self.rejected}/{self.wrong} wrong ones "
                "rejected")

    def problems(self) -> list[str]:
        """A verdict the wrong way round is always a problem, and so is a wrong name; names missed
        are, below TARGET."""
        out = [m for m in self.misses if "must pass" in m or "must fail" in m or "wrong name" in m]
        if self.share is not None and self.share < TARGET:
            out.append(f"corpus: only {self.summary()}; the target is {TARGET:.0%}")
            out += [m for m in self.misses if "should be" in m]
        return out


def judge_corpus(exercise: Exercise, verdicts: dict[Path, Verdict]) -> CorpusReport:
    """Score already-graded corpus files against their headers."""
    report = CorpusReport(exercise.slug)
    for path, verdict in verdicts.items():
        status, want = expectation(path)
        if status == "passed":
            report.correct += 1
            if verdict.status is Status.PASSED:
                report.accepted += 1
            else:
                report.misses.append(f"corpus {path.name}: must pass, got {verdict.status.value}: {verdict.message}")
            continue
        report.wrong += 1
        if verdict.status is not Status.PASSED:
            report.rejected += 1
        else:
            report.misses.append(f"corpus {path.name}: must fail, but passed")
        got = named(verdict)
        if verdict.status is not Status.PASSED and got - (want or frozenset()):
            report.wrongly_named += 1
            report.misses.append(f"corpus {path.name}: wrong name {'+'.join(sorted(got))}, "
                                 f"should be {'+'.join(sorted(want)) if want else 'no name'}")
        if want:
            report.to_name += 1
            if got == want:
                report.named_right += 1
            elif not got - want:
                report.misses.append(f"corpus {path.name}: named {'+'.join(sorted(got)) or 'nothing'}, "
                                     f"should be {'+'.join(sorted(want))}")
    return report


def grade_corpus(exercise: Exercise, folder: Path, worker: WarmWorker | None = None) -> dict[Path, Verdict]:
    """Every file in ``folder`` graded, as a class would be: one warm worker, each file isolated
    (``worker``: one the caller keeps for more grading, hiding ``folder`` too; otherwise one for
    these files alone)."""
    from judge.grade import grade, hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    files = corpus_files(folder)
    for path in files:
        expectation(path)  # a malformed header is the author's mistake: say so before grading
    verdicts: dict[Path, Verdict] = {}
    if not files:
        return verdicts
    with nullcontext(worker) if worker is not None else WarmWorker(hidden_from_learners(exercise, folder)) as used:
        for path in files:
            verdicts[path] = grade(exercise, path, worker=used)
    return verdicts
