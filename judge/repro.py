"""``grind run NAME --repro``: a failing check as a small script the learner runs in their own tools.

The script holds the failing case and the call, and imports the rest (a short file, not the
exercise's whole case code and grind's comparison inlined):
- which case and which size/seed, and the input as the verdict showed it, for reading;
- the reference's observations for that instance, written exactly (each float as the shortest
  decimal that reads back to the same value in its dtype), with the exercise's tolerances;
- where the exercise's case code and the author kit are (trusted author code, loaded from the
  course on disk: the same seeded code builds the same input on any machine with the same torch);
- a call of ``judge.repro_runtime.run``, which calls the learner's file by path the way the
  judge calls it and names the first difference as the verdict does.

Everything in the script comes from the parent's trusted side (the exercise's files and the
cached reference), never from the learner's child: running it runs the learner's own code and
the exercise's, nothing a submission wrote. It is not sandboxed, and says so: it is the
learner's code on the learner's machine, which is what a debugger needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from judge.models import CheckStatus, Exercise, Verdict

HEADER = '''#!/usr/bin/env python3
"""grind repro: exercise {slug}, check {check!r}.

Runs your {entry_text} (from "learner_file", below) on the exact input of the failing check, the
way `grind run {slug}` does, and compares what it observes with the reference's values.

    python {script}

Debug it in your own tools (breakpoints in your file work as usual). This script is not
sandboxed: it runs your code and the exercise's case code, on your machine, as you.
Written by `grind run {slug} --repro`; run that again after changing the exercise.
"""
'''

SCRIPT = """
import sys

GRIND = {grind!r}  # where grind's judge package is: the comparison is imported from there

FAILING = {{
    "learner_file": {learner!r},
    "checks": {checks!r},  # the exercise's case code
    "kit": {kit!r},  # the author kit it imports (grind_kit)
    "entry": {entry!r},
    "case": {case!r},
    "params": {params!r},  # a random case's size and seed; empty for a fixed case
    "step_base": {step_base!r},  # steps are numbered from this, as in the statement
    "tolerance": {tolerance!r},  # reference dtype -> (rtol, atol)
    "entries": {entries!r},  # names for the pieces of a flattened observation
    # The input, as the verdict showed it (the case code rebuilds it exactly):
    "input_shown": {input_shown},
    "expected": {{  # observation -> (the reference's dtype, shape, values, flattened)
{expected}    }},
}}

if __name__ == "__main__":
    sys.path.insert(0, GRIND)  # the grind that wrote this script first (else whichever is installed)
    from judge.repro_runtime import run

    sys.exit(run(FAILING))
"""


class ReproUnavailable(Exception):
    """Why there is no failing check to reproduce (a pass, a file that does not load...)."""


def _literal(value: Any) -> str:
    """Python source for JSON-like data, floats exact, non-finite floats as expressions."""
    if isinstance(value, float):
        if value != value:
            return 'float("nan")'
        if value in (float("inf"), float("-inf")):
            return 'float("inf")' if value > 0 else '-float("inf")'
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _expected_entry(key: str, array: np.ndarray) -> str:
    """One EXPECTED line: dtype, shape and the flattened values, each exact in its dtype (floats
    as the shortest decimal that reads back in that dtype, integers and booleans as themselves)."""
    from judge.compare import shortest_floats

    if array.dtype.kind == "f":
        values: list[Any] = shortest_floats(array)
    elif array.dtype.kind == "b":
        values = [bool(v) for v in array.reshape(-1)]
    else:
        values = [int(v) for v in array.reshape(-1)]
    return f"        {key!r}: ({str(array.dtype)!r}, {list(array.shape)!r}, {_literal(values)}),\n"


def failing_instance(verdict: Verdict) -> tuple[str, str]:
    """(check name, instance name) of the failing check the verdict shows (a failing worked
    example, else the smallest failing input: Verdict.smallest_failure; then the others in order), or ReproUnavailable saying why."""
    if verdict.passed:
        raise ReproUnavailable("every check passed: there is no failure to reproduce")
    shown = verdict.smallest_failure
    for check in ([shown] if shown is not None else []) + verdict.checks:
        if check.status in (CheckStatus.FAILED, CheckStatus.ERROR) and check.instance:
            return check.name, check.instance
    why = verdict.message.splitlines()[0] if verdict.message else verdict.status.value
    raise ReproUnavailable(f"no check failed on an input ({why}); --repro reproduces a failing check")


def repro_script(exercise: Exercise, verdict: Verdict, learner: Path, script: Path) -> str:
    """The script's text for the verdict's first failing check (see the module docstring)."""
    from judge.trusted import reference_for
    from judge.subjects import REFERENCE

    check, instance_name = failing_instance(verdict)
    ref = reference_for(exercise)
    instance = next((i for i in ref.instances if i.name == instance_name), None)
    if instance is None:
        raise ReproUnavailable(f"the exercise changed since this verdict: it has no case '{instance_name}' now")
    observed = ref.subjects[REFERENCE].obs.get(instance.name, {})
    tolerance = {}
    expected = ""
    for key, array in observed.items():
        tol = exercise.tolerance_for(str(array.dtype))
        tolerance[str(array.dtype)] = (tol.rtol, tol.atol)
        expected += _expected_entry(key, array)
    header = HEADER.format(slug=exercise.slug, check=check, script=script.name,
                           entry_text=" and ".join(f"`{e}`" for e in exercise.entry))
    from judge.kit import kit_dir

    body = SCRIPT.format(
        grind=str(Path(__file__).resolve().parent.parent), learner=str(learner),
        checks=str(exercise.checks_path.resolve()), kit=str(kit_dir(exercise).resolve()),
        entry=list(exercise.entry), case=instance.case, params=dict(instance.params),
        step_base=exercise.step_base, tolerance=tolerance,
        entries={k: [(label, list(shape)) for label, shape in v] for k, v in (instance.entries or {}).items()},
        input_shown=_literal(instance.input), expected=expected)
    return header + body


def write_repro(exercise: Exercise, verdict: Verdict, learner: Path, target: Path) -> Path:
    """Write the script next to the learner's file (atomically) and return its path."""
    from judge.formats import write_atomic

    text = repro_script(exercise, verdict, learner.resolve(), target)
    write_atomic(target, text)
    return target
