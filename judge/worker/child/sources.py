"""Code the child runs from text: an exercise's trusted files (compiled once by a warm server and
reused by its forks), the author kit served as the package ``grind_kit``, a learner's file, and
the import seal that keeps ``judge`` and ``solutions`` out of a submission's reach.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any


def load_source(source: str, filename: str, name: str, guards: Any = None) -> types.ModuleType:
    """Run ``source`` (text, decoded by the parent) as a fresh module. With ``guards`` it is the
    learner's file: its code objects and globals are the learner's before a line of it runs (the
    guards know learner code by identity), and so are the classes it defines."""
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    import linecache

    # The file itself may be out of reach in the child: the error line shows the code from here.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec") if guards is not None else compile_trusted(source, filename)
    if guards is not None:
        guards.adopt_code(code, from_file=True)
        guards.adopt_namespace(module.__dict__)
    exec(code, module.__dict__)
    if guards is not None:
        guards.adopt_classes(module.__dict__)
    return module


# Trusted sources (an exercise's checks, the author kit) compiled by the warm server, which its
# forks inherit: a job then execs them instead of compiling them again (about 10 ms of a re-grade
# of clipping). Keyed by the whole text and filename, so a source is only ever matched by itself.
_COMPILED: dict[tuple[str, str], types.CodeType] = {}


_COMPILED_CAP = 64


def precompile(job: dict[str, Any]) -> None:
    """In the warm server, after a job: compile its checks and kit for the jobs that follow (a
    learner's source is never compiled here: compile() of hostile text can exhaust the server)."""
    sources = [(str(job.get("checks_filename", "")), job.get("checks_source"))]
    kit = job.get("kit")
    if isinstance(kit, dict):
        sources += [tuple(entry) for entry in kit.values() if isinstance(entry, list) and len(entry) == 2]
    for filename, source in sources:
        if not isinstance(source, str) or not isinstance(filename, str) or (filename, source) in _COMPILED:
            continue
        if len(_COMPILED) >= _COMPILED_CAP:
            _COMPILED.clear()
        try:
            _COMPILED[(filename, source)] = compile(source, filename, "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # the job compiles it itself and reports the author's mistake


def compile_trusted(source: str, filename: str) -> types.CodeType:
    """The code of a trusted source: the warm server's copy when it has one."""
    code = _COMPILED.get((filename, source))
    return code if code is not None else compile(source, filename, "exec")


class _NoJudgeImports:
    """A meta-path finder refusing ``judge`` and ``solutions``: an editable install puts the
    repository on sys.path, which would make ``from solutions.clipping.reference import ...``
    work. Nothing in the child needs either (sources arrive on stdin)."""

    BLOCKED = ("judge", "solutions")

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".", 1)[0] in self.BLOCKED:
            raise ImportError(f"{name} cannot be imported from a submission")
        return None


def seal_imports() -> None:
    sys.path[:] = [p for p in sys.path if not os.path.isdir(os.path.join(p or ".", "solutions"))]
    for name in _blocked_modules():
        sys.modules.pop(name, None)
    sys.meta_path.insert(0, _NoJudgeImports())


def _blocked(name: str) -> bool:
    return name.split(".", 1)[0] in _NoJudgeImports.BLOCKED


# The warm server's sys.modules as it forked the spare: its length, its last name (that very
# string) and the blocked modules among them (note_modules). Empty in a cold run.
_NOTED: list[Any] = []


def note_modules() -> None:
    """The warm server, before each fork: what ``seal_imports`` needs in order to read only the
    modules a job added since. Walking every name of ``sys.modules`` in a fresh fork copies the
    page of each one it touches (their reference counts): 2.2-2.6 ms of every warm job, for a
    list that is almost always empty (the child's package is ``grind_worker``, not ``judge``).
    The server walks them only when its own set of modules changed."""
    if _NOTED and _NOTED[0] == len(sys.modules) and next(reversed(sys.modules), None) is _NOTED[1]:
        return
    _NOTED[:] = [len(sys.modules), next(reversed(sys.modules), None), [m for m in sys.modules if _blocked(m)]]


def _blocked_modules() -> list[str]:
    """The names of ``judge`` and ``solutions`` modules in ``sys.modules``: in a fork of the warm
    server, what it noted plus those among the names added since, read from the end (dicts keep
    insertion order). When a name before the noted last one was removed, or many were added, every
    name is read, as in a cold run. One sequence passes the check unseen: a name removed, a
    blocked one added, and the noted last one popped and put back, which moves it to the end
    (``importlib.reload`` does that). Only the spare's own code runs between the fork and the seal,
    and it only imports (resource, fcntl, signal, ctypes); after the seal the finder refuses the
    blocked names, so nothing later can add one by importing."""
    if _NOTED:
        length, last, blocked = _NOTED
        added = len(sys.modules) - length
        if 0 <= added <= 64:
            names = reversed(sys.modules)
            recent = [next(names) for _ in range(added)]
            if next(names, None) is last:
                return [*blocked, *(name for name in recent if _blocked(name))]
    return [name for name in sys.modules if _blocked(name)]


class _Kit:
    """A meta-path finder serving the author kit, shipped in the job as text, as the package
    ``grind_kit``: ``{"grind_kit": [filename, source], "grind_kit.optim": [...], ...}``. The
    checks and pitfalls import it. A learner's file may import it too: it is trusted code that
    holds no exercise's answer (validate refuses a kit defining an entry point), and what a
    learner patches in it only changes the learner's own observations."""

    def __init__(self, modules: dict[str, list[str]]) -> None:
        self.modules = modules

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in self.modules:
            return None
        import importlib.util

        # Ignored below: this finder is its own loader (create_module, exec_module), which
        # typeshed's LoaderProtocol does not describe (it asks for the legacy load_module).
        return importlib.util.spec_from_loader(name, self, origin=self.modules[name][0],  # type: ignore[arg-type]
                                               is_package="." not in name)

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        import linecache

        filename, source = self.modules[module.__name__]
        module.__file__ = filename
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show lines
        exec(compile_trusted(source, filename), module.__dict__)


def install_kit(modules: dict[str, list[str]] | None) -> None:
    if modules:
        sys.meta_path.insert(0, _Kit(modules))


def _unlink(path: str | None) -> None:
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


def _read_staged(path: str) -> str:
    """A subject's source, staged by grind as a file of this job's folder (see sandbox.stage_job):
    read once, then deleted."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    _unlink(path)
    return text
