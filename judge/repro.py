"""``grind run NAME --repro``: a failing check as a small script the learner runs in their own tools.

The script holds everything needed to re-run the one failing case instance outside grind:
- the exercise's own case code (its ``checks.py``, verbatim: it is trusted author code, and
  the same seeded code builds the same input on any machine with the same torch);
- which case and which size/seed, and the input as the verdict showed it, for reading;
- the reference's observations for that instance, written exactly (each float as the shortest
  decimal that reads back to the same value in its dtype), with the exercise's tolerances;
- a call of the learner's file, by path, the way the judge calls it, and a comparison that
  names the first difference as the verdict does.

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

Runs your {entry_text} (from LEARNER_FILE, below) on the exact input of the failing check, the
way `grind run {slug}` does, and compares what it observes with the reference's values.

    python {script}

Debug it in your own tools (breakpoints in your file work as usual). This script is not
sandboxed: it runs your code and the exercise's case code, on your machine, as you.
Written by `grind run {slug} --repro`; run that again after changing the exercise.
"""
'''

RUNNER = '''

# ---------------------------------------------------------------------------------------------
# The failing check, and what the reference observed on it.

LEARNER_FILE = {learner!r}
ENTRY = {entry!r}
CASE = {case!r}
PARAMS = {params!r}  # a random case's size and seed; empty for a fixed case
STEP_BASE = {step_base!r}  # steps are numbered from this, as in the statement
TOLERANCE = {tolerance!r}  # reference dtype -> (rtol, atol)
ENTRIES = {entries!r}  # names for the pieces of a flattened observation
# The input, as the verdict showed it (the case code above rebuilds it exactly):
INPUT_SHOWN = {input_shown}
EXPECTED = {{  # observation -> (the reference's dtype, shape, values, flattened)
{expected}}}


class NotData(Exception):
    """An observation grind would refuse to compare, with grind's own words for it."""


def _load_learner():
    import importlib.util

    spec = importlib.util.spec_from_file_location("learner_submission", LEARNER_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _as_tensor(value):
    """An observation as a tensor, read as grind reads it: tensors, Python and numpy numbers,
    and lists of them. A Python float is float64 and an int int64, as in grind."""
    kind = type(value)
    if kind is torch.Tensor or kind is torch.nn.Parameter:
        tensor = value.detach().cpu()
        if tensor.is_complex():
            raise NotData("got a complex tensor where a real one was expected")
        return tensor.to(torch.float32) if tensor.dtype == torch.bfloat16 else tensor
    if kind is bool:
        return torch.tensor(value, dtype=torch.bool)
    if kind is int:
        if not -2**63 <= value < 2**64:
            raise NotData(f"got the integer {{str(value)[:40]}}, too large to be a number here")
        if value >= 2**63:  # a uint64 in grind; torch has none, and the comparison is in float64 anyway
            return torch.tensor(float(value), dtype=torch.float64)
        return torch.tensor(value, dtype=torch.int64)
    if kind is float:
        return torch.tensor(value, dtype=torch.float64)
    if kind.__module__ == "numpy":
        import numpy as np

        array = np.array(value, copy=True)
        if array.dtype.kind not in "biuf" or array.dtype.itemsize > 8:
            raise NotData(f"got a numpy value of dtype {{array.dtype}} where numbers were expected")
        if array.dtype.kind == "u" and array.dtype.itemsize > 1:
            array = array.astype(np.float64)  # torch has no wide unsigned ints; grind compares in float64
        return torch.from_numpy(array)
    if kind is list or kind is tuple:
        parts = [_as_tensor(v) for v in value]
        if not parts:
            return torch.zeros(0, dtype=torch.float64)
        try:
            return torch.stack([p.to(torch.promote_types(p.dtype, parts[0].dtype)) for p in parts])
        except RuntimeError:
            raise NotData("got a ragged list where a rectangular tensor was expected") from None
    if value is None:
        raise NotData("got None where a value was expected (did you forget to return?)")
    if isinstance(value, torch.Tensor):
        raise NotData(f"got a subclass of torch.Tensor ({{kind.__name__}}); return a plain tensor")
    raise NotData(f"got an object of type {{kind.__name__}} where a number or tensor was expected")


def _where(index, key):
    words, rest = [], list(index)
    if "step" in key and rest:
        words.append(f"step {{rest.pop(0) + STEP_BASE}}")
    if len(rest) == 1 and key in ENTRIES:
        flat = rest[0]
        for label, shape in ENTRIES[key]:
            size = math.prod(shape)
            if flat < size:
                inner = []
                for n in reversed(shape):
                    inner.insert(0, flat % n)
                    flat //= n
                return " at " + ", ".join(words + [label + (f"{{inner}}" if shape else "")])
            flat -= size
    if rest:
        words.append(f"index {{rest[0] if len(rest) == 1 else rest}}")
    return " at " + ", ".join(words) if words else ""


def _text(value, dtype):
    """One value, exactly: the shortest decimal that reads back to it in ``dtype``."""
    if isinstance(value, bool) or dtype == torch.bool:
        return str(bool(value))
    if not dtype.is_floating_point:
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value.is_integer() and abs(value) < 1e16:
        return f"{{value:.1f}}"
    if dtype == torch.float64:
        return repr(value)
    for digits in range(1, 18):
        text = f"{{value:.{{digits}}g}}"
        if torch.tensor(float(text), dtype=dtype).item() == value:
            return text
    return repr(value)


def _check(key, dtype, shape, values, observed):
    """None when the observation matches, else what differs (grind's rules and tolerances)."""
    if key not in observed:
        return "no value was produced"
    try:
        shown = _as_tensor(observed[key])
    except NotData as exc:
        return str(exc)
    if (dtype == "bool") != (shown.dtype == torch.bool):
        return f"expected {{'True/False' if dtype == 'bool' else 'numbers'}}, got {{str(shown.dtype)[6:]}} values"
    if list(shown.shape) != list(shape):
        return f"expected shape {{list(shape)}}, got shape {{list(shown.shape)}}"
    want = torch.tensor(values, dtype=torch.float64).reshape(shape)
    got = shown.to(torch.float64)
    rtol, atol = TOLERANCE[dtype]
    close = torch.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if bool(close.all()):
        return None
    first = tuple(int(i) for i in (~close).nonzero()[0]) if want.dim() else ()
    expected = values[int(sum(i * math.prod(shape[d + 1:]) for d, i in enumerate(first)))]
    return (f"first differs{{_where(first, key)}}: expected {{_text(expected, getattr(torch, dtype))}}, "
            f"got {{_text(shown[first].item(), shown.dtype)}}")


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)  # as the judge does before building each case's input
    case = next(c for c in CASES if c["name"] == CASE)
    inputs = case["inputs"](**PARAMS) if "inputs" in case else {{}}
    import types

    module = _load_learner()
    # The entry points only, as grind hands them to the case code.
    subject = types.SimpleNamespace(**{{name: getattr(module, name) for name in ENTRY}})
    print(f"Case {{CASE}}{{' ' + str(PARAMS) if PARAMS else ''}}: your code on the input grind showed as")
    print(f"  {{INPUT_SHOWN}}")
    observed = case["call"](subject, **inputs)
    failures = 0
    for key, (dtype, shape, values) in EXPECTED.items():
        problem = _check(key, dtype, shape, values, observed)
        print(f"{{key}}: {{problem or 'matches'}}")
        failures += problem is not None
    if failures:
        print(f"{{failures}} observation(s) differ.")
        return 1
    print("The check passes now, run on its own. If grind still fails it, your code keeps state between "
          "calls (a mutable default argument, a module-level variable): grind runs every case in one process.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


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
    return f"    {key!r}: ({str(array.dtype)!r}, {list(array.shape)!r}, {_literal(values)}),\n"


def failing_instance(verdict: Verdict) -> tuple[str, str]:
    """(check name, instance name) of the failing check the verdict shows (the smallest failing
    input, then the others in order), or ReproUnavailable saying why."""
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
    from judge.grade import REFERENCE, reference_for

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
    checks_source = exercise.checks_path.read_text(encoding="utf-8")
    banner = ("\nimport math\nimport sys\n\nimport torch\n" + kit_section(exercise, checks_source) + "\n"
              f"# ---------------------------------------------------------------------------------------------\n"
              f"# The exercise's case code, verbatim ({exercise.checks_path.name} of {exercise.slug}).\n\n")
    runner = RUNNER.format(
        learner=str(learner), entry=list(exercise.entry), case=instance.case, params=dict(instance.params),
        step_base=exercise.step_base, tolerance=tolerance,
        entries={k: [(label, list(shape)) for label, shape in v] for k, v in (instance.entries or {}).items()},
        input_shown=_literal(instance.input), expected=expected)
    return header + banner + checks_source.rstrip() + "\n" + runner


KIT_SERVER = '''

def _serve_grind_kit():
    """Serve GRIND_KIT as the package grind_kit, as grind's child does, for the case code."""
    import importlib.util
    import linecache

    class GrindKit:
        def find_spec(self, name, path=None, target=None):
            if name not in GRIND_KIT:
                return None
            return importlib.util.spec_from_loader(name, self, is_package="." not in name)

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            filename, source = GRIND_KIT[module.__name__]
            module.__file__ = filename
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            exec(compile(source, filename, "exec"), module.__dict__)

    sys.meta_path.insert(0, GrindKit())


_serve_grind_kit()
'''


def kit_section(exercise: Exercise, checks_source: str) -> str:
    """The author kit (grind_kit), verbatim, and what serves it, when the case code imports it:
    the script then runs where grind's course folder is not."""
    from judge.kit import PACKAGE, kit_dir, kit_modules

    modules = kit_modules(kit_dir(exercise))
    if not modules or PACKAGE not in checks_source:
        return ""
    parts = ["\n# ---------------------------------------------------------------------------------------------\n"
             "# The author kit the case code imports (grind_kit): the course's solutions/_kit, verbatim.\n\n"
             "GRIND_KIT = {}\n"]
    for name, (filename, source) in modules.items():
        lines = "".join(f"    {line!r}\n" for line in source.splitlines(True)) or "    ''\n"
        parts.append(f"GRIND_KIT[{name!r}] = ({filename!r}, (\n{lines}))\n")
    return "".join(parts) + KIT_SERVER


def write_repro(exercise: Exercise, verdict: Verdict, learner: Path, target: Path) -> Path:
    """Write the script next to the learner's file (atomically) and return its path."""
    from judge.formats import write_atomic

    text = repro_script(exercise, verdict, learner.resolve(), target)
    write_atomic(target, text)
    return target
