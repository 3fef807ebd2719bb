"""Prove an exercise adequate before learners see it.

- the manifest loads, no stray files, hints present, no TODO left from the scaffold;
- something independent checks the reference: an oracle (``oracle.py``, equal on every case) or
  golden values the instructor states (``GOLDEN`` in checks.py); without either it is not adequate;
- the reference passes, deterministically (two runs, identical observations, and identical
  inputs: inputs that differ are the checks' fault, said as such), and equals the torch oracle
  where there is one;
- the stub fails;
- every pitfall fails at least one case and is diagnosed as itself (mutation testing of the
  checks: a pitfall no case catches, or one named as a different mistake, means the cases
  are not good enough), and by how many tolerances (its margin: a warning under 10x);
- the worked-example values appear in the statement, in the order observed, each beside its
  own observation's name (or, unnamed, in the checks' order), so the public numbers are the real
  ones and no two are swapped;
- the reference runs well inside the time limit;
- every ``forbidden`` name resolves to a real torch object, case names are unique and their kinds
  known, and ``rtol = atol = 0`` only where an oracle matches the reference exactly;
- the golden submissions (``tests/submissions/<slug>/``) get the verdict and pitfall their
  header names, and there is at least one (in a course that has the folder at all).
"""

from __future__ import annotations

import ast
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from judge.catalog import content_root
from judge.corpus import CorpusReport, corpus_files, grade_corpus, judge_corpus
from judge.grade import grade
from judge.judging import judge_subject
from judge.trusted import compute_reference, reference_for, reference_with_oracle
from judge.subjects import ORACLE, REFERENCE, Reference
from judge.kit import kit_problems
from judge.models import CheckStatus, Exercise, Status, Verdict
from judge.worker.protocol import pitfall_subject

if TYPE_CHECKING:
    from judge.worker.sandbox import WarmWorker

EXERCISE_FILES = {"exercise.toml", "README.md", "stub.py"}
SOLUTION_FILES = {"reference.py", "checks.py", "pitfalls.py", "oracle.py"}
HEADROOM = 3.0  # the reference must finish in a third of the learner's time limit
STATEMENT_VALUES = 16  # example observations up to this size must appear in the statement
MARGIN_WARNING = 10.0  # a pitfall caught by fewer tolerances than this passes a 10x looser tolerance
GOLDEN_NAME = "GOLDEN"  # checks.py: {case: {observation: value}} worked out by the instructor


@dataclass
class AdequacyReport:
    exercise: str
    cases: int = 0
    pitfalls: int = 0
    caught: int = 0
    seconds: float = 0.0
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # subject id -> verdict
    problems: list[str] = field(default_factory=list)
    corpus: CorpusReport | None = None  # how the exercise's corpus was judged, when it has one
    # Said, never failing: each pitfall's margin, and a pitfall caught by less than 10 tolerances.
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    margins: dict[str, float] = field(default_factory=dict)  # pitfall slug -> tolerances to its nearest failing case

    @property
    def ok(self) -> bool:
        return not self.problems


def static_problems(exercise: Exercise) -> list[str]:
    """Problems visible without running anything: stray files, missing hints, leftover TODOs."""
    problems = []
    for folder, allowed in ((exercise.exercise_dir, EXERCISE_FILES), (exercise.solution_dir, SOLUTION_FILES)):
        for path in sorted(folder.iterdir()):
            if path.name == "__pycache__" or path.name.startswith("."):
                continue
            if path.name not in allowed:
                problems.append(f"stray file {path} (expected only {', '.join(sorted(allowed))})")
    if len(exercise.hints) < 2:
        problems.append(f"{exercise.exercise_dir / 'exercise.toml'}: give at least 2 hints, from a nudge to nearly "
                        "the answer")
    for folder in (exercise.exercise_dir, exercise.solution_dir):
        for path in sorted(folder.glob("*")):
            if path.suffix not in (".py", ".md", ".toml"):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if "TODO" in line:
                    problems.append(f"TODO left in {path}:{number}: {line.strip()[:100]}")
    problems += kit_problems(exercise)
    return problems


def _statement_numbers_at(text: str) -> list[tuple[float, tuple[float, float, int]]]:
    """Every number written in the statement, with where it starts: its value, the unit of its
    last digit shown (0.01 for 3.16, 1e-4 for 1.5e-3) and how many significant digits it shows
    (a fraction: its exact value, unit 0)."""
    found = []
    for match in re.finditer(r"(?<![\w.])[-−]?(\d+)(?:\.(\d+))?(?:e([-+]?\d+))?", text):
        raw = match.group(0).replace("−", "-")
        try:
            value = float(raw)
        except ValueError:
            continue
        decimals = len(match.group(2) or "")
        exponent = int(match.group(3) or 0)
        digits = (match.group(1) + (match.group(2) or "")).lstrip("0")
        found.append((match.start(), (value, 10.0 ** (exponent - decimals), len(digits))))
    # A fraction of integers ("3/13", "1/50") is also its exact value, placed before its numerator
    # (the number right after a label); no rounding of it is accepted.
    for match in re.finditer(r"(?<![\w./])([-−]?\d+)/(\d+)(?![\w./])", text):
        if int(match.group(2)):
            found.append((match.start() - 0.5, (int(match.group(1).replace("−", "-")) / int(match.group(2)), 0.0, 0)))
    return sorted(found)


def _statement_numbers(text: str) -> list[tuple[float, float, int]]:
    return [number for _, number in _statement_numbers_at(text)]


def _appears(value: float, numbers: list[tuple[float, float, int]]) -> bool:
    """Is ``value`` written somewhere, either exactly (13, 0.5) or correctly rounded to at least
    3 significant digits (3.16 for 3.1623, 1.50e-3)? "0.9" for 0.9231 does not count: a rounding
    that coarse would accept a wrong number."""
    for number, unit, significant in numbers:
        if abs(number - value) <= 1e-6 * max(1.0, abs(value)):
            return True  # exact, up to float32 noise
        if significant >= 3 and abs(number - value) <= 0.5 * unit * (1 + 1e-9):
            return True
    return False


def _in_order(values: list[float], numbers: list[tuple[float, float, int]]) -> bool:
    """Do ``values`` appear in the statement in this order (each after the one before)? Taking
    the earliest match each time finds an ordering whenever one exists."""
    at = 0
    for value in values:
        while at < len(numbers) and not _appears(value, [numbers[at]]):
            at += 1
        if at == len(numbers):
            return False
        at += 1
    return True


# After an observation's name, what makes it a label: optional ":", "=", "->", "|", "is" or
# "are", then a number or a bracketed list ("total norm: 13", "rank 0: [0, 3]", "lambda_max
# 100", "the optimizer's `lr` is `0, 0.0025, ...`"). Without a connector the number must be on
# the name's line: in "0.02 = max stable lr" then "0.1 = momentum effective lr" a name ending its
# line labels what it follows, not the next line's number (nor does a table's last header).
_LABELLED = re.compile(r"[ \t`*]*(?:(?:[:=|]|->|→|is\b|are\b)[\s`*]*)?[\[(]?[-−]?\.?\d")


def _label_spans(key: str, text: str, *, shared: bool = True) -> list[tuple[int, int]]:
    """Where an observation's name labels numbers in ``text``: the name (case and ``_`` versus
    space aside: "total_norm" is "total norm"; "lr per step" may be "lr") directly followed by a
    number, as in a code block's "total norm: 13" or a bold "**grads = 2**". For a name like
    "rank 0: grads", its second part so followed, after its first part on the same line ("rank 0:
    grads -> [...], total_norm = 13"), or, where no line has both, the second part alone (one
    "**grads = 2** on rank 0 and on rank 1"). A name in a sentence ("takes 133 steps and ...")
    labels nothing. With ``shared`` false, that last kind (one name for every rank) is left out."""
    def pattern(words: str) -> str:
        return r"(?<!\w)" + r"[\s_]+".join(re.escape(w) for w in re.split(r"[\s_]+", words.strip()) if w) + r"(?!\w)"

    def labelling(words: str) -> list[re.Match[str]]:
        return [m for m in re.finditer(pattern(words), text, re.IGNORECASE) if _LABELLED.match(text, m.end())]

    spans = [m.span() for m in labelling(key)]
    short = re.sub(r"\s+per\s+\w+.*$", "", key)  # "lr per step" is written "lr" beside its values
    if not spans and short != key:
        spans = [m.span() for m in labelling(short)]
    if not spans and ": " in key:
        first, second = key.split(": ", 1)
        for m in labelling(second):
            line_start = text.rfind("\n", 0, m.start()) + 1
            if re.search(pattern(first), text[line_start:m.start()], re.IGNORECASE):
                spans.append(m.span())
        if not spans and shared:  # "rank 0: grads" written once for every rank: "**grads = 2** on rank 0 and on rank 1"
            spans = [m.span() for m in labelling(second)]
    return spans


def _example_region(text: str, name: str) -> str:
    """The statement from the example's name to the next section heading (its numbers)."""
    start = text.index(name)
    end = re.compile(r"^#{1,6} ", re.MULTILINE).search(text, text.find("\n", start) + 1 or len(text))
    return text[start:end.start() if end else len(text)]


def _swap_problems(path: Path, name: str, region: str, values: dict[str, list[float]],
                   keys: list[str]) -> list[str]:
    """Two observations' results exchanged in the worked example: each observation's numbers
    are all there and in order, but under the other's name. Where an observation's name labels
    numbers, its values must follow it before the next observation's name or the paragraph's end;
    said when another observation's values stand there instead and not beside their own name.
    Observations whose names label nothing (``grad[0]`` shown as "g1 -> ...") must be shown in
    the order the checks record them: said for a pair shown strictly the other way round, never
    for a table whose columns interleave them."""
    numbers = _statement_numbers_at(region)
    spans = {key: _label_spans(key, region) for key in keys}
    # A name inside a longer one ("loss" in "uniform_loss") is that longer one's.
    for key in keys:
        spans[key] = [(a, b) for a, b in spans[key]
                      if not any(other != key and x <= a and b <= y and (y - x) > (b - a)
                                 for other in keys for x, y in spans[other])]
    starts = sorted((a, key) for key in keys for a, _ in spans[key])
    # Where the name is this observation's alone, the number right after it is its first value;
    # "torch.save calls  1  0  0  0" shared by ranks 0..3 labels each rank's value further on.
    own = {key: set(_label_spans(key, region, shared=False)) & set(spans[key]) for key in keys}

    def window(key: str, end_of_name: int) -> list[tuple[float, float, int]]:
        # Up to the next observation's name or the end of the paragraph (a blank line, a fence).
        stop = next((a for a, other in starts if a >= end_of_name and other != key), len(region))
        paragraph = re.compile(r"\n[ \t]*(?:\n|```)").search(region, end_of_name)
        stop = min(stop, paragraph.start() if paragraph else stop)
        return [number for at, number in numbers if end_of_name <= at < stop]

    def follows(values_: list[float], key: str, end_of_name: int) -> bool:
        # The number right after the name is the first value ("total norm: 12 ... returned: 13"
        # labels 12, whatever follows), and the rest come after it in order.
        numbers_ = window(key, end_of_name)
        first = any(b == end_of_name for _, b in own[key])
        return bool(numbers_) and (not first or _appears(values_[0], numbers_[:1])) and _in_order(values_, numbers_)

    def shown(values_: list[float], key: str) -> bool:
        return any(follows(values_, key, b) for _, b in spans[key])

    def heads_a_line(start: int) -> bool:
        # "max stable lr  0.01" in a code block, "- total norm: 12" in a list, "| lr | 0.1 |": a
        # label; "the clipped gradients have total norm 1" in a sentence may be another quantity.
        return re.fullmatch(r"[ \t>*`|+-]*", region[region.rfind("\n", 0, start) + 1:start]) is not None

    def text(key: str) -> str:
        return ", ".join(f"{v:.6g}" for v in values[key][:4]) + (", ..." if len(values[key]) > 4 else "")

    problems = []
    said: set[str] = set()
    for key in [key for key in values if spans[key]]:
        if key in said or shown(values[key], key):
            continue
        # Said only when another observation's numbers stand where this one's should, and that
        # one's are not beside its own name either: a name shared with an input ("lr = 0.05"
        # before a table of lr per step) is no swap.
        partner = next((other for other in values if other != key and other not in said
                        and any(follows(values[other], key, b) for _, b in spans[key])
                        and not (spans[other] and shown(values[other], other))), None)
        if partner is not None:
            problems.append(f"{path}: worked example '{name}' observes {key} = {text(key)} and {partner} = "
                            f"{text(partner)}, but the statement writes the value(s) of {partner} beside '{key}': "
                            "two results swapped between observations")
            said.update((key, partner))
        elif heads := [b for a, b in sorted(own[key]) if heads_a_line(a) and window(key, b)]:
            # No other observation's numbers there: a line headed by the name shows a wrong number
            # of its own ("max stable lr 0.01" where the reference says 0.02, which the prose
            # below still shows).
            labelled = ", ".join(dict.fromkeys(f"{window(key, b)[0][0]:.6g}" for b in heads))
            problems.append(f"{path}: worked example '{name}' observes {key} = {text(key)}, but the statement writes "
                            f"{labelled} beside '{key}'")
            said.add(key)
    bare = [key for key in values if not spans[key] and key not in said]
    everything = [number for _, number in numbers]
    for i, first in enumerate(bare):
        for second in bare[i + 1:]:
            if first in said or second in said:
                continue
            if (not _in_order(values[first] + values[second], everything)
                    and _in_order(values[second] + values[first], everything)):
                problems.append(f"{path}: worked example '{name}' observes {first} = {text(first)} and then {second} "
                                f"= {text(second)}, but the statement shows the value(s) of {second} before those of {first}: "
                                "two results swapped? (show them in the checks' order, or write each observation's "
                                "name before its values)")
                said.update((first, second))
    return problems


def statement_problems(exercise: Exercise, ref: Reference) -> list[str]:
    """The public worked examples' numbers must be the ones in the statement."""
    text = exercise.statement_path.read_text(encoding="utf-8")
    numbers = _statement_numbers(text)
    problems = []
    stepped = any("step" in key and array.ndim for obs in ref.subjects[REFERENCE].obs.values()
                  for key, array in obs.items())
    if stepped and f"numbered from {exercise.step_base}" not in text:
        # Verdicts say "step N": the learner must be able to find step N in the statement.
        problems.append(f"{exercise.statement_path}: observations run over steps, so say which number the first "
                        f"step gets: the statement must contain 'numbered from {exercise.step_base}' "
                        f"(step_base = {exercise.step_base} in exercise.toml)")
    examples = [i for i in ref.instances if i.kind == "example"]
    if not examples:
        problems.append(f"{exercise.checks_path}: no case of kind 'example' (the worked example, checked by name)")
    for instance in examples:
        name, shown = instance.name, instance.shown
        placed: dict[str, list[float]] = {}  # observation -> its values, each shown and in order
        if name not in text:
            problems.append(f"{exercise.statement_path}: the worked example '{name}' is not named in the statement")
        else:  # the example's numbers follow its name: a match in the introduction is a coincidence
            numbers = _statement_numbers(text[text.index(name):])
        for key, array in ref.subjects[REFERENCE].obs.get(name, {}).items():
            # A case may say which observations the statement shows ("shown"); by default,
            # every small numeric one must be there.
            if shown is not None and key not in shown:
                continue
            if array.dtype.kind == "b" or array.size > STATEMENT_VALUES:
                continue
            missing = [float(v) for v in np.asarray(array, dtype=np.float64).ravel()
                       if np.isfinite(v) and not _appears(float(v), numbers)]
            if missing:
                shown = ", ".join(f"{v:.6g}" for v in missing[:4])
                problems.append(f"{exercise.statement_path}: worked example '{name}' observes {key} = {shown}, "
                                "which the statement does not show")
                continue
            # Every value is there: so must their order be (two results swapped in the text would
            # still show the same set of numbers).
            values = [float(v) for v in np.asarray(array, dtype=np.float64).ravel() if np.isfinite(v)]
            if len(values) > 1 and not _in_order(values, numbers):
                shown = ", ".join(f"{v:.6g}" for v in values[:6]) + (", ..." if len(values) > 6 else "")
                problems.append(f"{exercise.statement_path}: worked example '{name}' observes {key} = {shown} in this "
                                "order, but the statement shows them in another order")
                continue
            if values:
                placed[key] = values
        if name in text and len(placed) > 1:
            # And each observation's numbers are its own: two observations' results exchanged
            # in the text still show every number, each observation's in its order.
            problems += _swap_problems(exercise.statement_path, name, _example_region(text, name), placed,
                                       list(ref.subjects[REFERENCE].obs.get(name, {})))
    return problems


def _case_margin(want: dict[str, np.ndarray], record: object, have: dict[str, np.ndarray],
                 exercise: Exercise) -> float:
    """How many tolerances a subject's case is from the reference's: the largest
    |have - want| / (atol + rtol * |want|) over its observations (np.isclose's test, so above 1
    fails); infinite for a case that raised, a missing or differently shaped observation, a NaN
    on one side only, or a different integer."""
    if record is None or getattr(record, "status", None) != "ok":
        return math.inf
    worst = 0.0
    for key, a in want.items():
        b = have.get(key)
        if b is None or a.shape != b.shape or (a.dtype.kind == "b") != (b.dtype.kind == "b"):
            return math.inf
        if a.dtype.kind not in "f" or b.dtype.kind not in "biuf":
            # Integers (bf16-rounding's bit patterns) and flags: a tolerance under 1 is exactness,
            # and no loosening an author would make lets a different integer pass.
            if not np.array_equal(a, b):
                return math.inf
            continue
        tol = exercise.tolerance_for(str(a.dtype))
        x, y = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            nan_a, nan_b = np.isnan(x), np.isnan(y)
            if (nan_a != nan_b).any():
                return math.inf
            diff = np.where(nan_a, 0.0, np.abs(y - x))
            allowed = tol.atol + tol.rtol * np.abs(x)
            ratio = np.where(diff == 0, 0.0, np.where(allowed > 0, diff / np.where(allowed > 0, allowed, 1), np.inf))
        if ratio.size:
            worst = max(worst, float(np.nanmax(ratio)))
    return worst


def pitfall_margins(exercise: Exercise, ref: Reference) -> dict[str, tuple[float, str]]:
    """Each caught pitfall's margin: how many tolerances away from the reference its most
    different case is, and that case. That is the loosening that would let the pitfall pass every
    case (a case nearer than that only stops catching it, another still does); a margin under 10
    means a modest loosening would make it pass. The nearest case alone would warn about pitfalls
    that another case catches by a factor of a thousand (adam's eps-inside-sqrt: 1.3x on one
    case, far more on others)."""
    own = ref.subjects[REFERENCE]
    found: dict[str, tuple[float, str]] = {}
    for meta in ref.pitfalls:
        run = ref.subjects.get(pitfall_subject(meta.slug))
        if run is None or run.load_error is not None:
            continue
        for name in ref.instance_names:
            margin = _case_margin(own.obs.get(name, {}), run.cases.get(name), run.obs.get(name, {}), exercise)
            if margin > 1 and (meta.slug not in found or margin > found[meta.slug][0]):
                found[meta.slug] = (margin, name)
    return found


def _margin_text(margin: float) -> str:
    return "infinite" if math.isinf(margin) else f"{margin:.3g}x"


def margin_findings(exercise: Exercise, ref: Reference, report: AdequacyReport) -> None:
    """One note with every pitfall's margin; a warning for each within MARGIN_WARNING."""
    margins = pitfall_margins(exercise, ref)
    report.margins = {slug: margin for slug, (margin, _) in margins.items()}
    if margins:
        report.notes.append("pitfall margins (tolerances between the reference and the pitfall's most different case): " + ", ".join(
            f"{slug} {_margin_text(margin)} ({case})" for slug, (margin, case) in
            sorted(margins.items(), key=lambda item: item[1][0])))
    for slug, (margin, case) in sorted(margins.items(), key=lambda item: item[1][0]):
        if margin < MARGIN_WARNING:
            report.warnings.append(f"pitfall '{slug}' is caught by at most {margin:.3g} tolerances (case '{case}'): a "
                                   f"tolerance {MARGIN_WARNING:g}x looser would let it pass; tighten [tolerance] in "
                                   f"{exercise.exercise_dir / 'exercise.toml'} or add a case where it differs more")


def stated_golden(exercise: Exercise) -> tuple[dict[str, dict[str, object]] | None, list[str]]:
    """The ``GOLDEN`` table of checks.py, read as a literal (never run here): ``{case name:
    {observation: value}}`` with values the instructor worked out independently of the
    reference (by hand, from a paper). None when checks.py has none."""
    path = exercise.checks_path
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None, []  # the trusted run reports a broken checks.py, with its line
    found = None
    for node in tree.body:  # the last assignment is the one the module ends up with
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == GOLDEN_NAME for t in targets) and node.value is not None:
            found = node
    if found is None:
        return None, []
    where = f"{path}:{found.lineno}: {GOLDEN_NAME}"
    try:
        table = ast.literal_eval(found.value)
    except (ValueError, SyntaxError, TypeError):
        return None, [f"{where} must be a literal {{case name: {{observation: value}}}} (numbers and lists "
                      "written out, no calls), so validate can read it without running anything"]
    if not isinstance(table, dict) or not all(isinstance(c, str) and isinstance(v, dict) and v and
                                              all(isinstance(k, str) for k in v) for c, v in table.items()):
        return None, [f"{where} must map case names to {{observation: value}} tables"]
    return table, []


def golden_value_problems(exercise: Exercise, ref: Reference, table: dict[str, dict[str, object]],
                          complete: bool = False) -> list[str]:
    """The reference against the values the instructor states, at the exercise's tolerance.
    ``complete`` (no oracle: GOLDEN is the only independent check): each case named must state
    every observation the reference makes for it. A table giving only the worked example's
    total_norm once let a reference with a real bug in its gradients validate clean (red-team
    review 2, v1golden)."""
    where = f"{exercise.checks_path}: {GOLDEN_NAME}"
    own = ref.subjects[REFERENCE].obs
    by_case: dict[str, list[str]] = {}
    for instance in ref.instances:
        by_case.setdefault(instance.case, []).append(instance.name)
    problems = []
    for case, values in table.items():
        names = [case] if case in ref.instance_names else by_case.get(case, [])
        if len(names) != 1:
            known = ", ".join(ref.instance_names[:8])
            problems.append(f"{where} names case '{case}', which is not one case input (known: {known})")
            continue
        observed = own.get(names[0], {})
        left_out = [key for key in observed if key not in values]
        if complete and left_out:
            problems.append(f"{GOLDEN_NAME} for case '{case}' leaves out observation(s) {', '.join(left_out)}: "
                            f"nothing independent checks them (there is no oracle); state every observation of "
                            "the case, worked out without the reference")
        for key, value in values.items():
            if key not in observed:
                problems.append(f"{where} gives '{case}' observation '{key}', which the case does not observe "
                                f"(it observes: {', '.join(sorted(observed))})")
                continue
            have = observed[key]
            try:
                want = np.asarray(value, dtype=np.float64)
            except (TypeError, ValueError):
                problems.append(f"{where} gives '{case}' {key} a value that is not numbers")
                continue
            if want.size != have.size:
                problems.append(f"{where} gives '{case}' {key} {want.size} value(s); the reference observes "
                                f"{have.size}")
                continue
            tol = exercise.tolerance_for(str(have.dtype))
            got = have.astype(np.float64).reshape(want.shape)
            if not np.allclose(got, want, rtol=tol.rtol, atol=tol.atol, equal_nan=True):
                index = np.unravel_index(int(np.argmax(~np.isclose(got, want, rtol=tol.rtol, atol=tol.atol,
                                                                   equal_nan=True))), want.shape)
                problems.append(f"the reference disagrees with the golden value of case '{case}': {key}"
                                f"{[int(i) for i in index] if want.ndim else ''} is {float(got[index]):.6g}, {GOLDEN_NAME} "
                                f"says {float(want[index]):.6g} (rtol {tol.rtol:g}, atol {tol.atol:g}); fix the "
                                "reference, or the stated value if you worked it out wrong")
    return problems


def forbidden_problems(exercise: Exercise, ref: Reference) -> list[str]:
    """A ``forbidden`` entry that names nothing in torch guards nothing: the learner may call the
    real function. The trusted child resolved each name (the parent does not import torch)."""
    manifest = exercise.exercise_dir / "exercise.toml"
    return [f"{manifest}: forbidden entry '{name}' names no torch object (it does not import); fix the spelling "
            "to the full dotted path, e.g. 'torch.nn.functional.cross_entropy'" for name in ref.unresolved]


def tolerance_problems(exercise: Exercise, ref: Reference) -> list[str]:
    """``rtol = atol = 0`` fails correct code that only sums in another order, unless an oracle
    shows that an independent implementation matches the reference bit for bit."""
    exact = [dtype for dtype, tol in exercise.tolerance.items() if tol.rtol == 0 and tol.atol == 0]
    if not exact:
        return []
    manifest = exercise.exercise_dir / "exercise.toml"
    where = f"{manifest}: key 'tolerance' entry '{exact[0]}' has rtol = atol = 0"
    oracle = ref.subjects.get(ORACLE)
    if oracle is None:
        return [f"{where}, which fails correct code on float noise; give it a tolerance (e.g. rtol = 1e-6, "
                f"atol = 1e-7), or add {exercise.oracle_path.name} showing an independent version matches exactly"]
    mine = ref.subjects[REFERENCE].obs
    for name in ref.instance_names:
        a, b = mine.get(name, {}), oracle.obs.get(name, {})
        if a.keys() != b.keys() or any(not np.array_equal(a[k], b[k], equal_nan=True) for k in a):
            return [f"{where}, but the oracle differs from the reference in case '{name}': correct code would "
                    "fail; give it a tolerance (e.g. rtol = 1e-6, atol = 1e-7)"]
    return []


def golden_root() -> Path:
    """The course's ``tests/submissions``: one folder of golden submissions per exercise."""
    return content_root() / "tests" / "submissions"


GOLDEN_HEADER = re.compile(r"#\s*expect:\s*(\w+)(?:\s+pitfall=(\S+))?")
GOLDEN_STATUSES = {s.value for s in Status}


def golden_problems(exercise: Exercise, folder: Path, worker: WarmWorker | None = None) -> list[str]:
    """Grade each golden submission (``folder/*.py``, first line ``# expect: STATUS [pitfall=SLUG]``)
    with one warm worker (``worker``, which must hide ``folder``, or one of its own), and report
    each whose verdict or named pitfall differs."""
    from contextlib import nullcontext

    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import Limits, WarmWorker

    files = sorted(folder.glob("*.py")) if folder.is_dir() else []
    if not files:
        # The scaffold makes the folder with only its README: an empty one means no verdict a
        # student will see was ever checked by hand (see README, Instructors).
        return [f"{folder}: no golden submissions (*.py); add at least a correct answer written differently from "
                "the reference, with '# expect: passed' on line 1 (the README there says how)"]
    problems, wanted = [], {}
    for path in files:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines() or [""]
        match = GOLDEN_HEADER.match(lines[0])
        if not match or match.group(1) not in GOLDEN_STATUSES:
            problems.append(f"{path}: line 1 must be '# expect: STATUS [pitfall=SLUG]' with STATUS one of "
                            f"{', '.join(sorted(GOLDEN_STATUSES))}")
            continue
        wanted[path] = (match.group(1), match.group(2))
    if not any(status == Status.PASSED.value for status, _ in wanted.values()):
        # Only wrong answers (the stub, say) check no verdict a correct student gets.
        problems.append(f"{folder}: no golden submission expects 'passed'; add at least one correct answer written "
                        "differently from the reference, with '# expect: passed' on line 1")
    if not wanted:
        return problems
    with nullcontext(worker) if worker is not None else WarmWorker(hidden_from_learners(exercise, folder)) as worker:
        for path, (status, pitfall) in wanted.items():
            # A short wall clock keeps the infinite loops cheap, as in tests/test_exercises.py.
            limits = Limits(wall_s=2.0) if status == "timeout" else None
            verdict = grade(exercise, path, limits=limits, worker=worker)
            got = verdict.diagnosis.slug if verdict.diagnosis else None
            if verdict.status.value != status or (status == "failed" and got != pitfall):
                want = status + (f" pitfall={pitfall}" if pitfall else "")
                have = verdict.status.value + (f" pitfall={got}" if got else "")
                why = (verdict.message or "").strip().splitlines()[:1]
                problems.append(f"{path}: golden submission expects '{want}', got '{have}'"
                                f"{': ' + why[0][:160].rstrip('.') if why else ''}; fix the exercise, or the header if the "
                                "file is wrong")
    return problems


def _input_text(value: object) -> str:
    """An input's picture as text to compare between runs, without the memory addresses a
    repr of a function or object carries ("<function mse_loss at 0x7f...>"), which differ in
    every process and say nothing about the input."""
    import json

    return re.sub(r" at 0x[0-9a-fA-F]+", "", json.dumps(value, sort_keys=True, default=repr))


def check_adequacy(exercise: Exercise, *, seeds: int | None = None, with_stub: bool = True,
                   determinism: bool = False, corpus_root: Path | None = None,
                   golden: Path | None = None, worker: WarmWorker | None = None) -> AdequacyReport:
    """Every check in the module docstring; with ``corpus_root``, also grade the exercise's
    corpus (``corpus_root/<slug>/*.py``, see judge.corpus) and report the share it names; with
    ``golden``, grade the golden submissions in ``golden/<slug>/``.

    Everything runs in one warm server (``worker``, which must hide the corpus and golden
    folders, or one of its own): the reference, pitfalls and oracle as trusted jobs, the stub,
    the corpus and the golden files as learners' jobs. Four torch imports per exercise were most
    of `grind validate --all`'s time. The determinism check alone runs the reference again in a
    process of its own: a fork shares the server's state (its memory layout, whatever it imported
    or seeded at start), and a result that depends on such state is what that check must catch.
    Only folders that exist are hidden: validate never creates anything in the course."""
    from judge.grade import hidden_from_learners
    from judge.worker.sandbox import WarmWorker

    folder = corpus_root / exercise.slug if corpus_root is not None else None
    # A course without tests/submissions at all (an installed grind) has no golden files to
    # check; one that has it must hold some for each exercise it validates.
    golden_folder = golden / exercise.slug if golden is not None and golden.is_dir() else None
    if worker is not None:
        return _check_adequacy(exercise, seeds, with_stub, determinism, folder, golden_folder, worker)
    hidden = hidden_from_learners(exercise, *[f for f in (folder, golden_folder) if f is not None and f.is_dir()])
    with WarmWorker(hidden) as own:
        return _check_adequacy(exercise, seeds, with_stub, determinism, folder, golden_folder, own)


def _check_adequacy(exercise: Exercise, seeds: int | None, with_stub: bool, determinism: bool,
                    folder: Path | None, golden: Path | None, worker: WarmWorker) -> AdequacyReport:
    started = time.monotonic()
    report = AdequacyReport(exercise.slug)
    report.problems += static_problems(exercise)
    oracle = exercise.oracle_path.is_file()
    if seeds is None:
        # After `grind run` or an earlier validate, the reference and every pitfall are not run
        # again just to be compared with the oracle; on a miss their run fills the cache.
        ref = reference_with_oracle(exercise, worker) if oracle else reference_for(exercise, worker=worker)
    else:
        ref = compute_reference(exercise, seeds=seeds, with_oracle=oracle, worker=worker)
    report.cases, report.pitfalls = len(ref.instances), len(ref.pitfalls)
    for subject_id, run in ref.subjects.items():
        report.verdicts[subject_id] = judge_subject(exercise, ref, run)

    # Each "does not pass" with the cases it fails on: when the determinism check below finds a
    # case's inputs differ between runs, that is the cause, and the failure is not said as well.
    failing: dict[str, set[str | None]] = {}
    for subject_id in (REFERENCE, ORACLE):
        verdict = report.verdicts.get(subject_id)
        if verdict is not None and verdict.status is not Status.PASSED:
            failure = verdict.first_failure
            detail = f"{failure.name}: {failure.message}" if failure else verdict.message
            problem = f"the {subject_id} does not pass: {detail}"
            report.problems.append(problem)
            failing[problem] = {c.case for c in verdict.checks if c.status is not CheckStatus.PASSED} or {None}
    for meta in ref.pitfalls:
        verdict = report.verdicts[pitfall_subject(meta.slug)]
        if verdict.status is Status.PASSED:
            report.problems.append(f"pitfall '{meta.slug}' ({meta.name}) passes every case: no case catches it")
        elif verdict.status in (Status.ERROR, Status.CRASHED):
            report.problems.append(f"pitfall '{meta.slug}' could not run: {verdict.message}")
        elif verdict.diagnosis is None or verdict.diagnosis.slug != meta.slug:
            named = f"'{verdict.diagnosis.slug}'" if verdict.diagnosis else "nothing"
            report.problems.append(f"pitfall '{meta.slug}' is caught but diagnosed as {named}")
        else:
            report.caught += 1
    margin_findings(exercise, ref, report)
    cases = {inst.case for inst in ref.instances}
    report.problems += [f"[marks] weights names case '{case}', which the checks do not have (a typo leaves "
                        f"that case worth 1 in every class's marks)" for case, _ in exercise.weights if case not in cases]
    table, problems = stated_golden(exercise)
    report.problems += problems
    if table:
        report.problems += golden_value_problems(exercise, ref, table, complete=not oracle)
        if not oracle:
            report.notes.append(f"the reference is checked against {sum(len(v) for v in table.values())} golden "
                                f"observation(s) of {len(table)} case(s) stated in {GOLDEN_NAME}, and no oracle")
    elif not oracle and not problems:
        report.problems.append(
            f"not adequate: nothing independent checks the reference: add {exercise.oracle_path} (an independent "
            f"implementation, e.g. torch's own) or a {GOLDEN_NAME} table in {exercise.checks_path} "
            "({case name: {observation: value}}) with values worked out without the reference")
    report.problems += statement_problems(exercise, ref)
    report.problems += forbidden_problems(exercise, ref)
    report.problems += tolerance_problems(exercise, ref)

    elapsed = ref.subjects[REFERENCE].elapsed_s
    if elapsed * HEADROOM > exercise.time_limit:
        report.problems.append(f"the reference takes {elapsed:.2f} s, too close to time_limit = "
                               f"{exercise.time_limit:g} s (keep {HEADROOM:g}x headroom)")
    if determinism:  # in a fresh process, never a fork of ``worker`` (see check_adequacy)
        again = compute_reference(exercise, seeds=seeds)
        first, second = ref.subjects[REFERENCE].obs, again.subjects[REFERENCE].obs
        # Inputs first: a case whose inputs() builds different inputs each run is the checks'
        # fault, not the reference's, and is said as such.
        shown = {i.name: _input_text(i.input) for i in again.instances}
        moving = [i.name for i in ref.instances if i.name in shown and _input_text(i.input) != shown[i.name]]
        moved = {i.case for i in ref.instances if i.name in moving}
        report.problems = [p for p in report.problems if not (p in failing and failing[p] <= moved)]
        for name in moving[:3]:
            report.problems.append(f"case '{name}''s inputs differ between runs: inputs() in {exercise.checks_path} "
                                   "must build the same inputs every time (seed a torch.Generator from the case's "
                                   "seed)")
        for name in ref.instance_names:
            if name in moving:
                continue
            a, b = first.get(name, {}), second.get(name, {})
            if a.keys() != b.keys() or any(not np.array_equal(a[k], b[k], equal_nan=True) for k in a):
                report.problems.append(f"the reference is not deterministic: case '{name}' differs between two runs")
                break
    if with_stub:
        stub = grade(exercise, exercise.stub_path, worker=worker)
        report.verdicts["stub"] = stub
        if stub.status is Status.PASSED:
            report.problems.append("the untouched stub passes")
    if folder is not None and corpus_files(folder):
        report.corpus = judge_corpus(exercise, grade_corpus(exercise, folder, worker=worker))
        report.problems += report.corpus.problems()
    if golden is not None:
        wrong = golden_problems(exercise, golden, worker)
        report.problems += wrong
        if not wrong:  # said, so an author sees the files were graded at all
            report.notes.append(f"{len(list(golden.glob('*.py')))} golden submission(s) in {golden} got the verdict "
                                "their line 1 states")
    report.seconds = time.monotonic() - started
    return report

