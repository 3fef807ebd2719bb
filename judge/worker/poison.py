"""Marks runs: the forbidden implementations are absent from the learner's process.

The guards (guards.py) decide "forbidden" by watching who calls what, from state in the
learner's own interpreter, which code that walks frames could in principle switch off. For a
mark that is not enough, so in a marked run the implementations themselves are replaced before
the learner's file loads:

- every Python function that does a forbidden object's work (the function itself, or each
  method a forbidden class defines) gets a new code object that ends the process at once;
- every aten operator named (``torch._fused_adam_``, ``torch.ops.aten._amp_update_scale_``) gets
  a CPU kernel that does the same, through ``torch.library``, so every route to the operator
  (``torch.X``, ``torch._C._VariableFunctions.X``, ``torch.ops.aten.X``, torch's own callers)
  reaches it.

"Ends the process" is a line on stderr (``MARKER`` and the API's name) and ``os._exit`` with a
status that names the API (``STATUS_BASE`` plus its index in the exercise's list). The C functions are constants of the poisoned code, not a name
looked up anywhere, so no global, default or module attribute the learner can write changes what
a call does, and no ``except`` catches it. The status is read by grind's own process, which
turns it into a ``forbidden`` verdict: the fact that decides it is taken outside the learner's
process. The original code objects stay only in the guards' own tables (frame walking, the one
way to them, is refused by the marks scan).

What cannot be absent: an object the checks themselves use in the learner's process (lr-schedule's
checks drive the learner's lambda with ``LambdaLR``; such an object keeps only the guards), and
what is not a function or an operator (bf16-rounding's dtypes, ``Tensor.half``: C attributes of a
C type). ``not_poisoned`` lists them, and the README says so.
"""

from __future__ import annotations

import os
import types
import warnings
from typing import Any

STATUS_BASE = 96  # 96..127: below 128, which bubblewrap uses for "killed by signal N"
STATUS_COUNT = 32
_EXIT, _WRITE = os._exit, os.write  # the C functions, bound when the warm server imports this module
_EXIT_PLACEHOLDER, _WRITE_PLACEHOLDER = 0x6772696E645F, 0x6772696E6457  # int constants swapped for them
MARKER = "grind: a forbidden implementation was called: "  # + the API's name, on stderr, before the exit


def status_name(forbidden: list[str] | tuple[str, ...], code: int | None, stderr: str) -> str | None:
    """The forbidden API a marked run's end names (grind's side), else None: the exit status
    says which, and the poison's line on stderr says it was the poison (a learner's own
    ``os._exit(96)`` is not taken for a forbidden call)."""
    if code is None or not STATUS_BASE <= code < STATUS_BASE + min(STATUS_COUNT, len(forbidden)):
        return None
    name = forbidden[code - STATUS_BASE]
    return name if f"{MARKER}{name}\n" in stderr else None


def _poisoned_code(freevars: tuple[str, ...], status: int, name: str) -> types.CodeType:
    """A code object that takes any arguments, writes the marker line for ``name`` to stderr and
    calls ``os._exit(status)``, with exactly the free variables ``freevars`` (a function's
    ``__code__`` can only be swapped for code with as many as its closure holds)."""
    lines = ["def outer():"]
    lines += [f"    {name} = None" for name in freevars]
    lines.append("    def poisoned(*args, **kwargs):")
    if freevars:
        lines.append("        " + ", ".join(freevars))
    lines.append(f"        ({_WRITE_PLACEHOLDER})(2, {(MARKER + name + chr(10)).encode()!r})")
    lines.append(f"        ({_EXIT_PLACEHOLDER})({status})")
    lines.append("    return poisoned")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "'int' object is not callable": it will not be an int
        outer = compile("\n".join(lines) + "\n", "<grind: forbidden in a marked run>", "exec")
    template = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in template.co_consts if isinstance(c, types.CodeType))
    if inner.co_freevars != freevars:
        raise ValueError(f"free variables {inner.co_freevars} != {freevars}")
    swap = {_EXIT_PLACEHOLDER: _EXIT, _WRITE_PLACEHOLDER: _WRITE}
    consts = tuple(swap.get(c, c) if type(c) is int else c for c in inner.co_consts)
    return inner.replace(co_consts=consts)


def _used_by_checks(checks: Any) -> set[int]:
    """id() of each object the checks module holds by name: the judge's own use, left alone."""
    try:
        return {id(value) for value in vars(checks).values()}
    except TypeError:
        return set()


def _aten_ops(original: Any) -> list[str]:
    """The aten operator names behind a forbidden object (an operator packet, or a torch builtin
    of the same name), e.g. ``_fused_adam_``."""
    qualified = getattr(original, "_qualified_op_name", None)
    if isinstance(qualified, str) and qualified.startswith("aten::"):
        return [qualified[len("aten::"):]]
    if isinstance(original, types.BuiltinFunctionType) and type(original).__module__ == "builtins":
        return [original.__name__]
    return []


def install(forbidden: list[str], checks: Any, torch: Any, guards: Any) -> list[str]:
    """Poison every forbidden implementation that can be, in this process and every process it
    forks. Returns the names left to the guards alone (used by the checks, or not code).
    ``guards`` is guards.py (the child loads its siblings by path): its name resolution and its
    notion of "the functions that do an object's work" are the ones the guards use."""
    kept = _used_by_checks(checks)
    done: set[int] = set()
    not_poisoned: list[str] = []
    ops: dict[str, tuple[int, str]] = {}
    for index, dotted in enumerate(forbidden[:STATUS_COUNT]):
        original = guards._resolve(dotted)
        if original is None or id(original) in done:
            continue
        done.add(id(original))
        status = STATUS_BASE + index
        if id(original) in kept:
            not_poisoned.append(dotted)
            continue
        functions = guards._functions_of(original)
        names = _aten_ops(original)
        for name in names:
            ops.setdefault(name, (status, forbidden[index]))
        for function in functions:
            if id(function) in kept:
                continue
            function.__code__ = _poisoned_code(function.__code__.co_freevars, status, forbidden[index])
        if not functions and not names:
            not_poisoned.append(dotted)
    if ops:
        _poison_ops(ops, torch)
    return not_poisoned


_LIBRARIES: list[Any] = []  # the dispatcher's registration objects: the kernels live as long as they do


def _poison_ops(ops: dict[str, tuple[int, str]], torch: Any) -> None:
    """Register the poison kernels through the dispatcher's own library object, not
    ``torch.library.Library``: that one hands its handle to a ``weakref.finalize`` whose class-wide
    registry any code can walk and call, and an eighth review did, putting torch's fused Adam
    back before calling it. This object is held only here, where the marks scan lets no one reach."""
    library = torch._C._dispatch_library("IMPL", "aten", "", "<grind: forbidden in a marked run>", 0)
    _LIBRARIES.append(library)
    for name, (status, api) in ops.items():
        packet = getattr(torch.ops.aten, name, None)
        if packet is None:
            continue
        kernel = types.FunctionType(_poisoned_code((), status, api), {}, name)
        for overload in packet.overloads():
            target = name if overload == "default" else f"{name}.{overload}"
            for key in ("CPU", "CompositeExplicitAutograd"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # "Overriding a previously registered kernel": the point
                    try:
                        library.impl(target, key, kernel, False)
                    except RuntimeError:
                        continue  # the dispatcher refused this key for this operator
