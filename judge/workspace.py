"""Where the learner's files live: init, locate, reset, and where their progress is stored.

A workspace is a folder with a ``grind.toml`` marker, found from the current directory upwards
(like git finds ``.git``). Each exercise gets ``<slug>/<module>.py`` (the learner's file, named
importably: ``lr-schedule/lr_schedule.py``, so ``import lr_schedule`` works in a REPL) and
``<slug>/README.md`` (the statement). Workspaces made before that keep their dashed
``lr-schedule/lr-schedule.py``: it is used as long as it is the only one there. Nothing here ever deletes a learner's file: reset keeps a
backup, and init never overwrites.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from judge.errors import UsageError
from judge.models import Exercise

MARKER = "grind.toml"
STATE_DIR = ".grind"
PROGRESS_DB = "progress.db"
SCRATCH = ("Scratch run: this file is not the workspace's {slug} file, so it is graded but not recorded "
           "({slug}'s attempts and review schedule are unchanged).")


def _copy(source: Path, target: Path) -> None:
    """``shutil.copyfile``, with shutil (and its compression modules) loaded only to copy: every
    `grind run` imports this module, and only init, reset and a fresh sitting copy anything."""
    import shutil

    shutil.copyfile(source, target)


def find_workspace(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / MARKER).is_file():
            return folder
    return None


def module_name(slug: str) -> str:
    """The learner file's importable name: ``lr-schedule`` -> ``lr_schedule``."""
    return slug.replace("-", "_")


def learner_file(root: Path, exercise: Exercise) -> Path:
    """The learner's file: ``<slug>/<module>.py``, or the dashed ``<slug>/<slug>.py`` an older
    grind wrote, when that one is there and the new one is not (its progress is keyed by the
    exercise, so nothing is lost either way)."""
    folder = root / exercise.slug
    target = folder / f"{module_name(exercise.slug)}.py"
    legacy = folder / f"{exercise.slug}.py"
    if legacy != target and not (target.exists() or target.is_symlink()) and (legacy.exists() or legacy.is_symlink()):
        return legacy
    return target


def is_scratch(file: Path | None, root: Path | None, exercise: Exercise) -> bool:
    """``--file`` naming anything but the workspace's file for ``exercise``: a scratch run, graded
    but not an attempt on the exercise (its progress and schedule stay as they are). Outside a
    workspace there is no exercise file, and ``--file`` is the learner's file (per-user progress)."""
    if file is None or root is None:
        return False
    try:
        return file.resolve() != learner_file(root, exercise).resolve()
    except OSError:
        return True


def current_exercise(root: Path | None, last_run: str | None, slugs: list[str], cwd: Path | None = None,
                     command: str = "grind run") -> str:
    """The exercise a bare ``grind run`` (or ``grind hint``) means, as rustlings does: the exercise
    folder the learner is in, else the one last run or practised in this workspace (``last_run``).
    A ``UsageError`` naming the usage when there is none."""
    usage = f"which exercise? '{command} NAME', e.g. '{command} clipping' ('grind list' shows them)"
    if root is None:
        raise UsageError(f"{usage}; a bare '{command}' means a workspace's current exercise, and there is no "
                         "workspace here")
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if folder.parent == root and folder.name in slugs:
            return folder.name
        if folder == root:
            break
    if last_run is not None and last_run in slugs:
        return last_run
    raise UsageError(f"{usage}; nothing has been run in this workspace yet")


@dataclass
class InitReport:
    root: Path
    created: list[str]
    kept: list[str]


def init_workspace(root: Path, exercises: list[Exercise]) -> InitReport:
    """Create (or top up) a workspace. Existing learner files are kept untouched."""
    root = root.resolve()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a folder")
    root.mkdir(parents=True, exist_ok=True)
    marker = root / MARKER
    if not marker.exists():
        marker.write_text("# grind practice workspace: `grind run NAME` finds this file from any subfolder.\n"
                          "version = 1\n", encoding="utf-8")
    created, kept = [], []
    for exercise in exercises:
        target = learner_file(root, exercise)
        target.parent.mkdir(exist_ok=True)
        _copy(exercise.statement_path, target.parent / "README.md")
        if target.exists():
            kept.append(exercise.slug)
        else:
            _copy(exercise.stub_path, target)
            created.append(exercise.slug)
    return InitReport(root, created, kept)


def _backup(root: Path, exercise: Exercise, target: Path) -> Path:
    """Copy the learner's file into ``.grind/backups``, never over an earlier backup (two
    resets in the same second must both keep their file)."""
    backups = root / STATE_DIR / "backups"
    backups.mkdir(parents=True, exist_ok=True)
    stem = f"{exercise.slug}-{time.strftime('%Y%m%d-%H%M%S')}"
    backup, n = backups / f"{stem}.py", 1
    while backup.exists():
        backup, n = backups / f"{stem}-{n}.py", n + 1
    _copy(target, backup)
    return backup


def reset_exercise(root: Path, exercise: Exercise) -> Path | None:
    """Put the stub back. The learner's previous file is kept in ``.grind/backups``."""
    target = learner_file(root, exercise)
    backup = _backup(root, exercise, target) if target.exists() else None
    target.parent.mkdir(parents=True, exist_ok=True)
    _copy(exercise.stub_path, target)
    return backup


def start_fresh(root: Path, exercise: Exercise, text: str) -> Path | None:
    """Write ``text`` (a stub, or a blanked one for an interview) as the learner's file, for a
    practice sitting. The previous file is backed up unless it already holds exactly ``text``
    (no pile of identical backups); returns the backup, if one was made."""
    target = learner_file(root, exercise)
    backup = None
    if target.exists():
        if target.read_text(encoding="utf-8", errors="replace") == text:
            return None
        backup = _backup(root, exercise, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not (target.parent / "README.md").exists():
        _copy(exercise.statement_path, target.parent / "README.md")
    tmp = target.with_name(f".{target.name}.grind-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)  # an editor watching the file sees one complete change
    return backup


def progress_path(root: Path | None) -> Path:
    """The workspace's progress database, or a per-user one when there is no workspace
    (``GRIND_STATE_DIR``, else the platform's user state folder)."""
    if root is not None:
        return root / STATE_DIR / PROGRESS_DB
    env = os.environ.get("GRIND_STATE_DIR")
    if env:
        return Path(env) / PROGRESS_DB
    from judge.userdirs import user_state_dir

    return Path(user_state_dir()) / PROGRESS_DB


def _exists(path: Path) -> bool:
    """Something is at ``path`` (a broken link counts): then "missing" would be the wrong word."""
    return path.exists() or path.is_symlink()


def pick_file(exercise: Exercise, root: Path | None, file: Path | None) -> tuple[Path, bool, list[str]]:
    """The file ``grind run`` grades: ``file`` (``--file``), else the workspace's, else (outside a
    workspace) the untouched stub. Returns it, whether its grade is recorded, and what to say
    first. A file that is not there, or not a regular file, is a ``UsageError``. In a workspace,
    a ``file`` other than the exercise's own is a scratch run: graded, not recorded."""
    if file is not None:
        if file.is_dir():
            raise UsageError(f"{file} is a directory: --file takes the .py file to grade")
        if not file.is_file():
            raise UsageError(f"{file}: no such file" if not _exists(file) else
                             f"{file} is not a regular file (a FIFO, a device or a broken link): --file takes "
                             "the .py file to grade")
        if is_scratch(file, root, exercise):
            return file, False, [SCRATCH.format(slug=exercise.slug)]
        return file, True, []
    if root is not None:
        path = learner_file(root, exercise)
        if not path.is_file():
            raise UsageError(f"{path} is missing: 'grind reset {exercise.slug}' puts the stub back"
                             if not _exists(path) else
                             f"{path} is not a regular file (a folder, a FIFO, a device or a broken link): move "
                             f"it away, then 'grind reset {exercise.slug}' puts the stub back")
        return path, True, []
    return exercise.stub_path, False, [
        "No grind workspace here, so this graded the untouched stub. Start practising with 'grind init' "
        f"(creates ./grind-practice), then edit grind-practice/{exercise.slug}/{module_name(exercise.slug)}.py "
        f"and run "
        f"'grind run {exercise.slug}'."]
