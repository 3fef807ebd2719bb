"""The picture in docs/architecture.md: judge's rooms and the imports between them, as Mermaid.

Run ``python docs/import_graph.py`` from the repository root: it reads every module of ``judge/``
with ``ast`` (nothing is imported), puts each in its room (``ROOMS``, first match wins), and prints
a Mermaid flowchart with one arrow per pair of rooms that import each other, labelled with how
many imports make it (a dashed arrow when every one of them is made inside a function, on first
use). ``tests/test_architecture.py`` checks that the picture in the doc is this script's output,
so the map cannot drift from the code.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (room, module-name prefixes), in order: the first room whose prefix matches holds the module
# ("=name": that module alone).
ROOMS: list[tuple[str, tuple[str, ...]]] = [
    ("child", ("judge.worker.child", "judge.worker.runner", "=judge.repro_runtime")),
    ("in-child checks", ("judge.worker.guards", "judge.worker.integrity", "judge.worker.poison", "judge.worker.heap")),
    ("worker", ("judge.worker",)),
    ("cli", ("judge.cli", "judge.entry", "judge.fast_run", "judge.__main__")),
    ("frontends", ("judge.frontends",)),
    ("screens", ("judge.views", "judge.render")),
    ("commands", ("judge.commands", "judge.classroom")),
    ("daemon", ("judge.daemon",)),
    ("learner loop", ("judge.outcome", "judge.practice", "judge.watch", "judge.interview", "judge.progress",
                      "judge.scheduling", "judge.quiz", "judge.decks", "judge.verify", "judge.repro")),
    ("grading", ("judge.grade", "judge.pipeline", "judge.judging", "judge.trusted", "judge.static_checks",
                 "judge.subjects", "judge.submit", "judge.executor", "judge.compare", "judge.diagnose",
                 "judge.speed", "judge.witnessed", "judge.kept", "judge.cache", "judge.paths", "judge.introspection",
                 "judge.notebooks")),
    ("instructors", ("judge.adequacy", "judge.golden", "judge.worked_example", "judge.batch", "judge.autograder",
                     "judge.formats", "judge.gradebook", "judge.cluster", "judge.corpus", "judge.similarity",
                     "judge.scaffold")),
    ("core", ("judge",)),
]


def room_of(module: str) -> str:
    for room, prefixes in ROOMS:
        if any(module == p[1:] if p.startswith("=") else
               module == p or module.startswith(p + ".") or module.startswith(p + "_") for p in prefixes):
            return room
    raise KeyError(module)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p) for p in (ROOT / "judge").rglob("*.py")}


def imports(path: Path, name: str) -> list[tuple[str, bool]]:
    """(module imported, made inside a function) for every import of judge's own modules."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                found.extend((a.name, lazy) for a in child.names if a.name.startswith("judge"))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                if base.startswith("judge"):
                    # `from judge import cache` imports the module judge.cache, not judge/__init__
                    found.extend((f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base, lazy)
                                 for a in child.names)
            elif isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                continue  # types only: no arrow at run time
            visit(child, inner)

    visit(tree, False)
    return found


def graph() -> tuple[Counter[tuple[str, str]], set[tuple[str, str]]]:
    edges: Counter[tuple[str, str]] = Counter()
    eager: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "judge").rglob("*.py")):
        name = module_name(path)
        source = room_of(name)
        for target_module, lazy in imports(path, name):
            target = room_of(target_module)
            if target == source:
                continue
            edges[(source, target)] += 1
            if not lazy:
                eager.add((source, target))
    return edges, eager


def _id(room: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in room)


def mermaid() -> str:
    edges, eager = graph()
    lines = ["flowchart TD"]
    for (source, target), count in sorted(edges.items()):
        arrow = "-->" if (source, target) in eager else "-.->"
        lines.append(f'    {_id(source)}["{source}"] {arrow}|{count}| {_id(target)}["{target}"]')
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(mermaid())
