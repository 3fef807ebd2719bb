"""A Jupyter notebook as a submission: the code cells that make the exercise's answer.

One function, ``notebook_source``, turns an ``.ipynb`` file's bytes into the Python source grind
grades, and every path that grades a file goes through it (``judge.grade.grade`` for a file whose
name ends in ``.ipynb``): ``grind grade`` on a class folder of notebooks, a Dask worker, ``grind run
--file answer.ipynb`` and the notebook front end's ``judge.check("clipping", Path("answer.ipynb"))``.

Which cells: a notebook is a scratchpad (plots, prints, experiments, a training run), and running
all of it would grade the experiments too. The answer is the cells that define the exercise's
entry names (a ``def``, ``class`` or assignment at top level), plus, from the other cells, the
definitions those use (a helper function, a constant) and every top-level import, as a kernel
run top to bottom would have them. Cells keep their order; each is introduced by a comment
naming it, so a line in a verdict can be found in the notebook.

IPython's own syntax is not Python: a line starting with ``%`` (a line magic) or ``!`` (a shell
command) is replaced by an empty line, and a cell starting with ``%%`` (a cell magic) is left out,
each with a note on the verdict, never run. Standard library only (the core).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from judge.text import safe


@dataclass
class Extracted:
    """The source to grade, the notes for the verdict, and why it cannot be graded (or None)."""

    source: str
    notes: list[str] = field(default_factory=list)
    problem: str | None = None


def drop_ipython_lines(text: str, where: str) -> tuple[str, list[str]]:
    """``text`` with each ``%`` and ``!`` line made empty (line numbers stay), and a note for each."""
    lines, notes = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            shown = stripped if len(stripped) <= 60 else stripped[:59] + "…"
            notes.append(f"{where}, line {number}: IPython line dropped, not run: {shown}")
            lines.append("")
        else:
            lines.append(line)
    return "\n".join(lines), notes


def _defined(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _used(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _imports(tree: ast.Module) -> list[str]:
    return [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]


class _Cell(NamedTuple):
    number: int  # as the notebook counts its cells, from 1
    text: str
    tree: ast.Module | None  # None: it does not parse


def notebook_source(data: bytes, name: str, entry: tuple[str, ...] | list[str]) -> Extracted:
    """The answer in the notebook ``data`` (nbformat 4 JSON) for an exercise whose learner defines
    ``entry``: see the module's docstring for which cells. A file that is not a notebook, or one
    whose cells define none of ``entry``, is a ``problem`` (one line), not a crash."""
    shown = safe(name)
    cells = _cells(data)
    if cells is None:
        return Extracted("", problem=f"{shown} is not a Jupyter notebook (nbformat 4 JSON with a list of cells)")
    notes: list[str] = []
    code = _code_cells(cells, shown, notes)
    chosen = _answer_cells(code, set(entry))
    if not chosen:
        return Extracted("", notes, f"no code cell of {shown} defines {', '.join(entry)}")
    chosen = _with_helpers(code, chosen)
    imports: list[str] = []
    for cell in code:
        if cell.number not in chosen and cell.tree is not None:
            imports += [line for line in _imports(cell.tree) if line not in imports]
    parts = ["# imports from the notebook's other cells\n" + "\n".join(imports)] if imports else []
    parts += [f"# --- {shown}, cell {cell.number} ---\n{cell.text}" for cell in code if cell.number in chosen]
    left_out = len(code) - len(chosen)
    if left_out:
        notes.append(f"{shown}: {left_out} code cell{'s' if left_out != 1 else ''} not part of the answer "
                     f"(they define none of {', '.join(entry)} nor anything it uses) left out, not run")
    return Extracted("\n\n".join(parts) + "\n", notes)


def _cells(data: bytes) -> list[Any] | None:
    """The notebook's list of cells, or None when ``data`` is not one."""
    try:
        cells = json.loads(data.decode("utf-8-sig"))["cells"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    return cells if isinstance(cells, list) else None


def _code_cells(cells: list[Any], shown: str, notes: list[str]) -> list[_Cell]:
    """The non-empty code cells, IPython's lines dropped and cell magics left out (each noted)."""
    code = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else text
        if not isinstance(text, str) or not text.strip():
            continue
        where = f"{shown}, cell {number}"
        if text.lstrip().startswith("%%"):
            notes.append(f"{where}: cell magic {text.lstrip().splitlines()[0][:40]} left out, not run")
            continue
        text, dropped = drop_ipython_lines(text, where)
        notes += dropped
        try:
            tree: ast.Module | None = ast.parse(text)
        except (SyntaxError, ValueError):
            tree = None
        code.append(_Cell(number, text, tree))
    return code


def _answer_cells(code: list[_Cell], wanted: set[str]) -> set[int]:
    """The cells defining an entry name. A cell that does not parse is kept when it seems to hold
    the answer: grading then reports its syntax error at its line, which the learner needs to see."""
    return {cell.number for cell in code
            if (cell.tree is not None and _defined(cell.tree) & wanted)
            or (cell.tree is None and any(f"def {e}" in cell.text or f"class {e}" in cell.text for e in wanted))}


def _with_helpers(code: list[_Cell], chosen: set[int]) -> set[int]:
    """``chosen`` with the helpers the answer uses, and the helpers those use. A cell that also
    does things (prints, plots) is no helper."""
    def used(numbers: set[int]) -> set[str]:
        return set().union(*(_used(cell.tree) for cell in code if cell.number in numbers and cell.tree is not None))

    needed = used(chosen)
    while True:
        more = {cell.number for cell in code
                if cell.number not in chosen and cell.tree is not None and _defined(cell.tree) & needed
                and not any(isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant)
                            for node in cell.tree.body)}
        if not more:
            return chosen
        chosen = chosen | more
        needed |= used(more)
