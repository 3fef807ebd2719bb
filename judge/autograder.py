"""``grind autograder build``: a ready-to-upload Gradescope bundle per exercise.

Gradescope runs one container per submission: ``setup.sh`` once when the image is built, then
``run_autograder`` per submission, which must leave ``$ROOT/results/results.json`` (``ROOT`` is
``$GRIND_AUTOGRADER_ROOT``, ``/autograder`` by default). Ours grades the submission with this
module (the core only: no typer, rich or other CLI dependency is installed) and always writes that
file, even when grading crashed, so a student never sees a blank result.

The bundle is *sealed*: it carries grind's source (run from ``source/grind`` on ``PYTHONPATH``,
never pip-built, so no hatchling), the exercise, its checks and the author kit, and the reference's
and pitfalls' observations computed at build time in grind's cache format (every pair of pitfalls
the exercise combines too). The reference, the pitfalls and the oracle are not in it at all: a
submission that finds its way out of its sandbox finds no answer to run (issue 34: one that ran
``source/grind/solutions/clipping/reference.py`` scored full marks at ``limits-only``). The shipped
entry is read under the key it was built with (``solutions/<slug>/sealed.json``), so nothing is ever
recomputed in the container; ``run_autograder`` makes the cache unreadable to ``nobody`` (the child's
user as root) before grading, and says which isolation level ran, in the log and in results.json.
A weak level is refused unless the bundle was built with ``--allow-weak-isolation``.

``setup.sh`` installs exactly the versions validated at build time (``constraints.txt``: this
machine's versions of the whole dependency closure), torch from its CPU index, after checking the
image's Python and installing bubblewrap with apt; with ``--wheelhouse`` it installs offline.
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
from typing import Any

import judge
from judge.version import __version__
from judge.catalog import SEALED
from judge.errors import JudgeError, UsageError
from judge.kit import FOLDER, kit_dir
from judge.models import Exercise

# Installed by the CLI only; grading never imports them.
CLI_ONLY = {"typer", "rich", "fsrs", "plotext", "watchfiles", "hatchling"}
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
APT_PACKAGES = ("bubblewrap", "python3-venv")  # the strongest sandbox; Ubuntu's python3 has no ensurepip without venv
SETTINGS = "bundle.json"  # beside judge/ in the bundle: how it was built, and what the instructor allowed
MIN_PYTHON = (3, 10)

SETUP = """#!/usr/bin/env bash
# Runs once when Gradescope builds the image.
set -euo pipefail
ROOT="${{GRIND_AUTOGRADER_ROOT:-${{AUTOGRADER_ROOT:-/autograder}}}}"
SRC="$ROOT/source"
PYTHON="${{GRIND_SETUP_PYTHON:-python3}}"
# torch as on the machine that built this bundle (rebuild with --torch-version X.Y.Z to change it);
# every other package is pinned in constraints.txt to the versions this bundle was validated with.
TORCH_VERSION="{torch}"
# The exact torch installed: with a local tag such as +cpu (as on the machine that built this
# bundle) it exists only on the CPU index, so pypi (searched too, for torch's own pinned
# dependencies, which the CPU index mirrors only in part) can never hand out the CUDA build instead.
TORCH_PIN="${{TORCH_PIN:-{torch_pin}}}"
# CPU wheels: the default index's Linux torch is the CUDA build, gigabytes Gradescope cannot use
# (rebuild with --torch-index-url, or set TORCH_INDEX_URL here, for a mirror).
TORCH_INDEX_URL="${{TORCH_INDEX_URL:-{torch_index}}}"

# 1. System packages: bubblewrap (the strongest isolation level) and python3-venv.
if [ "${{GRIND_SKIP_APT:-0}}" = 1 ]; then
    echo "grind setup: GRIND_SKIP_APT=1: not installing {apt}"
elif command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends {apt} \
        || echo "grind setup: WARNING: apt-get could not install {apt}; run_autograder says which isolation it gets" >&2
else
    echo "grind setup: WARNING: no apt-get as root here: install {apt} yourself" >&2
fi

# 2. A Python grind runs on.
"$PYTHON" - <<'PY' || exit 1
import sys
if sys.version_info < {min_python}:
    sys.exit("grind setup: grind needs Python >= {min_text}, but this image's " + sys.executable + " is "
             + sys.version.split()[0] + ". Choose a newer Gradescope base image (Ubuntu 22.04 has 3.10), "
             "or set GRIND_SETUP_PYTHON to a newer python3.")
if sys.version_info[:2] != {built_python}:
    # constraints.txt pins the build machine's versions, resolved for its Python: several need it
    # (numpy 2.4 needs >= 3.11), so another minor fails in step 3 with pip's long resolver error.
    sys.exit("grind setup: this bundle was pinned on Python {built_text} (constraints.txt holds that Python's "
             "package versions), but this image's " + sys.executable + " is " + sys.version.split()[0]
             + ". Build the bundle with this image's Python (run 'grind autograder build' under Python "
             + "%d.%d" % sys.version_info[:2] + "), or choose a Gradescope base image whose Python is {built_text} "
             "(or set GRIND_SETUP_PYTHON to a python{built_text} in this image).")
PY

# 3. The packages grading needs, at the versions validated at build time.
"$PYTHON" -m venv "$ROOT/venv"
PIP=("$ROOT/venv/bin/python" -m pip install --disable-pip-version-check -c "$SRC/constraints.txt")
if [ -d "$SRC/wheels" ]; then
    # Offline: only the wheels shipped in the bundle (built with --wheelhouse).
    "${{PIP[@]}}" --no-index --find-links "$SRC/wheels" -r "$SRC/requirements.txt"
else
    if [ "$TORCH_PIN" != "$TORCH_VERSION" ]; then
        "${{PIP[@]}}" --index-url "$TORCH_INDEX_URL" --extra-index-url https://pypi.org/simple "torch==$TORCH_PIN"
    else  # no local tag to tell the CPU build apart: its index alone
        "${{PIP[@]}}" --index-url "$TORCH_INDEX_URL" "torch==$TORCH_PIN"
    fi
    "${{PIP[@]}}" -r "$SRC/requirements.txt"
fi

# 4. Check the shipped reference observations load in this image, and say which isolation it has.
if [ "${{GRIND_SETUP_SKIP_CHECK:-0}}" = 1 ]; then
    echo "grind setup: GRIND_SETUP_SKIP_CHECK=1: the shipped reference was NOT checked in this image"
else
    PYTHONPATH="$SRC/grind" GRIND_CONTENT="$SRC/grind" GRIND_CACHE_DIR="$SRC/grind/cache" \
        "$ROOT/venv/bin/python" -m judge.autograder warm {slug}
fi
"""

RUN = """#!/usr/bin/env bash
# Runs once per submission. Always writes results.json, even if grading crashes.
set -u
ROOT="${{GRIND_AUTOGRADER_ROOT:-${{AUTOGRADER_ROOT:-/autograder}}}}"
PYTHON="${{GRIND_PYTHON:-$ROOT/venv/bin/python}}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
work="$(mktemp -d)"
cd "$work"  # python -m puts the working folder first on sys.path: never import a stray judge/ from it
# grind's own source and exercise, as shipped; the reference's observations come from the shipped
# cache (the bundle holds no reference). As root the submission runs as nobody: the cache and the
# checks are made unreadable to it, and the code the child runs readable.
chmod -R go-rwx "$ROOT/source/grind/cache" "$ROOT/source/grind/solutions" 2>/dev/null || true
chmod -R go+rX "$ROOT/source/grind/judge" 2>/dev/null || true
chmod o+x "$ROOT" "$ROOT/source" "$ROOT/source/grind" 2>/dev/null || true  # nobody reaches the runner, lists nothing
export PYTHONPATH="$ROOT/source/grind" GRIND_CONTENT="$ROOT/source/grind" GRIND_CACHE_DIR="$ROOT/source/grind/cache"
export GRIND_STATE_DIR="$work/state"
# The isolation level is checked (a weak one refused unless the bundle allows it), logged and
# written into results.json's output by the grader itself.
# Only a results.json the grader wrote and then exited 0 after is trusted: one left from before, or
# written by anything else while a grader died or failed, is replaced by a crash result.
rm -f "$RESULTS"
"$PYTHON" -m judge.autograder grade {slug} "$ROOT/submission" "$RESULTS" "$work" > "$work/log" 2>&1
status=$?
if [ "$status" != 0 ] || [ ! -s "$RESULTS" ]; then
    echo "grind: the grader exited with status $status; results.json is a crash result" >> "$work/log"
    rm -f "$RESULTS"
    "$PYTHON" - "$work/log" "$RESULTS" "$status" "$ROOT/source/grind/bundle.json" <<'PY' \
        || {{ printf '%s' '{{"score": 0, "max_score": {max_score}, "output": "The autograder crashed."}}' > "$RESULTS.tmp" \
              && mv -f "$RESULTS.tmp" "$RESULTS"; }}
import json, os, sys
with open(sys.argv[1], encoding="utf-8", errors="replace") as handle:
    log = handle.read()[-3000:]
try:
    with open(sys.argv[4], encoding="utf-8") as handle:
        max_score = json.load(handle)["max_score"]
except (OSError, ValueError, KeyError):
    max_score = {max_score}
with open(sys.argv[2] + ".tmp", "w", encoding="utf-8") as handle:
    json.dump({{"score": 0, "max_score": max_score,
               "output": "The autograder could not grade this submission (the grader exited with status "
                         + sys.argv[3] + "):\\n" + log}}, handle)
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


def torch_pin(torch: str, torch_index_url: str) -> str:
    """What setup.sh installs torch as: ``2.13.0+cpu`` when this machine's torch is that same
    version with the ``+cpu`` tag and the index is PyTorch's CPU one (the tag exists there only,
    so setup.sh may add pypi for torch's dependencies without risking the CUDA build); otherwise
    the plain version, from the torch index alone."""
    installed = _installed("torch") or ""
    if torch_index_url == TORCH_CPU_INDEX and installed == f"{torch}+cpu":
        return installed
    return torch


def build_torch_version() -> str:
    """The installed torch's version (from its metadata: no import), without a local build tag
    such as ``+cpu``, which no index serves under the plain name."""
    try:
        return metadata.version("torch").split("+")[0]
    except metadata.PackageNotFoundError:
        return "2.13.0"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def pinned_closure(roots: list[str]) -> dict[str, str]:
    """This machine's installed version of every package ``roots`` need, transitively (extras
    left out): the versions the bundle is validated with, for setup.sh's constraints file. A
    requirement whose marker excludes this machine (tomli on 3.11+) is simply not installed here,
    so it is not pinned either; a constraint only bounds what gets installed, never adds it."""
    found: dict[str, str] = {}
    todo = [_requirement_name(r) for r in roots]
    while todo:
        name = _normalized(todo.pop())
        if name in found:
            continue
        version = _installed(name)
        if version is None:
            continue
        found[name] = version.split("+")[0]  # a local tag (+cpu) names no wheel on another index
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:  # pragma: no cover - found a line above
            requires = []
        todo += [_requirement_name(r) for r in requires if "extra ==" not in r]
    return found


def constraints_text(torch_version: str) -> str:
    """``name==version`` for grading's whole dependency closure, torch at ``torch_version``.
    When that is not this machine's torch, torch's own dependencies are left unpinned: this
    machine's versions were resolved for another torch."""
    ours = pinned_closure(grader_dependencies())
    torch = build_torch_version()
    if torch_version == torch:
        ours.update(pinned_closure(["torch"]))
    ours["torch"] = torch_version
    lines = [f"# Pinned by 'grind autograder build' (grind {__version__}, Python {sys.version.split()[0]}): "
             "the versions this bundle was validated with."]
    return "\n".join(lines + [f"{name}=={version}" for name, version in sorted(ours.items())]) + "\n"


_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")


def wheel_fits(py: str, abi: str, plat: str, version: tuple[int, int] | None = None) -> bool:
    """Whether a wheel's tags (PEP 425; each part may list several, joined by dots) install on
    the bundle's Python (this one: setup.sh refuses another minor) on Gradescope's Linux x86_64:
    a plain filename check, so a build on macOS still judges wheels for Linux."""
    major, minor = version or sys.version_info[:2]
    pys, abis = py.split("."), abi.split(".")
    exact = bool({f"cp{major}{minor}", f"py{major}{minor}", f"py{major}"} & set(pys)) and \
        bool({f"cp{major}{minor}", "none"} & set(abis))
    # cp38-abi3: CPython 3.8 and every later 3.x
    stable = "abi3" in abis and any(re.fullmatch(rf"cp{major}(\d+)", p) and int(p[len(str(major)) + 2:]) <= minor
                                    for p in pys)
    if not (exact or stable):
        return False
    return any(p == "any" or p == "linux_x86_64" or (p.startswith(("manylinux", "musllinux")) and p.endswith("_x86_64"))
               for p in plat.split("."))


def wheelhouse_problems(folder: Path, constraints: str, requirements: list[str]) -> list[str]:
    """What an offline install from ``folder`` would lack: a wheel of each package setup.sh
    installs, at the pinned version. Transitive ones, and those behind a marker (tomli, for a
    Python older than this one), are pip's to find at image-build time, where it fails loudly."""
    pins = dict(line.split("==", 1) for line in constraints.splitlines() if "==" in line and not line.startswith("#"))
    have: dict[str, set[str]] = {}
    problems = []
    for wheel in sorted(folder.glob("*.whl")):
        match = _WHEEL.match(wheel.name)
        if not match:
            continue
        if not wheel_fits(match["py"], match["abi"], match["plat"]):
            # Filled on another machine (a Mac, another Python): setup.sh's pip would skip it.
            problems.append(f"{wheel.name} does not fit Python {'.'.join(map(str, sys.version_info[:2]))} on "
                            "Linux x86_64 (the bundle's)")
            continue
        have.setdefault(_normalized(match["name"]), set()).add(match["version"].split("+")[0])
    for requirement in requirements:
        if ";" in requirement:
            continue
        name = _normalized(_requirement_name(requirement))
        want = pins.get(name)
        if name not in have:
            problems.append(f"no wheel of {name}" + (f" {want}" if want else ""))
        elif want and want not in have[name]:
            problems.append(f"{name} {want} is pinned, the wheelhouse has {', '.join(sorted(have[name]))}")
    return problems


def _executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _precompute(exercise: Exercise, content: Path) -> tuple[str, float]:
    """Compute the reference's and pitfalls' observations into ``content/cache`` (grind's cache
    format), from the bundle's full copy of the exercise before it is sealed, and every pair of
    pitfalls the exercise combines (naming a submission that makes two mistakes needs them, and
    the sealed bundle has no pitfalls to run them from). Returns the key they are stored under
    and the exercise's full marks (a refusal or a crash result states them too)."""
    from judge import cache
    from judge.catalog import Catalog
    from judge.formats import points
    from judge.trusted import case_names, pair_source, reference_for

    cache_dir = content / "cache"
    previous = os.environ.get("GRIND_CACHE_DIR")
    os.environ["GRIND_CACHE_DIR"] = str(cache_dir)
    try:
        copy = Catalog(content).get(exercise.slug)
        ref = reference_for(copy)
        slugs = [p.slug for p in ref.pitfalls]
        pairs = [f"{a}+{b}" for i, a in enumerate(slugs) for b in slugs[i + 1:]]
        if pairs:
            pair_source(copy)(pairs)
        weights = dict(copy.weights)
        total = sum(float(weights.get(case, 1.0)) for case in case_names(copy))
        return cache.exercise_key(copy), points(total)
    finally:
        if previous is None:
            os.environ.pop("GRIND_CACHE_DIR", None)
        else:
            os.environ["GRIND_CACHE_DIR"] = previous


def _seal(solution: Path, key: str) -> None:
    """Keep only what grading runs (checks.py); the reference, the pitfalls and the oracle leave
    the bundle, and ``sealed.json`` says which shipped entry stands for them."""
    for path in solution.iterdir():
        if path.name != "checks.py":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    (solution / SEALED).write_text(json.dumps({"key": key}) + "\n", encoding="utf-8")


def build(exercise: Exercise, out_dir: Path, torch_version: str | None = None, *,
          torch_index_url: str = TORCH_CPU_INDEX, wheelhouse: Path | None = None,
          allow_weak_isolation: bool = False) -> Path:
    """Write ``<slug>-autograder.zip`` (and the folder it was made from) into ``out_dir``."""
    torch = torch_version or build_torch_version()
    requirements = [f"torch=={torch}"] + grader_dependencies()
    constraints = constraints_text(torch)
    if wheelhouse is not None:
        if not wheelhouse.is_dir():
            raise UsageError(f"--wheelhouse {wheelhouse}: no such folder")
        missing = wheelhouse_problems(wheelhouse, constraints, requirements)
        if missing:
            raise JudgeError(f"--wheelhouse {wheelhouse} cannot install offline: {'; '.join(missing)}. Fill it with: "
                             "pip download -d DIR -r requirements.txt -c constraints.txt --only-binary=:all: "
                             f"--index-url {torch_index_url} --extra-index-url https://pypi.org/simple "
                             "(both files are written into the bundle folder by a build without --wheelhouse: "
                             f"'grind autograder build {exercise.slug} --out DIR' first)")
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
    key, max_score = _precompute(exercise, source)
    _seal(source / "solutions" / exercise.slug, key)
    settings = {"exercise": exercise.slug, "allow_weak_isolation": allow_weak_isolation, "max_score": max_score,
                "built_with": {"grind": __version__, "python": sys.version.split()[0], "torch": torch},
                # constraints.txt is resolved for this Python: setup.sh refuses another minor
                "python": ".".join(map(str, sys.version_info[:2]))}
    (source / SETTINGS).write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    (folder / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    (folder / "constraints.txt").write_text(constraints, encoding="utf-8")
    if wheelhouse is not None:
        (folder / "wheels").mkdir()
        for wheel in sorted(wheelhouse.glob("*.whl")):
            shutil.copyfile(wheel, folder / "wheels" / wheel.name)
    major, minor = sys.version_info[:2]
    _executable(folder / "setup.sh", SETUP.format(
        torch=torch, torch_pin=torch_pin(torch, torch_index_url), torch_index=torch_index_url, slug=exercise.slug, apt=" ".join(APT_PACKAGES),
        min_python=MIN_PYTHON, min_text=".".join(map(str, MIN_PYTHON)), built_python=(major, minor),
        built_text=f"{major}.{minor}"))
    _executable(folder / "run_autograder", RUN.format(slug=exercise.slug, max_score=max_score))
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


def bundle_settings() -> dict[str, Any]:
    """The settings ``build`` wrote beside judge/ (none outside a bundle: nothing allowed)."""
    from judge.catalog import content_root

    try:
        settings: dict[str, Any] = json.loads((content_root() / SETTINGS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return settings


def isolation_line() -> tuple[str, bool]:
    """Which isolation grades here, as one line for the log and results.json, and whether it is weak."""
    from judge.worker.isolation import doctor

    found = doctor()
    line = f"isolation: {found['level']} ({' + '.join(found['layers'])}; the submission runs as {found['child_user']})"
    return line, not found["grading_allowed"]


STUDENT_REFUSAL = ("This submission was not graded: the autograder's image does not keep submissions apart from "
                   "the grading safely enough, so it refused to grade any. This is not about your code; please tell "
                   "your instructor (the reason and the fix are in the autograder's log).")


def refusal(weak: bool, other_user: bool, allowed: bool) -> str | None:
    """Why a bundle must not grade here, for the instructor, or None. A weak level (no sandbox)
    is refused unless the bundle was built with ``--allow-weak-isolation``, and even then unless
    the submission runs as another user than the grader: as the grader's own user (root on
    Gradescope, keeping every capability at limits-only) it reads the shipped reference
    observations and replays them, or writes its own results.json and kills the grader
    (red-team review 2: both gave full marks). The override never reaches that case."""
    if not weak:
        return None
    if not allowed:
        return ("At this level a submission can read and write what grading does; a bundle built with "
                "'grind autograder build --allow-weak-isolation' accepts it, but only where submissions run as "
                "another user (nobody).")
    if not other_user:
        return ("The bundle allows weak isolation (--allow-weak-isolation), but only where the submission runs as "
                "another user than the grader (nobody, which needs a Python every user can read, such as the "
                "image's /usr/bin/python3): here it would run as the grader's own user, able to read the shipped "
                "reference observations and to write its own results.json.")
    return None


def grade_one(slug: str, submission: Path, results: Path, work: Path) -> None:
    """Grade the one submission folder and write Gradescope's results.json atomically. The
    isolation level is said in the log and in results.json's output; a weak level is refused
    (results.json says why, for the instructor) unless the bundle was built to allow it."""
    from judge.batch import grade_class
    from judge.catalog import Catalog
    from judge.formats import to_gradescope, write_atomic
    from judge.worker.isolation import how_to_strengthen, isolation

    exercise = Catalog().get(slug)
    print(f"grind {__version__} from {Path(judge.__file__).parent}", flush=True)
    print(reference_status(exercise), flush=True)
    level, weak = isolation_line()
    print(level, flush=True)
    results.parent.mkdir(parents=True, exist_ok=True)
    why = refusal(weak, isolation().drop_to is not None, bool(bundle_settings().get("allow_weak_isolation")))
    if why:
        message = (f"The autograder refused to grade: {level}. {why} Fix the image: "
                   f"{how_to_strengthen(isolation().level)}.")
        print(message, flush=True)  # the log: Gradescope shows it to instructors only
        write_atomic(results, json.dumps({"score": 0, "max_score": bundle_settings().get("max_score", 0),
                                          "output": STUDENT_REFUSAL + f"\n\n{level}"}))
        return
    classroom = work / "class"
    # symlinks=True: a link in the upload stays a link (which grading refuses, naming it), never
    # a copy of what it points at.
    shutil.copytree(submission, classroom / "submission", symlinks=True, dirs_exist_ok=True)
    rows = grade_class(exercise, classroom, work / "out", jobs=1)
    graded = to_gradescope(rows[0])
    graded["output"] = f"{graded.get('output', '')}\n\nGraded by grind {__version__}, {level}".lstrip()
    write_atomic(results, json.dumps(graded))
    print(f"graded: {rows[0]['verdict']['status']}", flush=True)


def warm(slug: str) -> int:
    """setup.sh's last step: the shipped observations load in this image (a sealed bundle never
    computes them), and the isolation level this image gives, so the instructor sees it once."""
    from judge.catalog import Catalog
    from judge.trusted import reference_for

    exercise = Catalog().get(slug)
    print(reference_status(exercise), flush=True)
    reference_for(exercise)
    level, weak = isolation_line()
    print(level, flush=True)
    if weak:
        from judge.worker.isolation import isolation

        why = refusal(weak, isolation().drop_to is not None, bool(bundle_settings().get("allow_weak_isolation")))
        print("grind setup: WARNING: this isolation is weak; run_autograder will "
              + (f"refuse to grade. {why}" if why else "grade anyway (built with --allow-weak-isolation; "
                 "submissions run as nobody)"), flush=True)
    return 0


def main(argv: list[str]) -> int:
    """``python -m judge.autograder grade SLUG SUBMISSION RESULTS WORK`` or ``warm SLUG``:
    the bundle's entry points, free of the CLI's dependencies."""
    if len(argv) == 2 and argv[0] == "warm":
        try:
            return warm(argv[1])
        except JudgeError as exc:
            print(f"grind setup: {exc.message}", file=sys.stderr)
            return 1
    if len(argv) == 5 and argv[0] == "grade":
        grade_one(argv[1], Path(argv[2]), Path(argv[3]), Path(argv[4]) if argv[4] else Path(tempfile.mkdtemp()))
        return 0
    print("usage: python -m judge.autograder grade SLUG SUBMISSION RESULTS WORK | warm SLUG", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
