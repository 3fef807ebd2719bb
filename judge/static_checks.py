"""The static checks: what the parent can tell from a submission's text, before any child starts.

An empty file, a syntax error, a forbidden API named in the source: each is a verdict that
needs no torch, no sandbox and no reference. Standard library and the core's data types only:
the front of grading (``judge.grade``) runs these in every ``grind run``, daemon-served or not.
"""

from __future__ import annotations

import ast

from judge.models import Exercise, Status, Verdict


# Static checks: done in the parent, before any child starts, because they need no torch.


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    base = aliases.get(node.id, node.id)
    return ".".join([base, *reversed(parts)])


def forbidden_uses(source: str, forbidden: tuple[str, ...]) -> list[tuple[str, int]]:
    """Uses of forbidden APIs visible in the source (imports, attribute chains, aliases)."""
    if not forbidden:
        return []
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    hits: list[tuple[str, int]] = []

    def check(name: str | None, line: int) -> None:
        if name is None:
            return
        for banned in forbidden:
            if name == banned or name.startswith(banned + "."):
                hits.append((banned, line))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                check(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                aliases[a.asname or a.name] = full
                check(full, node.lineno)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and isinstance(getattr(node, "ctx", None), ast.Load):
            check(_dotted(node, aliases), node.lineno)
    hits += _private_names(tree, forbidden)
    return sorted(set(hits), key=lambda h: h[1])


def _private_names(tree: ast.AST, forbidden: tuple[str, ...]) -> list[tuple[str, int]]:
    """Each use of a forbidden API's private last name (``_fused_sgd_``, ``_single_tensor_adam``),
    whatever comes before it: an attribute (not of ``self`` or ``cls``), a name imported from any
    module, or a text equal to it.

    The dotted check above follows imports, not every road to an object: torch's fused builtins
    are also ``torch._VF.vf.X``, ``type(torch._C._VariableFunctions).X``, a module's own ``_VF``,
    ``torch.ops.aten.X.default._op``, a namespace's ``__dict__['X']``. The guards cannot put a
    stand-in in most of those places (their attributes are read-only), and a builtin that C code
    calls for the submission (``functools.partial``, ``map``) never reaches the profile hook: a
    review passed sgd-momentum in practice fourteen such ways. Marks refuse any forbidden last
    name (judge.introspection); practice refuses the private ones, which no answer written from
    memory spells (the public ones, ``step`` or ``SGD``, would refuse honest code)."""
    leaves: dict[str, str] = {}
    for dotted in forbidden:
        leaf = dotted.rsplit(".", 1)[-1]
        if leaf.startswith("_") and not leaf.startswith("__"):
            leaves.setdefault(leaf, dotted)
    if not leaves:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in leaves and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.append((leaves[node.attr], node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in leaves:
            found.append((leaves[node.value], node.lineno))
        elif isinstance(node, ast.ImportFrom):
            found += [(leaves[a.name], node.lineno) for a in node.names if a.name in leaves]
    return found


def error_verdict(exercise: Exercise, status: Status, message: str, line: int | None = None) -> Verdict:
    return Verdict(exercise=exercise.slug, status=status, message=message, learner_line=line)


def static_verdict(exercise: Exercise, source: str, filename: str) -> Verdict | None:
    """A verdict that needs no child at all: empty file, syntax error, forbidden import."""
    if not source.strip():
        return error_verdict(exercise, Status.ERROR,
                              f"The file is empty: define {', '.join(exercise.entry)} (see 'grind reset').")
    try:
        compile(source, filename, "exec", dont_inherit=True)
        hits = forbidden_uses(source, exercise.forbidden)
    except SyntaxError as exc:
        code = (exc.text or "").strip()
        where = f" at line {exc.lineno}" if exc.lineno else ""
        return error_verdict(exercise, Status.ERROR,
                              f"SyntaxError{where}: {exc.msg}" + (f"\n    {code}" if code else ""), exc.lineno)
    except (ValueError, MemoryError, RecursionError) as exc:  # null bytes; absurdly nested expressions
        return error_verdict(exercise, Status.ERROR,
                              f"The file cannot be compiled: {type(exc).__name__} {exc}".strip())
    if hits:
        api, line = hits[0]
        return error_verdict(exercise, Status.FORBIDDEN,
                              f"Forbidden API: {api} (line {line}). This exercise asks you to write it yourself.",
                              line)
    return None
