"""A static check, made in grind's own process, for code that reaches into the judge's.

Why: the forbidden-API guards run in the learner's interpreter (they must: they watch what the
learner's code calls), so code that walks the judge's frames or objects (``sys._getframe``,
``gc.get_objects``, ``ctypes``, a function's ``__closure__``) can switch them off before it calls
``torch.nn.utils.clip_grad_norm_``. For self-practice that cheats only the learner; for marks
(``grind grade``, the Gradescope bundle) it would be a forged pass. No runtime check inside the
child can settle it, so the marking modes read the source here, where no submission can reach,
and refuse a submission that uses any of these doors (with the computed-name ones, on an
exercise with forbidden APIs). No answer to these exercises needs them; a refusal says which
construct, on which line. The figures that decide the distributed exercises' verdicts are
counted outside the process anyway (judge/witnessed.py); this keeps the in-process ones (a
forbidden call seen by the guard, a checkpoint readable when a rank returned) honest for marks.

What it cannot see: a door opened through text that is only assembled at run time. That is why
the dynamic ways to reach a module or an attribute by a computed name (``__import__``,
``importlib``, ``getattr`` with a name that is not a literal, ``exec``/``eval``/``compile``) are
doors too: text cannot become code, or a module, without one of them.
"""

from __future__ import annotations

import ast

# Modules whose import alone opens a door into the interpreter's frames, objects or memory.
MODULES = frozenset({"gc", "ctypes", "_ctypes", "cffi", "inspect"})
# ... and modules that turn data or a computed name into code or an object (doors only where the
# exercise forbids APIs: reaching torch's own implementation by a computed name is the point there).
DYNAMIC_MODULES = frozenset({"importlib", "pickle", "marshal", "builtins"})
# Attributes that walk frames, closures and code objects.
ATTRIBUTES = frozenset({"_getframe", "_current_frames", "settrace", "setprofile", "f_back", "f_locals",
                        "f_globals", "f_builtins", "f_code", "tb_frame", "gi_frame", "cr_frame", "ag_frame",
                        "__closure__", "__code__", "__globals__", "__builtins__", "__subclasses__",
                        "__wrapped__", "get_referrers", "get_objects"})
# Calls that turn text into code, or a computed name into a module.
CALLS = frozenset({"exec", "eval", "compile", "__import__", "breakpoint"})
DYNAMIC_CALLS = frozenset({"globals", "vars", "locals"})


def reaches_into_judge(source: str, dynamic: bool = True) -> list[tuple[str, int]]:
    """Each (construct, line) in ``source`` that could reach the judge's frames or objects, in
    line order. ``dynamic`` adds the computed-name doors (``getattr(obj, name)`` with a name that
    is not a literal, ``vars()``, ``importlib``, ``pickle``): an exercise with forbidden APIs
    refuses them too, since they reach torch's implementation as well as the judge's; elsewhere a
    computed ``getattr`` is an ordinary style (over a model's parameter names, say).
    ``source`` must compile (the caller checked)."""
    modules = MODULES | DYNAMIC_MODULES if dynamic else MODULES
    calls = CALLS | DYNAMIC_CALLS if dynamic else CALLS
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(f"import {a.name}", node.lineno) for a in node.names if a.name.split(".")[0] in modules]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in modules or (node.module == "sys" and any(a.name in ATTRIBUTES
                                                                                        for a in node.names)):
                found.append((f"from {node.module} import ...", node.lineno))
        elif isinstance(node, ast.Attribute) and node.attr in ATTRIBUTES:
            found.append((f".{node.attr}", node.lineno))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in calls:
                found.append((f"{node.func.id}()", node.lineno))
            elif dynamic and node.func.id in ("getattr", "setattr", "delattr") and not _literal_name(node):
                found.append((f"{node.func.id}() with a computed name", node.lineno))
        elif isinstance(node, ast.Name) and node.id in ("__builtins__", "__loader__", "__spec__"):
            found.append((node.id, node.lineno))
    return sorted(set(found), key=lambda item: (item[1], item[0]))


def _literal_name(call: ast.Call) -> bool:
    return len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str)


def refusal(source: str, forbids_apis: bool) -> tuple[str, int] | None:
    """The message and line for a marked submission that opens a door, or None."""
    uses = reaches_into_judge(source, dynamic=forbids_apis)
    if not uses:
        return None
    what, line = uses[0]
    more = f" (and {len(uses) - 1} more)" if len(uses) > 1 else ""
    return (f"Not accepted for marks: {what} at line {line}{more} can reach into grind's own code in your "
            "process and rewrite what its checks observe there. No answer to this exercise needs it: "
            "remove it and submit again.", line)
