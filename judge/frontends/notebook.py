"""grind in a Jupyter notebook: ``%load_ext judge``, then ``%%grind clipping`` over a cell.

What a learner gets, and why it is built this way:

- ``%%grind NAME`` grades the cell as the learner's file for exercise NAME, and
  ``judge.check(NAME, fn_or_source)`` does the same from Python. The grade is ``grind run
  --file``'s: the same sandboxed child, limits, cache, warm daemon and progress database (of the
  workspace found from the kernel's folder). The learner's code never runs in the kernel: it runs
  in grind's child, and grind's own grading runs in a process of its own too
  (``actions.grade_in_child``), so a hostile cell can neither kill nor reach the kernel.
- The verdict is an object with an HTML rendering (``judge.render.html``: status, checks, the
  smallest failing input, the named mistake and its explanation, the failing curve as SVG) and
  a plain-text one (``judge.render.plain``), so a front end without HTML still shows the words.
- ``%grind_hint NAME`` and ``%grind_solution NAME [--force]`` (or ``judge.hint`` and
  ``judge.solution``) follow the CLI's rules: hints are counted, the solution comes after a pass
  or with an explicit force, neither during an interview.
- A learner's mistake is data and grind's refusal is a message: no call here lets a traceback
  reach the notebook (an unknown name, a syntax error, a bad argument are one line each), unless
  ``GRIND_TRACEBACK=1`` asks for it.

IPython is imported only by ``load_ipython_extension`` and ``display``: ``judge.check`` works in
a plain Python session too, where the result prints as text.
"""

from __future__ import annotations

import inspect
import os
import shlex
import textwrap
import types
from typing import Any, Callable

from judge.errors import JudgeError, UsageError
from judge.frontends import actions

CELL_LABEL = "cell"


class Shown:
    """Something a notebook displays: HTML, with plain text for every other front end."""

    def __init__(self, html: str, text: str) -> None:
        self._html, self._text = html, text

    def _repr_html_(self) -> str:
        return self._html

    def __repr__(self) -> str:
        return self._text

    __str__ = __repr__


class Problem(Shown):
    """grind could not do what was asked (an unknown exercise, a locked solution): the message,
    once, instead of a traceback. Falsy, so ``if judge.check(...)`` reads naturally."""

    def __init__(self, message: str, error: dict[str, Any] | None = None) -> None:
        from judge.render.html import message_box

        self.message = message
        self.error = error or {"error": {"kind": "usage", "message": message, "exit_code": 2}}
        super().__init__(message_box("grind", message), f"grind: {message}")

    passed = False

    def __bool__(self) -> bool:
        return False


class Result(Shown):
    """A verdict on a notebook submission. ``passed``, ``status``, ``verdict`` (the core's
    ``Verdict``) and ``json`` (what ``grind run --json`` prints) are there for code; displaying
    it shows the verdict."""

    def __init__(self, graded: actions.Graded) -> None:
        from judge.render import plain
        from judge.render.html import html
        from judge.views.verdict import verdict_view

        self.graded = graded
        view = verdict_view(graded.shown(), graded.exercise, graded.hints, graded.lead)
        view = view._replace(footer=notebook_words(view.footer))
        super().__init__(html(view), plain.text(view))

    @property
    def verdict(self) -> Any:
        return self.graded.verdict

    @property
    def passed(self) -> bool:
        return self.graded.passed

    @property
    def status(self) -> str:
        return self.graded.verdict.status.value

    @property
    def json(self) -> dict[str, Any]:
        return self.graded.to_json()

    def __bool__(self) -> bool:
        return self.passed


def notebook_words(text: str) -> str:
    """The verdict's footer names the terminal's commands; in a notebook, the magics."""
    return text.replace("grind hint ", "%grind_hint ").replace("grind solution ", "%grind_solution ")


def _guarded(action: Callable[[], Shown]) -> Shown:
    """Run ``action``; grind's refusals and its own failures become a ``Problem``."""
    try:
        return action()
    except JudgeError as exc:
        return Problem(exc.message, actions.error_json(exc))
    except KeyboardInterrupt:
        return Problem("interrupted: the grade was stopped, and nothing was recorded")
    except Exception as exc:  # noqa: BLE001 - the boundary: one line in the notebook, not a traceback
        if os.environ.get("GRIND_TRACEBACK") == "1":
            raise
        return Problem(f"internal error: {type(exc).__name__}: {exc} (set GRIND_TRACEBACK=1 to see where)",
                       actions.error_json(exc))


# ---------------------------------------------------------------------------------------------
# The functions: judge.check, judge.hint, judge.solution, judge.show, judge.progress


def check(exercise: str, code: Any) -> Shown:
    """Grade ``code`` for ``exercise``: the source as a string, a file's path (a ``pathlib.Path``:
    graded as ``grind run --file`` grades it; a saved ``.ipynb``, its answer cells, as ``grind
    grade`` grades a class of notebooks: judge/notebooks.py), or a function, class or module whose source grind
    reads (``inspect``). Returns a displayable verdict (``Result``) or, when grind cannot grade
    it, a ``Problem`` saying why."""
    if isinstance(code, os.PathLike):
        return _guarded(lambda: Result(actions.grade_in_child(exercise, path=os.fspath(code))))
    return _guarded(lambda: Result(actions.grade_in_child(exercise, source_of(exercise, code), label=CELL_LABEL)))


def source_of(exercise: str, code: Any) -> str:
    """The text to grade for ``code``.

    A string is the source. A module (or a function or class from a module with a file) is
    graded as that whole file, as ``grind run --file`` would. A function or class defined in the
    notebook has no file: its own source is graded, preceded by the imports it uses (``torch``,
    ``F``: the modules and library names its code refers to), since a cell that imported them
    earlier is not part of it; and under the exercise's entry name when it has another."""
    if isinstance(code, str):
        return code
    if isinstance(code, types.ModuleType):
        return _source(code)
    if not (inspect.isfunction(code) or inspect.isclass(code)):
        raise UsageError(f"check() grades a source string, a file path, a function, a class or a module, not "
                         f"{type(code).__name__}")
    module = inspect.getmodule(code)
    if module is not None and module.__name__ != "__main__" and getattr(module, "__file__", None):
        return _source(module)
    body = textwrap.dedent(_source(code))
    entry = actions.exercise(exercise).entry
    alias = f"\n\n{entry[0]} = {code.__name__}\n" if len(entry) == 1 and code.__name__ != entry[0] else ""
    imports = imports_used(code)
    return ("\n".join(imports) + "\n\n\n" if imports else "") + body + alias


def _source(obj: Any) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        name = getattr(obj, "__name__", type(obj).__name__)
        raise UsageError(f"grind cannot find the source of {name}: pass the source as a string, or grade the "
                         "cell with %%grind NAME") from None


def imports_used(obj: Any) -> list[str]:
    """Import lines for the modules and library objects that ``obj``'s code names from its
    globals: what the learner imported in another cell."""
    functions: list[Any] = [obj] if inspect.isfunction(obj) else [
        v for v in vars(obj).values() if inspect.isfunction(v) or isinstance(v, (staticmethod, classmethod))]
    names: set[str] = set()
    for fn in functions:
        names |= _code_names(getattr(fn, "__func__", fn).__code__)
    scope = getattr(getattr(functions[0], "__func__", functions[0]), "__globals__", {}) if functions else {}
    return [line for line in (_import_line(name, scope.get(name)) for name in sorted(names)) if line is not None]


def _import_line(name: str, value: Any) -> str | None:
    """The import that binds ``name`` to ``value``: a module, or a library's function or class
    (not the notebook's own, nor a builtin); None for anything else."""
    if isinstance(value, types.ModuleType):
        return f"import {value.__name__}" if value.__name__ == name else f"import {value.__name__} as {name}"
    if (inspect.isfunction(value) or inspect.isclass(value) or inspect.isbuiltin(value)) and \
            getattr(value, "__module__", "__main__") not in ("__main__", "builtins", None) and \
            "<" not in getattr(value, "__qualname__", "<"):
        qualname = value.__qualname__
        return f"from {value.__module__} import {qualname}" + (f" as {name}" if qualname != name else "")
    return None


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def hint(exercise: str) -> Shown:
    """The next hint (``grind hint NAME``), counted as shown."""
    def give() -> Shown:
        from judge.render import plain
        from judge.render.html import html
        from judge.views.screens import TextView, hint_view

        got = actions.next_hint(exercise)
        if got["hint"] is None:
            view = TextView(f"Hints: {got['exercise']}", got["message"])
        else:
            view = hint_view(got["number"], got["total"], got["hint"], got["last"])
            if not got["counted"]:
                view = view._replace(body=f"{view.body}\n\n{got['message']}")
        return Shown(html(view), plain.text(view))
    return _guarded(give)


def solution(exercise: str, force: bool = False) -> Shown:
    """The reference solution (``grind solution NAME``): after a pass, or with ``force=True``."""
    def give() -> Shown:
        from judge.render import plain
        from judge.render.html import html
        from judge.views.screens import TextView

        try:
            got = actions.solution(exercise, force=force)
        except actions.SolutionLocked as exc:
            return Problem(f"{exc.message} To see it anyway: %grind_solution {exercise} --force "
                           f"(or judge.solution({exercise!r}, force=True)).", actions.error_json(exc))
        view = TextView(f"Reference solution: {got['exercise']}", got["source"], syntax=True)
        return Shown(html(view), plain.text(view))
    return _guarded(give)


class Statement(Shown):
    """A statement: Markdown, which the notebook renders itself."""

    def __init__(self, markdown: str) -> None:
        super().__init__("", markdown)
        self.markdown = markdown

    def _repr_markdown_(self) -> str:
        return self.markdown

    def _repr_html_(self) -> None:  # type: ignore[override]  # Markdown is the rendering
        return None


def show(exercise: str) -> Shown:
    """The exercise's statement (``grind show NAME``), as Markdown."""
    return _guarded(lambda: Statement(actions.statement_json(exercise)["statement"]))


def progress() -> Shown:
    """Your progress (``grind progress``)."""
    def give() -> Shown:
        from html import escape

        from judge.render import plain
        from judge.views.screens import progress_view

        text = plain.text(progress_view(actions.overview()))
        return Shown(f"<pre>{escape(text)}</pre>", text)
    return _guarded(give)


# ---------------------------------------------------------------------------------------------
# The magics


def _display(shown: Shown) -> None:
    from IPython.display import display

    display(shown)  # type: ignore[no-untyped-call]  # IPython's display has no annotations


def _args(line: str, usage: str) -> list[str] | None:
    try:
        return shlex.split(line)
    except ValueError:
        _display(Problem(f"could not read '{line.strip()}': {usage}"))
        return None


def grind_cell(line: str, cell: str) -> None:
    """``%%grind NAME``: grade the cell for exercise NAME. The magic's own line is kept as an
    empty line, so a line number in the verdict is the line in the cell."""
    usage = "write %%grind NAME on the cell's first line, e.g. %%grind clipping"
    words = _args(line, usage)
    if words is None:
        return
    if len(words) != 1:
        _display(Problem(("which exercise? " if not words else f"one exercise name, not {' '.join(words)!r}: ")
                         + usage))
        return
    # The same rule as for a notebook graded as a file (judge/notebooks.py): a % or ! line is
    # IPython's, not Python's, so it is left out with a note rather than failing as a SyntaxError.
    from judge.notebooks import drop_ipython_lines

    text, notes = drop_ipython_lines("\n" + cell, CELL_LABEL)  # numbered as the verdict numbers lines

    def graded() -> Result:
        answer = actions.grade_in_child(words[0], text, label=CELL_LABEL)
        answer.lead[:0] = notes
        return Result(answer)

    _display(_guarded(graded))


def grind_hint(line: str) -> None:
    """``%grind_hint NAME``: the next hint."""
    words = _args(line, "%grind_hint NAME")
    if words is None:
        return
    _display(hint(words[0]) if len(words) == 1 else Problem("which exercise? %grind_hint NAME, e.g. "
                                                             "%grind_hint clipping"))


def grind_solution(line: str) -> None:
    """``%grind_solution NAME [--force]``: the reference, after a pass or when forced."""
    words = _args(line, "%grind_solution NAME [--force]")
    if words is None:
        return
    force = "--force" in words
    names = [w for w in words if w != "--force"]
    if len(names) != 1 or any(w.startswith("-") for w in names):
        _display(Problem("which exercise? %grind_solution NAME, or %grind_solution NAME --force before a pass"))
        return
    _display(solution(names[0], force=force))


def grind_show(line: str) -> None:
    """``%grind_show NAME``: the statement."""
    words = _args(line, "%grind_show NAME")
    if words is None:
        return
    _display(show(words[0]) if len(words) == 1 else Problem("which exercise? %grind_show NAME"))


def grind_progress(line: str) -> None:
    """``%grind_progress``: status, attempts and reviews per exercise."""
    _display(progress())


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext judge``: register the magics."""
    ipython.register_magic_function(grind_cell, magic_kind="cell", magic_name="grind")
    for function in (grind_hint, grind_solution, grind_show, grind_progress):
        ipython.register_magic_function(function, magic_kind="line", magic_name=function.__name__)
