"""The verdict screen's model: what `grind run` (and each check in watch and practice) shows.

``verdict_view`` decides every word: the check lines (a run of checks failing with the same
error folded into one), the first failure's input, expected and got values, the steps around
where a sequence first differs, the diagnosed mistakes, what the code printed, the notices and
the footer that offers the next hint. Both renderers only lay it out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from judge.models import CheckStatus, Exercise, Status, Verdict
from judge.numbers import magnitude_text, number_text, pair_text
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
    axis: str = "step"  # what an entry is: "step", or "index" for a vector not over steps


class EntriesView(NamedTuple):
    """A large observation that differs, summarised: its shape and how many entries differ, then
    the first differing entry with a few neighbours (index, expected, yours, whether it is the
    first difference). Never the whole array: ``--json`` and ``--repro`` have that."""

    heading: str
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
    failure_note: str = ""  # "(edge), the smallest of 6 failing inputs": said after the failure's name
    entries: EntriesView | None = None
    reserved_rows: int = 0  # rows the screen keeps for other lines (watch: its heading, its lines after)

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


def number(value: float, rtol: float | None = None) -> str:
    """One number, as every line of a verdict writes it (judge.numbers.number_text)."""
    return number_text(value, rtol)


SMALL = 8  # a value with at most this many numbers is shown whole; a larger one is summarised
HEAD = 2  # the first numbers a summary shows
LONG = 160  # an input longer than this is summarised by shapes alone
CUT = 110  # and an input still longer is cut to about this many characters (the whole: --repro, --json)
_SPELLED = ("nan", "inf", "-inf")


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) or value in _SPELLED


def shape_of(value: Any) -> list[int] | None:
    """The shape of a rectangular nested list of numbers (``[]`` for one number), else None."""
    if _is_number(value):
        return []
    if not isinstance(value, list) or not value:
        return None
    inner = [shape_of(v) for v in value]
    if inner[0] is None or any(i != inner[0] for i in inner):
        return None
    return [len(value), *inner[0]]


def flat(value: Any) -> list[Any]:
    return [x for v in value for x in flat(v)] if isinstance(value, list) else [value]


def brief(value: Any, rtol: float | None = None, top: bool = True, head: int = HEAD) -> tuple[str, bool]:
    """``value`` on one line with every number written by ``number``, and whatever holds more
    than ``SMALL`` numbers summarised by its shape and first numbers; True when something was
    summarised (the whole is then in ``--repro`` and ``--json``)."""
    if isinstance(value, str):
        return (value if top or value in _SPELLED else json.dumps(value)), False
    if _is_number(value) or isinstance(value, bool) or value is None:
        return (number(value, rtol) if _is_number(value) else json.dumps(value)), False
    if isinstance(value, dict):
        parts = [(json.dumps(str(k)), brief(v, rtol, False, head)) for k, v in value.items()]
        return "{" + ", ".join(f"{k}: {text}" for k, (text, _) in parts) + "}", any(cut for _, (_, cut) in parts)
    if isinstance(value, (list, tuple)):
        return _brief_list(list(value), rtol, head)
    return str(value), False


def _brief_list(value: list[Any], rtol: float | None, head: int) -> tuple[str, bool]:
    """A list for ``brief``: an array of many numbers by its shape, a long list by its start."""
    shape = shape_of(value)
    numbers = flat(value) if shape is not None else []
    if shape is not None and len(numbers) > SMALL:
        first = ", ".join(number(v, rtol) for v in numbers[:head])
        return (f"<shape {shape}: {first}, …>" if head else f"<shape {shape}>"), True
    if shape is None and len(value) > SMALL:
        shown = [brief(v, rtol, False, head) for v in value[:HEAD]]
        return "[" + ", ".join(text for text, _ in shown) + f", … {len(value) - HEAD} more]", True
    items = [brief(v, rtol, False, head) for v in value]
    return "[" + ", ".join(text for text, _ in items) + "]", any(cut for _, cut in items)


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
                 lead: list[str] | None = None, encoding: str = "utf-8", width: int = 80) -> VerdictView:
    """Everything the verdict screen says, made safe for a console writing ``encoding``.
    ``lead`` notices say what was graded (e.g. the untouched stub, outside a workspace).

    It is short on purpose (a wrong answer fits a 24-line screen at 80 columns): passing checks
    are one line, failing checks with the same mistake one line, and the failure shown in
    detail is the one with the smallest input, its large values summarised. ``width`` only
    decides how many check names a grouped line lists."""
    verdict = printable(verdict, encoding)
    failure = verdict.smallest_failure
    rtol, tol = _tolerances(exercise)
    series = None
    if failure is not None and failure.series:
        series = series_view(failure.series, failure.observation or "value", rtol)
    note = _failure_note(verdict, failure)
    entries = None if failure is None or series is not None else entries_view(failure, rtol, tol,
                                                                               exercise.step_base)
    return VerdictView(
        title=f"{exercise.slug} · {exercise.title}",
        status=verdict.status,
        message=verdict.message,
        lead=[terminal_safe(n, encoding) for n in lead or []],
        checks=_check_rows(verdict, width),
        failure=failure.name if failure is not None else None,
        details=_detail_lines(verdict, failure, rtol, entries is not None, exercise.slug, series is not None),
        series=series,
        diagnoses=diagnosis_lines(verdict),
        output=_output_lines(verdict),
        notices=list(verdict.notices),
        footer=_footer(verdict, exercise, hints),
        failure_note=note,
        entries=entries,
    )


def _failure_note(verdict: Verdict, failure: Any) -> str:
    """What the failure shown is: its kind, and which of several failing checks it is."""
    if failure is None:
        return ""
    failing = sum(c.status is not CheckStatus.PASSED for c in verdict.checks)
    note = f"({failure.kind})" if failure.kind else ""
    if failure.kind == "example":
        note = "(in the statement)"  # the one to check by hand: it leads whatever its size
    if failing > 1 and failure.input is not None:
        note += (f", 1 of {failing} failing checks" if failure.kind == "example"
                 else f", the smallest input of {failing} failing checks")
    return note.lstrip(", ")


def _tolerances(exercise: Exercise) -> tuple[float, tuple[float, float]]:
    """The relative tolerance numbers are written at (the exercise's tightest), and the
    (rtol, atol) an entry must be off by to count as differing (its loosest)."""
    # The dtypes' own tolerances: the ones the check's "first differs" text was written at.
    # "default" (for a dtype the exercise does not name) would write more digits on the Got line
    # than that text did for the same value ("got 2.9654" over "2.96538").
    named = [t for key, t in exercise.tolerance.items() if key != "default"]
    tolerances = named or list(exercise.tolerance.values())
    if not tolerances:
        return 1e-5, (1e-5, 1e-6)
    return (min(t.rtol for t in tolerances),
            (max(t.rtol for t in tolerances), max(t.atol for t in tolerances)))


def _detail_lines(verdict: Verdict, failure: Any, rtol: float, summarised: bool, slug: str,
                  plotted: bool = False) -> list[tuple[str, str]]:
    """(label, text) pairs explaining the failure shown: where it first differs, its input, and
    expected and got when they are small (a large observation is summarised in ``entries``; a
    long per-step series by its plot or the steps around its first difference, so its
    "<shape [140]: ...>" lines would only repeat them and cost two of 24 rows)."""
    lines: list[tuple[str, str]] = []
    if failure is None:
        return lines
    if failure.message:
        lines.append(("", failure.message))
    cut = False
    if failure.input is not None:
        text, cut = _input_text(failure.input, rtol)
        lines.append(("Input", text))
    if not summarised:
        compared, more = _compared_lines(failure, rtol, plotted)
        lines += compared
        cut = cut or more
    if failure.max_abs_err is not None:
        relative = (f", {magnitude_text(failure.max_rel_err)} relative" if failure.max_rel_err is not None
                    else " (the expected value is 0: no relative error)")
        lines.append(("Largest error", f"{magnitude_text(failure.max_abs_err)} absolute{relative}"))
    if (cut or summarised) and lines:
        index = 1 if failure.message and failure.input is not None else len(lines) - 1
        label, text = lines[index]
        lines[index] = (label, f"{text} (whole: grind run {slug} --repro or --json)")
    return lines


def _input_text(value: Any, rtol: float) -> tuple[str, bool]:
    """The failure's input on at most two lines at 80 columns; True when something was cut."""
    text, cut = brief(value, rtol)
    if len(text) > LONG:  # more than two lines at 80 columns: the shapes alone
        text, cut = brief(value, rtol, head=0)
    if len(text) > LONG:  # still long (settings and words, not arrays): its start, up to a comma
        text, cut = text[:text.rfind(", ", 0, CUT) if ", " in text[:CUT] else CUT] + ", …", True
    return text, cut


def _compared_lines(failure: Any, rtol: float, plotted: bool) -> tuple[list[tuple[str, str]], bool]:
    """Expected and Got (a summarised one left out when a plot shows it); True when one was cut."""
    which = f" {failure.observation}" if failure.observation else ""
    lines, cut = [], False
    for label, value in ((f"Expected{which}", failure.expected), (f"Got{which}", failure.got)):
        if value is not None:
            text, more = brief(value, rtol)
            cut = cut or more
            if not (plotted and more):
                lines.append((label, text))
    return lines, cut


def entries_view(failure: Any, rtol: float, tol: tuple[float, float], step_base: int = 0) -> EntriesView | None:
    """A large expected/got pair of one shape, summarised (see EntriesView); None when both are
    small enough to show whole, or not two arrays of one shape."""
    expected, got = failure.expected, failure.got
    shape = shape_of(expected)
    if not shape or shape_of(got) != shape:
        return None
    want, have = flat(expected), flat(got)
    if len(want) <= SMALL:
        return None
    differ = [i for i, (e, g) in enumerate(zip(want, have)) if not _within(e, g, tol)]
    first = differ[0] if differ else 0
    rows = []
    label = failure.observation or "value"
    steps = step_base if "step" in label and len(shape) > 1 else None
    for i in range(max(0, first - 1), min(len(want), first + 2)):
        e, g = (pair_text(want[i], have[i], rtol) if i in differ else (number(want[i], rtol), number(have[i], rtol)))
        rows.append((_index(i, shape, steps), e, g, i == first))
    return EntriesView(f"{label}: shape {shape}, {len(differ)} of {len(want)} entries differ", rows)


def _index(flat_index: int, shape: list[int], step_base: int | None = None) -> str:
    """An entry's place: "[2, 1]", or "step 12 [9]" in a sequence over steps, numbered as the
    statement and the check line number them."""
    where = []
    for size in reversed(shape):
        flat_index, rest = divmod(flat_index, size)
        where.append(rest)
    where.reverse()
    if step_base is not None:
        return f"step {where[0] + step_base} [{', '.join(str(i) for i in where[1:])}]"
    return "[" + ", ".join(str(i) for i in where) + "]"


def _within(e: Any, g: Any, tol: tuple[float, float]) -> bool:
    try:
        a, b = float(e), float(g)
    except (TypeError, ValueError):
        return bool(e == g)
    if a == b or (a != a and b != b):
        return True
    return abs(a - b) <= tol[1] + tol[0] * abs(a)


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


def series_view(series: dict[str, Any], label: str, rtol: float | None = None) -> SeriesView:
    """A check's ``series`` (expected and got per step): both whole, and the rows around the first difference."""
    expected, got, base = series["expected"], series["got"], series.get("first_step", 0)
    first = first_difference(expected, got)
    rows = []
    for i in range(max(0, first - 2), min(len(expected), first + 4)):
        e, g = (pair_text(expected[i], got[i], rtol) if not _close(expected[i], got[i])
                else (number(expected[i], rtol), number(got[i], rtol)))
        rows.append((str(i + base), e, g, i == first))
    return SeriesView(label, list(expected), list(got), base, rows, str(series.get("axis", "step")))


def first_difference(expected: list[float], got: list[float]) -> int:
    return next((i for i, (e, g) in enumerate(zip(expected, got)) if not _close(e, g)), 0)


def _close(a: float, b: float) -> bool:
    return a == b or (a != a and b != b) or abs(a - b) <= 1e-9 + 1e-6 * abs(a)


_SMALLEST = "smallest shown. "
_WHERE = re.compile(r" \(first differs at .*\)$|: expected .*, got .*$", re.S)


def _short(message: str) -> str:
    """A check's message without the numbers of where it first differs: what groups failing
    checks into one line ("params per step: values differ")."""
    core = message.split(_SMALLEST)[-1]
    return _WHERE.sub("", core) if "\n" not in core else core


def _check_rows(verdict: Verdict, width: int = 80) -> list[CheckRow]:
    """The check list, short: every passing check on one line, then one line per kind of failure
    (checks failing the same way, such as an untouched stub's NotImplementedError in every case,
    or "values differ" in one observation), each naming its checks as far as two lines allow."""
    rows: list[CheckRow] = []
    passed = [c for c in verdict.checks if c.status is CheckStatus.PASSED]
    if passed:
        rows.append(CheckRow(CheckStatus.PASSED, _count(len(passed)), "",
                             _names([c.case or c.name for c in passed], width - 20)))
    groups: dict[tuple[CheckStatus, str], list[Any]] = {}
    for check in verdict.checks:
        if check.status is not CheckStatus.PASSED:
            groups.setdefault((check.status, _short(check.message)), []).append(check)
    for (status, short), members in groups.items():
        if len(members) == 1:
            check = members[0]
            rows.append(CheckRow(status, check.name, check.kind, short))
            continue
        names = _names([c.case or c.name for c in members], width + 16 - len(short))
        rows.append(CheckRow(status, _count(len(members)), "", f"{short} ({names})" if short else names))
    return rows


def _count(n: int) -> str:
    return f"{n} check{'s' if n != 1 else ''}"


def _names(names: list[str], room: int) -> str:
    """As many of ``names`` as fit in ``room`` characters, then how many more."""
    shown: list[str] = []
    for i, name in enumerate(names):
        rest = len(names) - i - 1
        tail = f", … {rest} more" if rest else ""
        if shown and len(", ".join(shown + [name])) + len(tail) > max(room, 20):
            return ", ".join(shown) + f", … {len(names) - len(shown)} more"
        shown.append(name)
    return ", ".join(shown)


def _output_lines(verdict: Verdict) -> list[str]:
    lines = []
    for label, text in (("printed", verdict.stdout), ("wrote to stderr", verdict.stderr)):
        shown = [line for line in text.strip().splitlines() if line.strip()][:8]
        if shown:
            lines.append(f"Your code {label}:")
            lines += [f"  {line[:200]}" for line in shown]
    return lines
