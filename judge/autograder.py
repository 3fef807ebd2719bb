"""``grind autograder build``: a ready-to-upload Gradescope bundle per exercise.

Gradescope runs one container per submission: ``setup.sh`` once when the image is built, then
``run_autograder`` per submission, which must leave ``/autograder/results/results.json``. Ours
calls ``grind grade`` on the submission and always writes that file, even when grading crashed,
so a student never sees a blank result.
"""

from __future__ import annotations

import json
import shutil
import stat
import zipfile
from importlib import metadata
from pathlib import Path

import judge
from judge.kit import FOLDER, kit_dir
from judge.models import Exercise

SETUP = """#!/usr/bin/env bash
# Runs once when Gradescope builds the image.
set -euo pipefail
apt-get update
apt-get install -y python3 python3-pip python3-venv bubblewrap
python3 -m venv /autograder/venv
# The CPU build of torch: the graders have no GPU, and the CUDA build is several GB.
/autograder/venv/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu
/autograder/venv/bin/pip install /autograder/source/grind
"""

RUN = """#!/usr/bin/env bash
# Runs once per submission. Always writes results.json, even if grading crashes.
set -u
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{GRIND_PYTHON:-$ROOT/venv/bin/python}}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
work="$(mktemp -d)"
mkdir -p "$work/class/submission"
cp -r "$ROOT/submission/." "$work/class/submission/" 2>/dev/null || true
# Gradescope grades each submission alone in a fresh container, so a class folder of one and a
# container that is thrown away make weak isolation acceptable here (grind doctor explains).
"$PYTHON" -m judge grade "$work/class" --exercise {slug} --format gradescope --out "$work/out" --jobs 1 \\
    --allow-weak-isolation > "$work/log" 2>&1
# results.json is written beside itself and renamed into place: never seen half-written.
if [ -s "$work/out/gradescope/submission/results.json" ]; then
    cp "$work/out/gradescope/submission/results.json" "$RESULTS.tmp" && mv -f "$RESULTS.tmp" "$RESULTS"
else
    "$PYTHON" - "$work/log" "$RESULTS" <<'PY' \\
        || {{ printf '%s' '{{"score": 0, "output": "The autograder crashed."}}' > "$RESULTS.tmp" \\
              && mv -f "$RESULTS.tmp" "$RESULTS"; }}
import json, os, sys
with open(sys.argv[1], encoding="utf-8", errors="replace") as handle:
    log = handle.read()[-3000:]
with open(sys.argv[2] + ".tmp", "w", encoding="utf-8") as handle:
    json.dump({{"score": 0, "output": "The autograder could not grade this submission:\\n" + log}}, handle)
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
PY
fi
rm -rf "$work"
exit 0
"""

PYPROJECT = """[build-system]
requires = ["hatchling>=1.18"]
build-backend = "hatchling.build"

[project]
name = "grind"
version = "{version}"
requires-python = ">=3.10"
dependencies = {dependencies}

[project.scripts]
grind = "judge.cli:main"

[tool.hatch.build.targets.wheel]
packages = ["judge"]

[tool.hatch.build.targets.wheel.force-include]
"exercises" = "judge/_content/exercises"
"solutions" = "judge/_content/solutions"
"""


def _dependencies() -> list[str]:
    """The installed grind's own runtime requirements, so the bundle never drifts from them."""
    try:
        return [r for r in (metadata.requires("grind") or []) if "extra ==" not in r]
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return ["numpy>=1.24", "safetensors>=0.4", "rich>=13", "typer>=0.12", "platformdirs>=3", "torch>=2.1"]


def _executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def build(exercise: Exercise, out_dir: Path) -> Path:
    """Write ``<slug>-autograder.zip`` (and the folder it was made from) into ``out_dir``."""
    folder = out_dir / f"{exercise.slug}-autograder"
    if folder.exists():
        shutil.rmtree(folder)
    source = folder / "grind"
    package = Path(judge.__file__).parent
    shutil.copytree(package, source / "judge", ignore=shutil.ignore_patterns("__pycache__", "_content", "*.pyc"))
    shutil.copytree(exercise.exercise_dir, source / "exercises" / exercise.slug,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(exercise.solution_dir, source / "solutions" / exercise.slug,
                    ignore=shutil.ignore_patterns("__pycache__"))
    if kit_dir(exercise).is_dir():  # the checks import it (grind_kit)
        shutil.copytree(kit_dir(exercise), source / "solutions" / FOLDER, ignore=shutil.ignore_patterns("__pycache__"))
    (source / "pyproject.toml").write_text(
        PYPROJECT.format(version=judge.__version__, dependencies=json.dumps(_dependencies())), encoding="utf-8")
    _executable(folder / "setup.sh", SETUP)
    _executable(folder / "run_autograder", RUN.format(slug=exercise.slug))
    archive = out_dir / f"{exercise.slug}-autograder.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(str(path.relative_to(folder)))
                info.external_attr = (path.stat().st_mode & 0o777) << 16
                zf.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
    return archive
