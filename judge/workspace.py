"""Where the learner's files live: init, locate, reset, and the small state that hints and
reveals need.

A workspace is a folder with a ``grind.toml`` marker, found from the current directory upwards
(like git finds ``.git``). Each exercise gets ``<slug>/<slug>.py`` (the learner's file) and
``<slug>/README.md`` (the statement). Nothing here ever deletes a learner's file: reset keeps a
backup, and init never overwrites.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.errors import UsageError
from judge.models import Exercise

MARKER = "grind.toml"
STATE_DIR = ".grind"


def find_workspace(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / MARKER).is_file():
            return folder
    return None


def learner_file(root: Path, exercise: Exercise) -> Path:
    return root / exercise.slug / f"{exercise.slug}.py"


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
        shutil.copyfile(exercise.statement_path, target.parent / "README.md")
        if target.exists():
            kept.append(exercise.slug)
        else:
            shutil.copyfile(exercise.stub_path, target)
            created.append(exercise.slug)
    return InitReport(root, created, kept)


def reset_exercise(root: Path, exercise: Exercise) -> Path | None:
    """Put the stub back. The learner's previous file is kept in ``.grind/backups``."""
    target = learner_file(root, exercise)
    backup = None
    if target.exists():
        backups = root / STATE_DIR / "backups"
        backups.mkdir(parents=True, exist_ok=True)
        backup = backups / f"{exercise.slug}-{time.strftime('%Y%m%d-%H%M%S')}.py"
        shutil.copyfile(target, backup)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(exercise.stub_path, target)
    return backup


def state_path(root: Path | None) -> Path:
    """The workspace's state file, or a per-user one when there is no workspace."""
    if root is not None:
        return root / STATE_DIR / "state.json"
    env = os.environ.get("GRIND_STATE_DIR")
    if env:
        return Path(env) / "state.json"
    import platformdirs

    return Path(platformdirs.user_state_dir("grind", appauthor=False)) / "state.json"


class State:
    """Hints shown and passes, per exercise. Small, JSON, written atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            self.data: dict[str, Any] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self.data = {}

    def _slot(self, slug: str) -> dict[str, Any]:
        exercises = self.data.setdefault("exercises", {})
        slot = exercises.setdefault(slug, {})
        return slot if isinstance(slot, dict) else {}

    def hints_shown(self, slug: str) -> int:
        return int(self._slot(slug).get("hints_shown", 0))

    def passed(self, slug: str) -> bool:
        return bool(self._slot(slug).get("passed_at"))

    def status(self, slug: str) -> str:
        slot = self._slot(slug)
        if slot.get("passed_at"):
            return "passed"
        return "attempted" if slot.get("attempts") else "new"

    def record_hint(self, slug: str) -> None:
        self._slot(slug)["hints_shown"] = self.hints_shown(slug) + 1
        self.save()

    def record_attempt(self, slug: str, passed: bool) -> None:
        slot = self._slot(slug)
        slot["attempts"] = int(slot.get("attempts", 0)) + 1
        if passed and not slot.get("passed_at"):
            slot["passed_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".state-", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(self.data, handle, indent=1)
        os.replace(tmp, self.path)
