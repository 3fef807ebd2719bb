"""Interview mode: a blank file, a clock, no hints.

``blank`` turns a stub into what an interviewer would hand over: the module docstring, the
imports, module-level constants, and each function's and class's signature and docstring, with
every body replaced by ``raise NotImplementedError``. Scaffolding an instructor put in a stub
(helper bodies, partial implementations, ``if __name__ == "__main__"`` demos) is gone, because
the point is to write it from memory.

It works on the source text, guided by ``ast`` line numbers, rather than regenerating code with
``ast.unparse``: the signature, the docstring and the comments on kept lines stay exactly as
the instructor wrote them (``# noqa`` included).

The clock lives in the progress database (``Progress.start_interview``), so hints and the
solution stay locked from every terminal until the exercise is passed or the time is up, and a
learner who quits comes back to the same clock.
"""

from __future__ import annotations

import ast

from judge.errors import JudgeError
from judge.models import Exercise
from judge.progress import Interview, Progress

_KEPT_MODULE = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)
_KEPT_CLASS = (ast.Assign, ast.AnnAssign)  # class attributes and dataclass fields are declarations
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _docstring_node(node: ast.AST) -> ast.Expr | None:
    body = getattr(node, "body", [])
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0]
    return None


class _Blanker:
    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()

    def span(self, node: ast.AST) -> list[str]:
        start = node.lineno  # type: ignore[attr-defined]
        end = node.end_lineno  # type: ignore[attr-defined]
        return self.lines[start - 1:end]

    def definition(self, node: ast.AST, prefix: str = "") -> list[str]:
        assert isinstance(node, _DEFS)
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        first = node.body[0]
        name = f"{prefix}{node.name}"
        if first.lineno == node.lineno:
            raise JudgeError(f"cannot blank '{name}' (line {node.lineno}): put its body on its own lines")
        out = self.lines[start - 1:first.lineno - 1]  # decorators and the (possibly multi-line) signature
        indent = " " * first.col_offset
        doc = _docstring_node(node)
        if doc is not None:
            out += self.span(doc)
        if isinstance(node, ast.ClassDef):
            kept = 0
            for child in node.body:
                if child is doc:
                    continue
                if isinstance(child, _DEFS):
                    if kept or doc is not None:
                        out.append("")  # one blank line between members, as in the stubs
                    out += self.definition(child, f"{name}.")
                    kept += 1
                elif isinstance(child, _KEPT_CLASS):
                    out += self.span(child)
                    kept += 1
            if not kept and doc is None:
                out.append(f"{indent}pass")
        else:
            out.append(f'{indent}raise NotImplementedError("write {name}")')
        return out


def blank(source: str) -> str:
    """The stub reduced to imports, constants, signatures and docstrings (module docstring)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise JudgeError(f"cannot blank a stub that does not parse: line {exc.lineno}: {exc.msg}") from None
    blanker = _Blanker(source)
    doc = _docstring_node(tree)
    chunks: list[tuple[str, list[str]]] = []
    for node in tree.body:
        if node is doc:
            chunks.append(("doc", blanker.span(node)))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            chunks.append(("import", blanker.span(node)))
        elif isinstance(node, _KEPT_MODULE):
            chunks.append(("constant", blanker.span(node)))
        elif isinstance(node, _DEFS):
            chunks.append(("def", blanker.definition(node)))
    out: list[str] = []
    previous_kind = None
    for kind, chunk in chunks:
        if previous_kind is not None:
            # PEP 8 spacing: two blank lines around definitions, one between kinds of statement
            out += [""] * (2 if "def" in (kind, previous_kind) else 0 if kind == previous_kind else 1)
        out += chunk
        previous_kind = kind
    return "\n".join(out) + "\n"


def start_or_resume(progress: Progress, exercise: Exercise, now: float, minutes: float | None = None) -> tuple[
        Interview, bool]:
    """The interview running on ``exercise``, or a new one of ``minutes`` (the exercise's
    ``interview_minutes`` by default). Returns it and whether it is new (the caller blanks the
    file only then: resuming must not wipe what the learner has written so far)."""
    running = progress.running_interview(exercise.slug, now)
    if running is not None:
        return running, False
    length = float(minutes if minutes is not None else exercise.interview_minutes) * 60.0
    if length <= 0:
        raise JudgeError("an interview needs a positive number of minutes")
    return progress.start_interview(exercise.slug, now, now + length), True


def locked_message(interview: Interview, now: float, what: str) -> str:
    remaining = interview.remaining(now)
    return (f"Interview in progress on '{interview.exercise}': no {what} until you pass or the time is up "
            f"({int(remaining // 60)}:{int(remaining % 60):02d} left).")


def expire(progress: Progress, slug: str, now: float) -> Interview | None:
    """Close an interview whose clock ran out while nobody was watching, and return it (once),
    so the caller can record the outcome."""
    interview = progress.interview(slug)
    if interview is None or interview.ended_at is not None or now < interview.deadline:
        return None
    progress.finish_interview(interview.id, interview.deadline, "timeout")
    return interview
