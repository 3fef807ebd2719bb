"""Starter notebooks for ``grind init --notebook``: one ``<slug>/<slug>.ipynb`` per exercise.

Each notebook is the exercise as a notebook learner expects it: the statement as Markdown, the
extension loaded, the stub in a cell that starts with ``%%grind <slug>`` (running the cell grades
it), and a note on the hint and solution magics. The hint is not a code cell of its own: "Run
all" would then spend a hint every time.

The file is written as nbformat 4 JSON by hand (the format is small and stable), so ``grind
init`` needs neither nbformat nor IPython; a learner's existing notebook is never overwritten.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from judge.models import Exercise


@dataclass
class NotebooksWritten:
    created: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)


def notebook_path(root: Path, exercise: Exercise) -> Path:
    return root / exercise.slug / f"{exercise.slug}.ipynb"


def _cell(kind: str, source: str, number: int) -> dict[str, object]:
    cell: dict[str, object] = {"cell_type": kind, "id": f"grind-{number}", "metadata": {},
                               "source": source.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def starter_notebook(exercise: Exercise) -> dict[str, object]:
    """The notebook for ``exercise``, as nbformat 4 JSON data."""
    slug = exercise.slug
    stub = exercise.stub_path.read_text(encoding="utf-8").rstrip("\n") + "\n"
    cells = [
        _cell("markdown", exercise.statement_path.read_text(encoding="utf-8"), 1),
        _cell("markdown", f"Write your answer in the `%%grind {slug}` cell below and run it: grind grades the "
                          "cell in its sandbox (your code never runs in this kernel) and records the attempt, as "
                          f"`grind run {slug}` does.", 2),
        _cell("code", "%load_ext judge", 3),
        _cell("code", f"%%grind {slug}\n{stub}", 4),
        _cell("markdown", f"Stuck? `%grind_hint {slug}` in a new cell shows the next hint (grind counts them). "
                          f"Once you pass, `%grind_solution {slug}` shows the reference; "
                          f"`judge.check(\"{slug}\", fn)` grades a function from Python.", 5),
    ]
    return {"cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}, "grind": {"exercise": slug}},
        "nbformat": 4, "nbformat_minor": 5}


def write_notebooks(root: Path, exercises: list[Exercise]) -> NotebooksWritten:
    """Write each exercise's starter notebook into the workspace at ``root``; keep any that exists."""
    written = NotebooksWritten()
    for exercise in exercises:
        target = notebook_path(root, exercise)
        if target.exists() or target.is_symlink():
            written.kept.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.grind-tmp")
        tmp.write_text(json.dumps(starter_notebook(exercise), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, target)
        written.created.append(target)
    return written
