"""The verdict screen's model: what `grind run` (and each check in watch and practice) shows.

``verdict_view`` decides every word: the check lines (a run of checks failing with the same
error folded into one), the first failure's input, expected and got values, the steps around
where a sequence first differs, the diagnosed mistakes, what the code printed, the notices and
the footer that offers the next hint. Both renderers only lay it out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from judge.models import CheckStatus, Exercise, Status, Verdict
from judge.text import safe_data, terminal_safe


@dataclass
class HintInfo:
    shown: int
    total: int
    key: bool = False  # in the watch loop, where h shows the next hint


class CheckRow(NamedTuple):
    """One line of the check list."""

    status: CheckStatus
    name: str
    kind: str
    message: str


class DiagnosisBlock(NamedTuple):
    """A named mistake: "Diagnosis" (or "Also", "Looks like torch's convention", "And more"),
    its name, and the lines that explain it."""

    label: str
    name: str
    body: list[str]

    @property
    def head(self) -> str:
        return f"{self.label}: {self.name}"


class SeriesView(NamedTuple):
    """A per-step sequence that differs from the reference's: the whole of both (a terminal
    with colour plots them) and the rows around the first difference (step, expected, yours,
    whether this is the first differing step), which every other rendering shows."""

    label: str
    expected: list[float]
    got: list[float]
    first_step: int
    rows: list[tuple[str, str, str, bool]]


class VerdictView(NamedTuple):
    title: str  # "clipping · Gradient clipping by global norm"
    status: Status
    message: str
    lead: list[str]  # what was graded, said before the verdict
    checks: list[CheckRow]
    failure: str | None  # the first failing check, shown in detail when ``details`` says something
    details: list[tuple[str, str]]  # (label, text)
    series: SeriesView | None
    diagnoses: list[DiagnosisBlock]
    output: list[str]  # what the learner's code printed, already indented
    notices: list[str]
    footer: str

    @property
    def status_word(self) -> str:
        return self.status.value.upper()


def compact(value: Any) -> str:
    """An input or a value on one line, whole: JSON with every number as it came (the runner
    and judge.compare already wrote each as the shortest decimal that is exact in its dtype).
    Never cut: a number cut in half, or "<50 items>", is not a failure a learner can re-run.
    Only observations too large to read arrive here already summarised by their shape."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": "), default=str)


def number(value: float) -> str:
    """One float, exactly: the shortest decimal that reads back to it (2**18 is 262144.0)."""
    return repr(float(value))


def indented(text: str, margin: str) -> str:
    """``text`` with every line after the first moved right by ``margin``: a learner's exception
    message is shown inside grind's own lines, and a newline in it must not start a line of its
    own that reads like grind's ("All checks passed.")."""
    return text.replace("\r\n", "\n").replace("\n", "\n" + margin)


def printable(verdict: Verdict, encoding: str = "utf-8") -> Verdict:
    """A copy of ``verdict`` whose learner-made text (messages, check names, inputs, values,
    printed output) the console can encode: a lone surrogate in an exception message would
    otherwise make printing the report fail, and turn the learner's failure into grind's."""
    term = terminal_safe
    checks = [replace(c, name=term(c.name, encoding), message=indented(term(c.message, encoding), "      "),
                      input=safe_data(c.input, encoding), expected=safe_data(c.expected, encoding),
                      got=safe_data(c.got, encoding), observation=safe_data(c.observation, encoding))
              for c in verdict.checks]
    return replace(verdict, checks=checks, message=indented(term(verdict.message, encoding), "  "),
                   stdout=term(verdict.stdout, encoding), stderr=term(verdict.stderr, encoding),
                   notices=[term(n, encoding) for n in verdict.notices])


def verdict_view(verdict: Verdict, exercise: Exercise, hints: HintInfo | None = None,
                 lead: list[str] | None = None, encoding: str = "utf-8") -> VerdictView:
    """Everything the verdict screen says, made safe for a console writing ``encoding``.
    ``lead`` notices say what was graded (e.g. the untouched stub, outside a workspace)."""
    verdict = printable(verdict, encoding)
    failure = verdict.first_failure
    series = None
    if failure is not None and failure.series:
        series = series_view(failure.series, failure.observation or "value")
    return VerdictView(
        title=f"{exercise.slug} · {exercise.title}",
        status=verdict.status,
        message=verdict.message,
        lead=[terminal_safe(n, encoding) for n in lead or []],
        checks=_check_rows(verdict),
        failure=failure.name if failure is not None else None,
        details=_detail_lines(verdict),
        series=series,
        diagnoses=diagnosis_lines(verdict),
        output=_output_lines(verdict),
        notices=list(verdict.notices),
        footer=_footer(verdict, exercise, hints),
    )


def _detail_lines(verdict: Verdict) -> list[tuple[str, str]]:
    """(label, text) pairs explaining the first failure."""
    failure = verdict.first_failure
    lines: list[tuple[str, str]] = []
    if failure is None:
        return lines
    if failure.input is not None:
        lines.append(("Input", compact(failure.input)))
    which = f" {failure.observation}" if failure.observation else ""
    if failure.expected is not None:
        lines.append((f"Expected{which}", compact(failure.expected)))
    if failure.got is not None:
        lines.append((f"Got{which}", compact(failure.got)))
    if failure.max_abs_err is not None:
        from judge.compare import magnitude_text  # numpy, only once there is an error to show

        relative = (f", {magnitude_text(failure.max_rel_err)} relative" if failure.max_rel_err is not None
                    else " (the expected value is 0: no relative error)")
        lines.append(("Largest error", f"{magnitude_text(failure.max_abs_err)} absolute{relative}"))
    return lines


def _footer(verdict: Verdict, exercise: Exercise, hints: HintInfo | None) -> str:
    slug = exercise.slug
    if verdict.passed:
        return f"Well done. Compare with the reference: grind solution {slug}"
    if hints is None or hints.total == 0:
        return ""
    if hints.shown < hints.total:
        if hints.key:
            return f"Stuck? Press h for hint {hints.shown + 1} of {hints.total}."
        return f"Stuck? grind hint {slug} shows hint {hints.shown + 1} of {hints.total}."
    return f"All {hints.total} hints shown. Re-read them with grind hint {slug} --all."


def diagnosis_lines(verdict: Verdict) -> list[DiagnosisBlock]:
    """Each named mistake: a heading, then its explanation and what it explains. A library's
    convention is introduced as that library's, not as a mistake; differences no known mistake
    explains are said plainly at the end."""
    blocks: list[DiagnosisBlock] = []
    many = len(verdict.diagnoses) > 1
    for diagnosis in verdict.diagnoses or ([verdict.diagnosis] if verdict.diagnosis else []):
        if diagnosis.library:
            kind = "convention" if diagnosis.convention else "behaviour"
            label = f"Looks like {diagnosis.library}'s {kind}"
        else:
            label = ("Also" if blocks else "Diagnosis") if many else "Diagnosis"
        body = [diagnosis.explanation]
        if diagnosis.explains and (many or not diagnosis.complete):
            body.append(f"It explains: {diagnosis.explains}.")
        blocks.append(DiagnosisBlock(label, diagnosis.name, body))
    if blocks and verdict.unexplained:
        blocks.append(DiagnosisBlock("And more", "differences that are not among the known mistakes",
                                     [f"{verdict.unexplained}."]))
    if not blocks and verdict.closest:
        blocks.append(DiagnosisBlock("Diagnosis", "no known mistake matches", [verdict.closest]))
    return blocks


def series_view(series: dict[str, Any], label: str) -> SeriesView:
    """A check's ``series`` (expected and got per step): both whole, and the rows around the first difference."""
    expected, got, base = series["expected"], series["got"], series.get("first_step", 0)
    first = first_difference(expected, got)
    rows = [(str(i + base), number(expected[i]), number(got[i]), i == first)
            for i in range(max(0, first - 2), min(len(expected), first + 4))]
    return SeriesView(label, list(expected), list(got), base, rows)


def first_difference(expected: list[float], got: list[float]) -> int:
    return next((i for i, (e, g) in enumerate(zip(expected, got)) if not _close(e, g)), 0)


def _close(a: float, b: float) -> bool:
    return a == b or (a != a and b != b) or abs(a - b) <= 1e-9 + 1e-6 * abs(a)


def _messages(verdict: Verdict) -> list[str]:
    """Per-check messages, with a repeat of the previous failure's error shortened: an
    unimplemented stub raises the same error in every case, and once is enough to read it."""
    out, previous = [], None
    for check in verdict.checks:
        if check.status is CheckStatus.PASSED:
            out.append("")
            continue
        core = check.message.split("smallest shown. ")[-1]
        out.append("same error" if core == previous and check.status is CheckStatus.ERROR else check.message)
        previous = core
    return out


def _check_rows(verdict: Verdict) -> list[CheckRow]:
    """One row per line of the check list. A run of checks that fail with the previous
    failure's error is one line with their count (an untouched stub raises the same
    NotImplementedError in every case: once is enough to read it)."""
    rows: list[CheckRow] = []
    repeats = 0

    def flush() -> None:
        nonlocal repeats
        if repeats:
            rows.append(CheckRow(CheckStatus.ERROR, f"… {repeats} more check{'s' if repeats > 1 else ''}", "",
                                 "same error"))
        repeats = 0

    for check, message in zip(verdict.checks, _messages(verdict)):
        if message == "same error":
            repeats += 1
            continue
        flush()
        rows.append(CheckRow(check.status, check.name, check.kind, message))
    flush()
    return rows


def _output_lines(verdict: Verdict) -> list[str]:
    lines = []
    for label, text in (("printed", verdict.stdout), ("wrote to stderr", verdict.stderr)):
        shown = [line for line in text.strip().splitlines() if line.strip()][:8]
        if shown:
            lines.append(f"Your code {label}:")
            lines += [f"  {line[:200]}" for line in shown]
    return lines
