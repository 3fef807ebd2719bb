"""``grind autograder build``: a ready-to-upload Gradescope bundle per exercise.

Gradescope runs one container per submission: ``setup.sh`` once when the image is built, then
``run_autograder`` per submission, which must leave ``$ROOT/results/results.json`` (``ROOT`` is
``$GRIND_AUTOGRADER_ROOT``, ``/autograder`` by default). Ours grades the submission with this
module (the core only: no typer, rich or other CLI dependency is installed) and always writes that
file, even when grading crashed, so a student never sees a blank result.

The bundle carries grind's source (run from ``source/grind`` on ``PYTHONPATH``, never pip-built, so
no hatchling), the exercise, and the reference observations computed at build time in grind's
cache format, so no submission recomputes the reference. ``setup.sh`` pins torch to the version the
bundle was built with (one line, ``TORCH_VERSION=``) and warms the cache once more in the image, in
case the image's Python or torch build makes the shipped entry miss.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

import judge
from judge.kit import FOLDER, kit_dir
from judge.models import Exercise

# Installed by the CLI only; grading never imports them.
CLI_ONLY = {"typer", "rich", "fsrs", "plotext", "watchfiles", "hatchling"}

SETUP = """#!/usr/bin/env bash
# Runs once when Gradescope builds the image. Uses the image's own python3: no system packages.
set -euo pipefail
ROOT="${{GRIND_AUTOGRADER_ROOT:-${{AUTOGRADER_ROOT:-/autograder}}}}"
# torch as on the machine that built this bundle. To change it, edit this one line (or rebuild
# with 'grind autograder build --torch-version X.Y.Z').
TORCH_VERSION="{torch}"
python3 -m venv "$ROOT/venv"
# Set PIP_INDEX_URL / PIP_EXTRA_INDEX_URL in the environment to use a mirror or the CPU wheels.
"$ROOT/venv/bin/pip" install "torch==$TORCH_VERSION" {dependencies}
# The reference observations ship in source/grind/cache; this only recomputes them if the image's
# python or torch build differs from the build machine's (once here, never per submission).
PYTHONPATH="$ROOT/source/grind" GRIND_CONTENT="$ROOT/source/grind" GRIND_CACHE_DIR="$ROOT/source/grind/cache" \\
    "$ROOT/venv/bin/python" -m judge.autograder warm {slug}
"""

RUN = """#!/usr/bin/env bash
# Runs once per submission. Always writes results.json, even if grading crashes.
set -u
ROOT="${{GRIND_AUTOGRADER_ROOT:-${{AUTOGRADER_ROOT:-/autograder}}}}"
PYTHON="${{GRIND_PYTHON:-$ROOT/venv/bin/python}}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
work="$(mktemp -d)"
# grind's own source and exercise, as shipped; the reference comes from the shipped cache.
export PYTHONPATH="$ROOT/source/grind" GRIND_CONTENT="$ROOT/source/grind" GRIND_CACHE_DIR="$ROOT/source/grind/cache"
export GRIND_STATE_DIR="$work/state"
# Gradescope grades each submission alone in a fresh container, so a class folder of one and a
# container that is thrown away make weak isolation acceptable here (grind doctor explains).
"$PYTHON" -m judge.autograder grade {slug} "$ROOT/submission" "$RESULTS" "$work" > "$work/log" 2>&1
if [ ! -s "$RESULTS" ]; then
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
cat "$work/log"  # Gradescope shows the autograder's stdout to instructors only
rm -rf "$work"
exit 0
"""


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s;<>=!~\[(]", requirement.strip(), maxsplit=1)[0].lower()


def grader_dependencies() -> list[str]:
    """What grading needs: the installed grind's runtime requirements without the CLI-only ones
    and without torch (pinned separately), so the bundle never drifts from grind's own."""
    try:
        found = [r for r in (metadata.requires("grind") or []) if "extra ==" not in r]
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        found = ["numpy>=1.24", "safetensors>=0.4", "platformdirs>=3", "tomli>=2; python_version < '3.11'"]
    return [r for r in found if _requirement_name(r) not in CLI_ONLY | {"torch"}]


def build_torch_version() -> str:
    """The installed torch's version (from its metadata: no import), without a local build tag
    such as ``+cpu``, which no index serves under the plain name."""
    try:
        return metadata.version("torch").split("+")[0]
    except metadata.PackageNotFoundError:
        return "2.13.0"


def _quote(requirement: str) -> str:
    return "'" + requirement.replace("'", "'\"'\"'") + "'"


def _executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _precompute(exercise: Exercise, cache_dir: Path) -> None:
    """Compute the reference observations into ``cache_dir`` (grind's cache format) exactly as a
    grader will look them up: the bundle's copy of the exercise, the same key."""
    from judge.catalog import Catalog
    from judge.grade import reference_for

    previous = os.environ.get("GRIND_CACHE_DIR")
    os.environ["GRIND_CACHE_DIR"] = str(cache_dir)
    try:
        reference_for(Catalog(cache_dir.parent).get(exercise.slug))
    finally:
        if previous is None:
            os.environ.pop("GRIND_CACHE_DIR", None)
        else:
            os.environ["GRIND_CACHE_DIR"] = previous


def build(exercise: Exercise, out_dir: Path, torch_version: str | None = None) -> Path:
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
    _precompute(exercise, source / "cache")
    dependencies = " ".join(_quote(r) for r in grader_dependencies())
    _executable(folder / "setup.sh", SETUP.format(torch=torch_version or build_torch_version(),
                                                  dependencies=dependencies, slug=exercise.slug))
    _executable(folder / "run_autograder", RUN.format(slug=exercise.slug))
    archive = out_dir / f"{exercise.slug}-autograder.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                info = zipfile.ZipInfo(str(path.relative_to(folder)))
                info.external_attr = (path.stat().st_mode & 0o777) << 16
                zf.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
    return archive


def reference_status(exercise: Exercise) -> str:
    from judge import cache

    key = cache.exercise_key(exercise)
    return f"reference: {'cache hit' if cache.has(exercise.slug, key) else 'not cached, computing'} ({key})"


def grade_one(slug: str, submission: Path, results: Path, work: Path) -> None:
    """Grade the one submission folder and write Gradescope's results.json atomically."""
    from judge.batch import grade_class
    from judge.catalog import Catalog
    from judge.formats import to_gradescope, write_atomic

    exercise = Catalog().get(slug)
    print(f"grind {judge.__version__} from {Path(judge.__file__).parent}", flush=True)
    print(reference_status(exercise), flush=True)
    classroom = work / "class"
    # symlinks=True: a link in the upload stays a link (which grading refuses, naming it), never
    # a copy of what it points at: in the container that could be the bundle's own reference.
    shutil.copytree(submission, classroom / "submission", symlinks=True, dirs_exist_ok=True)
    rows = grade_class(exercise, classroom, work / "out", jobs=1)
    results.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(results, json.dumps(to_gradescope(rows[0])))
    print(f"graded: {rows[0]['verdict']['status']}", flush=True)


def main(argv: list[str]) -> int:
    """``python -m judge.autograder grade SLUG SUBMISSION RESULTS WORK`` or ``warm SLUG``:
    the bundle's entry points, free of the CLI's dependencies."""
    from judge.catalog import Catalog
    from judge.grade import reference_for

    if len(argv) == 2 and argv[0] == "warm":
        exercise = Catalog().get(argv[1])
        print(reference_status(exercise), flush=True)
        reference_for(exercise)
        return 0
    if len(argv) == 5 and argv[0] == "grade":
        grade_one(argv[1], Path(argv[2]), Path(argv[3]), Path(argv[4]) if argv[4] else Path(tempfile.mkdtemp()))
        return 0
    print("usage: python -m judge.autograder grade SLUG SUBMISSION RESULTS WORK | warm SLUG", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
