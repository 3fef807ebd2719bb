"""What a ``grind run NAME --repro`` script imports: the comparison grind makes, outside grind.

The script itself holds only the failing case (its name, size and seed, the input as the verdict
showed it, the reference's values) and the call; this module loads the exercise's case code and
the author kit from the course on disk, runs the learner's file on that case and names the first
difference as the verdict does. It runs in the learner's own process (the script's), like the
learner's code and the child runner: that is why it, and only it beside the runner, imports torch.
Nothing in grind's parent imports it.
"""

from __future__ import annotations

import importlib.util
import math
import sys
import types
from pathlib import Path
from typing import Any

import torch

S: dict[str, Any] = {}  # the failing check being reproduced (set by run)


class NotData(Exception):
    """An observation grind would refuse to compare, with grind's own words for it."""


def _load(name: str, path: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _serve_kit(folder: str) -> None:
    """The author kit (the course's solutions/_kit, on disk) as the package grind_kit, as grind's
    child serves it, for the case code that imports it."""
    init = Path(folder) / "__init__.py"
    if "grind_kit" in sys.modules or not init.is_file():
        return
    spec = importlib.util.spec_from_file_location("grind_kit", init, submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["grind_kit"] = module
    spec.loader.exec_module(module)


def _as_tensor(value: Any) -> torch.Tensor:
    """An observation as a tensor, read as grind reads it: tensors, Python and numpy numbers,
    and lists of them. A Python float is float64 and an int int64, as in grind."""
    kind = type(value)
    if kind is torch.Tensor or kind is torch.nn.Parameter:
        tensor: torch.Tensor = value.detach().cpu()
        if tensor.is_complex():
            raise NotData("got a complex tensor where a real one was expected")
        return tensor.to(torch.float32) if tensor.dtype == torch.bfloat16 else tensor
    if kind is bool:
        return torch.tensor(value, dtype=torch.bool)
    if kind is int:
        return _int_tensor(value)
    if kind is float:
        return torch.tensor(value, dtype=torch.float64)
    if kind.__module__ == "numpy":
        return _numpy_tensor(value)
    if kind is list or kind is tuple:
        return _list_tensor(value)
    if value is None:
        raise NotData("got None where a value was expected (did you forget to return?)")
    if isinstance(value, torch.Tensor):
        raise NotData(f"got a subclass of torch.Tensor ({kind.__name__}); return a plain tensor")
    raise NotData(f"got an object of type {kind.__name__} where a number or tensor was expected")


def _int_tensor(value: int) -> torch.Tensor:
    if not -2**63 <= value < 2**64:
        raise NotData(f"got the integer {str(value)[:40]}, too large to be a number here")
    if value >= 2**63:  # a uint64 in grind; torch has none, and the comparison is in float64 anyway
        return torch.tensor(float(value), dtype=torch.float64)
    return torch.tensor(value, dtype=torch.int64)


def _numpy_tensor(value: Any) -> torch.Tensor:
    import numpy as np

    array = np.array(value, copy=True)
    if array.dtype.kind not in "biuf" or array.dtype.itemsize > 8:
        raise NotData(f"got a numpy value of dtype {array.dtype} where numbers were expected")
    if array.dtype.kind == "u" and array.dtype.itemsize > 1:
        array = array.astype(np.float64)  # torch has no wide unsigned ints; grind compares in float64
    return torch.from_numpy(array)


def _list_tensor(value: list[Any] | tuple[Any, ...]) -> torch.Tensor:
    parts = [_as_tensor(v) for v in value]
    if not parts:
        return torch.zeros(0, dtype=torch.float64)
    try:
        return torch.stack([p.to(torch.promote_types(p.dtype, parts[0].dtype)) for p in parts])
    except RuntimeError:
        raise NotData("got a ragged list where a rectangular tensor was expected") from None


def _where(index: tuple[int, ...], key: str) -> str:
    words: list[str] = []
    rest = list(index)
    if "step" in key and rest:
        words.append(f"step {rest.pop(0) + S['step_base']}")
    if len(rest) == 1 and key in S['entries']:
        flat = rest[0]
        for label, shape in S['entries'][key]:
            size = math.prod(shape)
            if flat < size:
                inner: list[int] = []
                for n in reversed(shape):
                    inner.insert(0, flat % n)
                    flat //= n
                return " at " + ", ".join(words + [label + (f"{inner}" if shape else "")])
            flat -= size
    if rest:
        words.append(f"index {rest[0] if len(rest) == 1 else rest}")
    return " at " + ", ".join(words) if words else ""


def _text(value: Any, dtype: Any) -> str:
    """One value, exactly: the shortest decimal that reads back to it in ``dtype``."""
    if isinstance(value, bool) or dtype == torch.bool:
        return str(bool(value))
    if not dtype.is_floating_point:
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value.is_integer() and abs(value) < 1e16:
        return f"{value:.1f}"
    if dtype == torch.float64:
        return repr(value)
    for digits in range(1, 18):
        text = f"{value:.{digits}g}"
        if torch.tensor(float(text), dtype=dtype).item() == value:
            return text
    return repr(value)


def _check(key: str, dtype: str, shape: list[int], values: list[Any], observed: dict[str, Any]) -> str | None:
    """None when the observation matches, else what differs (grind's rules and tolerances)."""
    if key not in observed:
        return "no value was produced"
    try:
        shown = _as_tensor(observed[key])
    except NotData as exc:
        return str(exc)
    if (dtype == "bool") != (shown.dtype == torch.bool):
        return f"expected {'True/False' if dtype == 'bool' else 'numbers'}, got {str(shown.dtype)[6:]} values"
    if list(shown.shape) != list(shape):
        return f"expected shape {list(shape)}, got shape {list(shown.shape)}"
    want = torch.tensor(values, dtype=torch.float64).reshape(shape)
    got = shown.to(torch.float64)
    rtol, atol = S['tolerance'][dtype]
    close = torch.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if bool(close.all()):
        return None
    first = tuple(int(i) for i in (~close).nonzero()[0]) if want.dim() else ()
    expected = values[int(sum(i * math.prod(shape[d + 1:]) for d, i in enumerate(first)))]
    return (f"first differs{_where(first, key)}: expected {_text(expected, getattr(torch, dtype))}, "
            f"got {_text(shown[first].item(), shown.dtype)}")


def run(spec: dict[str, Any]) -> int:
    """Re-run the failing check that ``spec`` (the script's FAILING) names; 1 when it still fails."""
    S.update(spec)
    _serve_kit(S['kit'])
    cases = _load("grind_checks", S['checks']).CASES
    torch.set_num_threads(1)
    torch.manual_seed(0)  # as the judge does before building each case's input
    case = next(c for c in cases if c["name"] == S['case'])
    inputs = case["inputs"](**S['params']) if "inputs" in case else {}
    module = _load("learner_submission", S['learner_file'])
    # The entry points only, as grind hands them to the case code.
    subject = types.SimpleNamespace(**{name: getattr(module, name) for name in S['entry']})
    print(f"Case {S['case']}{' ' + str(S['params']) if S['params'] else ''}: your code on the input grind showed as")
    print(f"  {S['input_shown']}")
    observed = case["call"](subject, **inputs)
    failures = 0
    for key, (dtype, shape, values) in S['expected'].items():
        problem = _check(key, dtype, shape, values, observed)
        print(f"{key}: {problem or 'matches'}")
        failures += problem is not None
    if failures:
        print(f"{failures} observation(s) differ.")
        return 1
    print("The check passes now, run on its own. If grind still fails it, your code keeps state between "
          "calls (a mutable default argument, a module-level variable): grind runs every case in one process.")
    return 0
