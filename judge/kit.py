"""The author kit, seen from the parent: which files it has, how they travel to the child, and
whether it is safe to hand to learners' runs.

The kit is ``solutions/_kit/`` of the course (an underscore: never an exercise's slug). Its
top-level ``.py`` files go to every child as text, in the job's ``"kit"`` entry, and the child
serves them as the package ``grind_kit`` (``__init__.py`` is ``grind_kit``, ``optim.py`` is
``grind_kit.optim``). The parent never imports them: they are torch code.
"""

from __future__ import annotations

import ast
from pathlib import Path

from judge.models import Exercise

PACKAGE = "grind_kit"
FOLDER = "_kit"


def kit_dir(exercise: Exercise) -> Path:
    return exercise.solution_dir.parent / FOLDER


def builtin_kit() -> Path | None:
    """grind's own kit: in the wheel's bundled content, or in the checkout grind runs from."""
    here = Path(__file__).resolve().parent
    for folder in (here / "_content" / "solutions" / FOLDER, here.parent / "solutions" / FOLDER):
        if (folder / "__init__.py").is_file():
            return folder
    return None


def kit_files(folder: Path) -> list[Path]:
    """The kit's modules, sorted; none when the course has no kit (an older course)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.py") if p.is_file())


def kit_modules(folder: Path) -> dict[str, list[str]]:
    """``{module name: [filename, source]}`` for the job."""
    modules = {}
    for path in kit_files(folder):
        name = PACKAGE if path.name == "__init__.py" else f"{PACKAGE}.{path.stem}"
        modules[name] = [str(path), path.read_text(encoding="utf-8")]
    return modules


def defined_names(path: Path) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments, imports)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def kit_problems(exercise: Exercise) -> list[str]:
    """A learner's file may import the kit, so the kit must not hand out this exercise's answer:
    it may not define a name the learner is asked to write. (The kit holds no correct
    implementation anyway; this catches the day someone moves a shared base class into it.)"""
    problems = []
    for path in kit_files(kit_dir(exercise)):
        try:
            clash = sorted(defined_names(path) & set(exercise.entry))
        except SyntaxError as exc:
            problems.append(f"{path}: not valid Python ({exc.msg}, line {exc.lineno})")
            continue
        for name in clash:
            problems.append(f"{path} defines '{name}', an entry point of {exercise.slug}: learners' files can "
                            "import the kit (grind_kit), so it must hold no exercise's answer")
    return problems
