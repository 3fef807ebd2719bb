"""The worked examples' numbers against the statement (a part of ``grind validate``).

Why a module of its own: reading where a statement labels which number is the longest of the
adequacy checks, and it needs only the statement's text and the reference's observations. The
checks: every small observation of a case of kind ``example`` is written in the statement after
the example's name, in the order observed, and each beside its own observation's name (or,
unnamed, in the checks' order), so the public numbers are the real ones and no two are swapped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from judge.subjects import REFERENCE
from judge.models import Exercise

if TYPE_CHECKING:
    from judge.subjects import Reference
    from judge.worker.protocol import Instance

STATEMENT_VALUES = 16  # example observations up to this size must appear in the statement

Number = tuple[float, float, int]  # a written number: its value, the unit of its last digit, its significant digits


def _statement_numbers_at(text: str) -> list[tuple[float, Number]]:
    """Every number written in the statement, with where it starts: its value, the unit of its
    last digit shown (0.01 for 3.16, 1e-4 for 1.5e-3) and how many significant digits it shows
    (a fraction: its exact value, unit 0)."""
    found: list[tuple[float, Number]] = []
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


def _statement_numbers(text: str) -> list[Number]:
    return [number for _, number in _statement_numbers_at(text)]


def _appears(value: float, numbers: list[Number]) -> bool:
    """Is ``value`` written somewhere, either exactly (13, 0.5) or correctly rounded to at least
    3 significant digits (3.16 for 3.1623, 1.50e-3)? "0.9" for 0.9231 does not count: a rounding
    that coarse would accept a wrong number."""
    for number, unit, significant in numbers:
        if abs(number - value) <= 1e-6 * max(1.0, abs(value)):
            return True  # exact, up to float32 noise
        if significant >= 3 and abs(number - value) <= 0.5 * unit * (1 + 1e-9):
            return True
    return False


def _in_order(values: list[float], numbers: list[Number]) -> bool:
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


class _Labels:
    """Where each observation's name labels numbers in one worked example's text (``region``)."""

    def __init__(self, region: str, keys: list[str]) -> None:
        self.region = region
        self.numbers = _statement_numbers_at(region)
        spans = {key: _label_spans(key, region) for key in keys}
        # A name inside a longer one ("loss" in "uniform_loss") is that longer one's.
        for key in keys:
            spans[key] = [(a, b) for a, b in spans[key]
                          if not any(other != key and x <= a and b <= y and (y - x) > (b - a)
                                     for other in keys for x, y in spans[other])]
        self.spans = spans
        self.starts = sorted((a, key) for key in keys for a, _ in spans[key])
        # Where the name is this observation's alone, the number right after it is its first value;
        # "torch.save calls  1  0  0  0" shared by ranks 0..3 labels each rank's value further on.
        self.own = {key: set(_label_spans(key, region, shared=False)) & set(spans[key]) for key in keys}

    def window(self, key: str, end_of_name: int) -> list[Number]:
        """The numbers up to the next observation's name or the end of the paragraph (a blank
        line, a fence)."""
        stop = next((a for a, other in self.starts if a >= end_of_name and other != key), len(self.region))
        paragraph = re.compile(r"\n[ \t]*(?:\n|```)").search(self.region, end_of_name)
        stop = min(stop, paragraph.start() if paragraph else stop)
        return [number for at, number in self.numbers if end_of_name <= at < stop]

    def follows(self, values: list[float], key: str, end_of_name: int) -> bool:
        """The number right after the name is the first value ("total norm: 12 ... returned: 13"
        labels 12, whatever follows), and the rest come after it in order."""
        numbers = self.window(key, end_of_name)
        first = any(b == end_of_name for _, b in self.own[key])
        return bool(numbers) and (not first or _appears(values[0], numbers[:1])) and _in_order(values, numbers)

    def shown(self, values: list[float], key: str) -> bool:
        return any(self.follows(values, key, b) for _, b in self.spans[key])

    def heads_a_line(self, start: int) -> bool:
        """"max stable lr  0.01" in a code block, "- total norm: 12" in a list, "| lr | 0.1 |": a
        label; "the clipped gradients have total norm 1" in a sentence may be another quantity."""
        return re.fullmatch(r"[ \t>*`|+-]*", self.region[self.region.rfind("\n", 0, start) + 1:start]) is not None


def _values_text(values: list[float]) -> str:
    return ", ".join(f"{v:.6g}" for v in values[:4]) + (", ..." if len(values) > 4 else "")


def _swap_problems(path: Path, name: str, region: str, values: dict[str, list[float]],
                   keys: list[str]) -> list[str]:
    """Two observations' results exchanged in the worked example: each observation's numbers
    are all there and in order, but under the other's name. Where an observation's name labels
    numbers, its values must follow it before the next observation's name or the paragraph's end;
    said when another observation's values stand there instead and not beside their own name.
    Observations whose names label nothing (``grad[0]`` shown as "g1 -> ...") must be shown in
    the order the checks record them: said for a pair shown strictly the other way round, never
    for a table whose columns interleave them."""
    labels = _Labels(region, keys)
    said: set[str] = set()
    problems = _labelled_swaps(path, name, values, labels, said)
    return problems + _bare_swaps(path, name, values, labels, said)


def _labelled_swaps(path: Path, name: str, values: dict[str, list[float]], labels: _Labels,
                    said: set[str]) -> list[str]:
    """The observations whose names label numbers: each one's values beside its name (adds to ``said``)."""
    problems = []
    for key in [key for key in values if labels.spans[key]]:
        if key in said or labels.shown(values[key], key):
            continue
        # Said only when another observation's numbers stand where this one's should, and that
        # one's are not beside its own name either: a name shared with an input ("lr = 0.05"
        # before a table of lr per step) is no swap.
        partner = _partner(key, values, labels, said)
        if partner is not None:
            problems.append(f"{path}: worked example '{name}' observes {key} = {_values_text(values[key])} and "
                            f"{partner} = {_values_text(values[partner])}, but the statement writes the value(s) of "
                            f"{partner} beside '{key}': two results swapped between observations")
            said.update((key, partner))
        elif heads := [b for a, b in sorted(labels.own[key]) if labels.heads_a_line(a) and labels.window(key, b)]:
            # No other observation's numbers there: a line headed by the name shows a wrong number
            # of its own ("max stable lr 0.01" where the reference says 0.02, which the prose
            # below still shows).
            labelled = ", ".join(dict.fromkeys(f"{labels.window(key, b)[0][0]:.6g}" for b in heads))
            problems.append(f"{path}: worked example '{name}' observes {key} = {_values_text(values[key])}, but the "
                            f"statement writes {labelled} beside '{key}'")
            said.add(key)
    return problems


def _partner(key: str, values: dict[str, list[float]], labels: _Labels, said: set[str]) -> str | None:
    """Another observation whose values stand beside ``key``'s name, and not beside its own."""
    return next((other for other in values if other != key and other not in said
                 and any(labels.follows(values[other], key, b) for _, b in labels.spans[key])
                 and not (labels.spans[other] and labels.shown(values[other], other))), None)


def _bare_swaps(path: Path, name: str, values: dict[str, list[float]], labels: _Labels,
                said: set[str]) -> list[str]:
    """The observations whose names label nothing: shown in the checks' order (adds to ``said``)."""
    problems = []
    bare = [key for key in values if not labels.spans[key] and key not in said]
    everything = [number for _, number in labels.numbers]
    for i, first in enumerate(bare):
        for second in bare[i + 1:]:
            if first in said or second in said:
                continue
            if (not _in_order(values[first] + values[second], everything)
                    and _in_order(values[second] + values[first], everything)):
                problems.append(f"{path}: worked example '{name}' observes {first} = {_values_text(values[first])} "
                                f"and then {second} = {_values_text(values[second])}, but the statement shows the "
                                f"value(s) of {second} before those of {first}: two results swapped? (show them in "
                                "the checks' order, or write each observation's name before its values)")
                said.update((first, second))
    return problems


def statement_problems(exercise: Exercise, ref: Reference) -> list[str]:
    """The public worked examples' numbers must be the ones in the statement."""
    text = exercise.statement_path.read_text(encoding="utf-8")
    numbers = _statement_numbers(text)
    problems = _step_problems(exercise, ref, text)
    examples = [i for i in ref.instances if i.kind == "example"]
    if not examples:
        problems.append(f"{exercise.checks_path}: no case of kind 'example' (the worked example, checked by name)")
    for instance in examples:
        if instance.name not in text:
            problems.append(f"{exercise.statement_path}: the worked example '{instance.name}' is not named in the "
                            "statement")
        else:  # the example's numbers follow its name: a match in the introduction is a coincidence
            numbers = _statement_numbers(text[text.index(instance.name):])
        problems += _example_problems(exercise, ref, text, instance, numbers)
    return problems


def _step_problems(exercise: Exercise, ref: Reference, text: str) -> list[str]:
    """Verdicts say "step N": the learner must be able to find step N in the statement."""
    stepped = any("step" in key and array.ndim for obs in ref.subjects[REFERENCE].obs.values()
                  for key, array in obs.items())
    if stepped and f"numbered from {exercise.step_base}" not in text:
        return [f"{exercise.statement_path}: observations run over steps, so say which number the first "
                f"step gets: the statement must contain 'numbered from {exercise.step_base}' "
                f"(step_base = {exercise.step_base} in exercise.toml)"]
    return []


def _example_problems(exercise: Exercise, ref: Reference, text: str, instance: Instance,
                      numbers: list[Number]) -> list[str]:
    """One worked example: each observation it shows written, in order, beside its own name.
    A case may say which observations the statement shows ("shown"); by default, every small
    numeric one must be there."""
    name, shown = instance.name, instance.shown
    observed = ref.subjects[REFERENCE].obs.get(name, {})
    problems = []
    placed: dict[str, list[float]] = {}  # observation -> its values, each shown and in order
    for key, array in observed.items():
        if shown is not None and key not in shown:
            continue
        problem, values = _observation_problem(exercise.statement_path, name, key, array, numbers)
        if problem is not None:
            problems.append(problem)
        elif values:
            placed[key] = values
    if name in text and len(placed) > 1:
        # And each observation's numbers are its own: two observations' results exchanged
        # in the text still show every number, each observation's in its order.
        problems += _swap_problems(exercise.statement_path, name, _example_region(text, name), placed,
                                   list(observed))
    return problems


def _observation_problem(path: Path, name: str, key: str, array: np.ndarray,
                         numbers: list[Number]) -> tuple[str | None, list[float]]:
    """What is wrong with how the statement shows one observation (None if nothing), and its
    finite values (empty where it is not checked: flags, large arrays)."""
    if array.dtype.kind == "b" or array.size > STATEMENT_VALUES:
        return None, []
    missing = [float(v) for v in np.asarray(array, dtype=np.float64).ravel()
               if np.isfinite(v) and not _appears(float(v), numbers)]
    if missing:
        written = ", ".join(f"{v:.6g}" for v in missing[:4])
        return (f"{path}: worked example '{name}' observes {key} = {written}, which the statement does not "
                "show"), []
    # Every value is there: so must their order be (two results swapped in the text would
    # still show the same set of numbers).
    values = [float(v) for v in np.asarray(array, dtype=np.float64).ravel() if np.isfinite(v)]
    if len(values) > 1 and not _in_order(values, numbers):
        written = ", ".join(f"{v:.6g}" for v in values[:6]) + (", ..." if len(values) > 6 else "")
        return (f"{path}: worked example '{name}' observes {key} = {written} in this order, but the statement "
                "shows them in another order"), []
    return None, values
