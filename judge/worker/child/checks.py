"""The exercise's own files as the child reads them: cases expanded into instances, pitfalls
checked for every key the judge reads (a mistake is one :class:`AuthoringError` line naming the
file), and pairs of pitfalls combined into one subject.
"""

from __future__ import annotations

import traceback
import types
from typing import Any

from .. import protocol as _protocol


class AuthoringError(Exception):
    """A mistake in the exercise's own trusted files: one line for the author, naming the file."""


def authoring_error(exc: BaseException, filename: str, doing: str) -> AuthoringError:
    """``file:line: what went wrong`` for an exception raised by an exercise's own file."""
    if isinstance(exc, SyntaxError):
        return AuthoringError(f"{exc.filename or filename}:{exc.lineno}: syntax error: {exc.msg}; fix that line")
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    where = f"{filename}:{lines[-1]}" if lines else filename
    return AuthoringError(f"{where}: {doing} raised {type(exc).__name__}: {exc}")


def check_cases(cases: list[Any], filename: str) -> None:
    """Each case a dict with a unique name and a known kind: duplicates would merge, and an
    unknown kind ("egde") would be shown to learners."""
    seen: set[str] = set()
    for index, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("name"), str) or not case["name"]:
            raise AuthoringError(f"{filename}: CASES[{index}] needs a 'name' (a non-empty string)")
        name, kind = case["name"], case.get("kind", "edge")
        if kind not in _protocol.CASE_KINDS:
            raise AuthoringError(f"{filename}: case '{name}' has kind {kind!r}; use one of "
                                 f"{', '.join(_protocol.CASE_KINDS)}")
        if name in seen:
            raise AuthoringError(f"{filename}: two cases are named '{name}'; give each case in CASES its own name")
        seen.add(name)


def check_pitfalls(pitfalls: list[Any], filename: str) -> None:
    """Each pitfall a dict with every key the judge reads, and its own slug."""
    seen: set[str] = set()
    for index, pitfall in enumerate(pitfalls):
        if not isinstance(pitfall, dict):
            raise AuthoringError(f"{filename}: PITFALLS[{index}] must be a dict with keys "
                                 f"{', '.join(_protocol.PITFALL_KEYS)}")
        label = pitfall.get("slug") or pitfall.get("name") or "unnamed"
        for key in _protocol.PITFALL_KEYS:
            if key not in pitfall:
                raise AuthoringError(f"{filename}: PITFALLS[{index}] ({label!r}) is missing key '{key}'; add it "
                                     "to that entry of PITFALLS")
        if pitfall["slug"] in seen:
            raise AuthoringError(f"{filename}: two pitfalls have slug {pitfall['slug']!r}; give each its own slug")
        seen.add(pitfall["slug"])


def expand_cases(cases: list[dict[str, Any]], seeds_override: int | None) -> list[dict[str, Any]]:
    """One instance per (case, size, seed), sizes ascending: the first failing instance of a
    random case is then the smallest failing input, by construction."""
    instances = []
    for case in cases:
        if case.get("kind", "edge") == "random":
            seeds = seeds_override or int(case.get("seeds", 2))
            for size in case["sizes"]:
                for seed in range(seeds):
                    instances.append({
                        "name": f"{case['name']}[size={size},seed={seed}]",
                        "case": case, "params": {"size": size, "seed": seed},
                    })
        else:
            instances.append({"name": case["name"], "case": case, "params": {}})
    return instances


def subject_namespace(impl: Any, entry: list[str]) -> types.SimpleNamespace:
    if isinstance(impl, dict):
        return types.SimpleNamespace(**impl)
    if len(entry) == 1 and callable(impl) and not isinstance(impl, types.ModuleType):
        return types.SimpleNamespace(**{entry[0]: impl})  # the entry point itself: a function or a class
    return types.SimpleNamespace(**{name: getattr(impl, name) for name in entry})


_NOT_DELTA = {"__module__", "__doc__", "__qualname__", "__dict__", "__weakref__", "__firstlineno__",
              "__static_attributes__"}


def _combine(a: Any, b: Any) -> Any:
    """Two known mistakes in one implementation, or None when they cannot be combined.

    Class-based pitfalls written as small overrides of a shared base (adam's are) combine by
    inheritance: ``type("A+B", (A, B), {})`` has both overrides, provided they change different
    things. A dict of entry points combines entry by entry."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return None
        parts = {key: _combine(a[key], b[key]) for key in a}
        return parts if all(v is not None for v in parts.values()) else None
    if not (isinstance(a, type) and isinstance(b, type)) or issubclass(a, b) or issubclass(b, a):
        return None
    if (set(vars(a)) - _NOT_DELTA) & (set(vars(b)) - _NOT_DELTA):
        return None  # both change the same thing: together they are not both mistakes
    try:
        return type(f"{a.__name__}+{b.__name__}", (a, b), {})
    except TypeError:  # no consistent method order
        return None


def pitfall_combinations(bundle: Any, path: str, wanted_pairs: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """Pairs of known mistakes run together (subjects ``pitfall:a+b``), so a submission that makes
    two of them (HF's old AdamW: eps before the bias correction *and* decay after the update) is
    named with both. A pitfalls module opts in with ``COMBINE = "all"`` (every pair that
    :func:`_combine` can build) or a list of slug pairs; ``COMBINATIONS = [{"of": [a, b],
    "impl": ...}]`` gives a pair explicitly (function-based pitfalls cannot be combined
    automatically), and a module-level ``combine(a, b)`` builds pairs the module's own way.
    Only the pairs grind asks for (``wanted_pairs``, "a+b") are built: grind asks when no single
    mistake explains a submission, and caches each pair's observations."""
    impls = {p["slug"]: p["impl"] for p in bundle.PITFALLS}
    explicit = {tuple(c["of"]): c["impl"] for c in getattr(bundle, "COMBINATIONS", [])}
    # The module's own combine(a, b) knows its deltas best (adam's merges method overrides).
    maker = getattr(bundle, "combine", None)
    asked = set(wanted_pairs)
    found = []
    for a, b in _pairs(bundle, impls, explicit):
        if f"{a}+{b}" not in asked and f"{b}+{a}" not in asked:
            continue
        impl = explicit.get((a, b))
        if impl is None and a in impls and b in impls:
            impl = maker(a, b) if callable(maker) else _combine(impls[a], impls[b])
        if impl is not None:
            found.append((_protocol.pitfall_subject(f"{a}+{b}"), {"kind": "impl", "impl": impl, "path": path}))
    return found


def _pairs(bundle: Any, impls: dict[str, Any], explicit: dict[tuple[Any, ...], Any]) -> list[tuple[Any, ...]]:
    """The pairs the pitfalls module offers: every pair (``COMBINE = "all"``) or those it lists,
    then the ones it gives explicitly."""
    import itertools

    wanted = getattr(bundle, "COMBINE", None)
    pairs = list(itertools.combinations(impls, 2)) if wanted == "all" else [tuple(p) for p in wanted or []]
    return pairs + [pair for pair in explicit if pair not in pairs]
