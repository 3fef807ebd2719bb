"""The front of grading: a submission read, checked statically, then graded by the daemon or here.

``judge.grade`` holds the pipeline (reference, isolated child, comparison, diagnosis) and loads
what it needs at import: the sandbox, the worker's protocol, numpy through the witness checks.
A daemon-served ``grind run`` needs none of it: the per-user daemon runs the pipeline and sends
the verdict back. So the steps before the pipeline live here, on the standard library and the
core's data types only, and ``judge.grade`` is imported the moment a submission must be graded
in this process (no daemon, or one that could not answer). ``judge.grade`` re-exports every
name here, so callers keep one place to ask.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path
from typing import TYPE_CHECKING

from judge import cache
from judge.environment import require_torch
from judge.models import Exercise, Status, Verdict

if TYPE_CHECKING:
    from judge.daemon import DaemonWorker
    from judge.worker.sandbox import Limits, WarmWorker


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
    return sorted(set(hits), key=lambda h: h[1])


def _error_verdict(exercise: Exercise, status: Status, message: str, line: int | None = None) -> Verdict:
    return Verdict(exercise=exercise.slug, status=status, message=message, learner_line=line)


def static_verdict(exercise: Exercise, source: str, filename: str) -> Verdict | None:
    """A verdict that needs no child at all: empty file, syntax error, forbidden import."""
    if not source.strip():
        return _error_verdict(exercise, Status.ERROR,
                              f"The file is empty: define {', '.join(exercise.entry)} (see 'grind reset').")
    try:
        compile(source, filename, "exec", dont_inherit=True)
        hits = forbidden_uses(source, exercise.forbidden)
    except SyntaxError as exc:
        code = (exc.text or "").strip()
        where = f" at line {exc.lineno}" if exc.lineno else ""
        return _error_verdict(exercise, Status.ERROR,
                              f"SyntaxError{where}: {exc.msg}" + (f"\n    {code}" if code else ""), exc.lineno)
    except (ValueError, MemoryError, RecursionError) as exc:  # null bytes; absurdly nested expressions
        return _error_verdict(exercise, Status.ERROR,
                              f"The file cannot be compiled: {type(exc).__name__} {exc}".strip())
    if hits:
        api, line = hits[0]
        return _error_verdict(exercise, Status.FORBIDDEN,
                              f"Forbidden API: {api} (line {line}). This exercise asks you to write it yourself.",
                              line)
    return None


def hidden_from_learners(exercise: Exercise, *extra: Path) -> list[Path]:
    """Folders a learner's child must not read: the solutions, the reference cache, the folder of
    the per-user daemon's socket and secret, and (when grading a class) the class and output
    folders. Bubblewrap hides them; Landlock never grants them (see judge.worker.isolation for
    what each level guarantees)."""
    from judge.daemon import runtime_dir

    daemons = runtime_dir(create=False)  # none yet: no socket to hide (a daemon's client makes it first)
    # Absolute: the list also travels to the per-user daemon, which runs from / (a relative
    # GRIND_CACHE_DIR would have hidden a folder of that name under / instead).
    return [path.absolute() for path in
            (exercise.solution_dir.parent, cache.cache_root(), *([daemons] if daemons else []), *extra)]


def grade(exercise: Exercise, path: Path, *, source: str | None = None, limits: Limits | None = None,
          worker: WarmWorker | DaemonWorker | None = None, speed: bool = False,
          data: bytes | None = None, marked: bool = False) -> Verdict:
    """Grade the submission at ``path`` (or ``source``, reported as ``path``; or its bytes
    ``data``, read elsewhere: a Dask worker grades a file that lives on the instructor's machine).

    With a warm ``worker`` (watch mode, batch grading) the learner's child is a fork of a
    process that already imported torch; without one, a fresh process starts; with the per-user
    daemon's client (``grind run``), the daemon grades and this process only asks. ``speed`` also
    times a passing submission on the exercise's larger SPEED case, against the reference's time
    kept with its observations (`grind run` and practice: advice, never a verdict). ``marked``
    (`grind grade`, the Gradescope bundle, a Dask worker): a submission whose source reaches into
    the judge's frames or objects is refused before it runs (judge/introspection.py)."""
    require_torch()  # before anything runs: a missing torch is not the learner's failure
    started = time.monotonic()
    filename = str(path.resolve())
    notes: list[str] = []
    if source is None and path.suffix == ".ipynb":
        # A notebook: the cells that make the answer (judge/notebooks.py), the same for a class,
        # a Dask worker, grind run --file and the notebook front end's check(NAME, Path(...)).
        from judge.notebooks import notebook_source

        extracted = notebook_source(path.read_bytes() if data is None else data, path.name, exercise.entry)
        if extracted.problem is not None:
            return Verdict(exercise=exercise.slug, status=Status.ERROR, message=extracted.problem,
                           submission=str(path), duration_s=time.monotonic() - started, notices=extracted.notes)
        source, notes = extracted.source, extracted.notes
    if source is None:
        from judge.text import decode_source, read_source

        source, unreadable = read_source(path) if data is None else decode_source(data, path.name)
        if unreadable is not None:  # one line about the encoding, not a SyntaxError at U+FFFD
            return Verdict(exercise=exercise.slug, status=Status.ERROR, message=unreadable,
                           submission=str(path), duration_s=time.monotonic() - started)
    early = static_verdict(exercise, source, filename)
    if early is None and marked:
        from judge import introspection

        refused = introspection.refusal(source, exercise.scanned_strictly, tuple(exercise.forbidden),
                                        tuple(exercise.entry))
        if refused is not None:
            early = _error_verdict(exercise, Status.FORBIDDEN, *refused)
    if early is not None:
        early.submission, early.duration_s = str(path), time.monotonic() - started
        early.notices[:0] = notes
        return early
    key = cache.exercise_key(exercise)
    verdict = None
    remote = getattr(worker, "verdict", None)
    if remote is not None and not marked:  # the per-user daemon's client: the daemon grades the whole submission,
        # or (None) it cannot, and this run is cold, exactly as without a daemon
        verdict, worker = remote(exercise, key, source, filename, limits, speed), None
    if verdict is None:
        from judge.grade import grade_source

        verdict = grade_source(exercise, key, source, filename, limits, worker, speed, marked)
    verdict.submission, verdict.duration_s = str(path), time.monotonic() - started
    verdict.notices[:0] = notes
    return verdict
