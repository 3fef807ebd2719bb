"""On-disk cache of the reference's and pitfalls' observations.

They are deterministic, so computing them once per (exercise files, torch, judge) saves a whole
torch start on every later ``grind run``. Writes go to a private temp folder that is renamed into
place, so a reader sees either nothing or a complete entry, and two concurrent writers cannot
interleave: the second rename fails and its copy is discarded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import judge
from judge.models import Exercise
from judge.worker.sandbox import RUNNER

if TYPE_CHECKING:
    import numpy as np

RESULT = "result.json"
OBSERVATIONS = "observations.safetensors"


def cache_root() -> Path:
    env = os.environ.get("GRIND_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("grind", appauthor=False))


def torch_version() -> str:
    """Read from the installed metadata: importing torch here would cost a second."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "absent"


def _folder_files(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(".pyc")
    )


def exercise_key(exercise: Exercise, extra: str = "") -> str:
    """Hash of everything that can change the observations."""
    digest = hashlib.sha256()
    for part in (judge.__version__, torch_version(), sys.version.split()[0], extra):
        digest.update(part.encode() + b"\0")
    digest.update(RUNNER.read_bytes())
    for folder in (exercise.exercise_dir, exercise.solution_dir):
        for path in _folder_files(folder):
            digest.update(str(path.relative_to(folder)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def has(slug: str, key: str) -> bool:
    """Cheap: is there an entry (not yet checked) for this key?"""
    return (cache_root() / f"{slug}-{key}" / RESULT).is_file()


def load(slug: str, key: str) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    entry = cache_root() / f"{slug}-{key}"
    try:
        result = json.loads((entry / RESULT).read_text(encoding="utf-8"))
        raw = (entry / OBSERVATIONS).read_bytes()
        if hashlib.sha256(raw).hexdigest() != result.get("observations_sha256"):
            raise ValueError("corrupt entry")
        from safetensors.numpy import load

        return result, load(raw)
    except (OSError, ValueError, KeyError, AttributeError):
        return None


def store(slug: str, key: str, result: dict[str, Any], observations: dict[str, np.ndarray]) -> None:
    """Atomically publish one entry. Losing a race is fine: the winner's entry is identical."""
    from safetensors.numpy import save

    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{slug}-{key}"
    raw = save(observations)
    result = dict(result, observations_sha256=hashlib.sha256(raw).hexdigest())
    result.pop("token", None)
    tmp = Path(tempfile.mkdtemp(prefix=f".{slug}-", dir=root))
    try:
        (tmp / OBSERVATIONS).write_bytes(raw)
        (tmp / RESULT).write_text(json.dumps(result), encoding="utf-8")
        for name in (OBSERVATIONS, RESULT):
            with open(tmp / name, "rb") as handle:
                os.fsync(handle.fileno())
        if final.exists() and load(slug, key) is None:
            shutil.rmtree(final, ignore_errors=True)  # a broken entry from a crash: replace it
        try:
            os.rename(tmp, final)
        except OSError:
            pass  # another grind published the same entry first
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def clear() -> int:
    """Remove every cached entry; return how many there were."""
    root = cache_root()
    if not root.is_dir():
        return 0
    entries = [p for p in root.iterdir() if p.is_dir()]
    for entry in entries:
        shutil.rmtree(entry, ignore_errors=True)
    return len([e for e in entries if not e.name.startswith(".")])
