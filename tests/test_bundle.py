"""The Gradescope bundle (issue 34, points 1 and 2): sealed against a submission that runs the
reference, honest about the isolation it ran under, and installable from pinned versions, offline.

Each bundle run lays out a simulated Gradescope root (``source/``, ``submission/``, ``results/``
in a temp folder given as GRIND_AUTOGRADER_ROOT) and runs the bundle's own ``run_autograder``."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.worker import isolation

from .conftest import ROOT

runner = CliRunner()

# The attack of issue 34: at limits-only, a submission that imported the bundle's own reference
# scored 16/16. It also lists what it could see, so a failure says which door was open.
ATTACK = '''
import os
import sys

_ROOT = "@ROOT@"
_seen = []
for _rel in ("source/grind/cache", "source/grind/solutions/clipping"):
    try:
        _seen.append(f"{_rel}: {sorted(os.listdir(os.path.join(_ROOT, _rel)))[:3]}")
    except OSError as exc:
        _seen.append(f"{_rel}: {type(exc).__name__}")
sys.path.insert(0, os.path.join(_ROOT, "source/grind/solutions/clipping"))
try:
    import reference  # noqa: F401 - the module alone: naming the entry point (a forbidden API's
    # name too) is refused for marks before anything runs, and this probe must run
except ImportError as exc:
    raise RuntimeError(f"PROBE {type(exc).__name__} | " + " | ".join(_seen))
'''


def _build(out: Path, *extra: str) -> zipfile.ZipFile:
    result = runner.invoke(app, ["autograder", "build", "clipping", "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return zipfile.ZipFile(out / "clipping-autograder.zip")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, zipfile.ZipFile]:
    base = tmp_path_factory.mktemp("bundles")
    return {"strict": _build(base / "strict"), "weak": _build(base / "weak", "--allow-weak-isolation")}


def _gradescope_root(archive: zipfile.ZipFile, submission: str) -> Path:
    """A root laid out as /autograder. World-searchable (0755, under /tmp), as Gradescope's is,
    so that as root the child runs as nobody wherever the Python allows it."""
    root = Path(tempfile.mkdtemp(prefix="gradescope-", dir="/tmp"))
    root.chmod(0o755)
    archive.extractall(root / "source")
    for script in ("run_autograder", "setup.sh"):
        (root / "source" / script).chmod(0o755)
    (root / "submission").mkdir()
    (root / "submission" / "clipping.py").write_text(submission.replace("@ROOT@", str(root)), encoding="utf-8")
    return root


def _run(root: Path, level: str) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GRIND_CACHE_DIR", "GRIND_CONTENT", "PYTHONPATH")}
    env.update(GRIND_AUTOGRADER_ROOT=str(root), GRIND_PYTHON=sys.executable, GRIND_SANDBOX=level)
    ran = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, check=True, timeout=300,
                         capture_output=True, text=True, cwd=root)
    return json.loads((root / "results" / "results.json").read_text()), ran.stdout + ran.stderr


def _level_here(level: str) -> str | None:
    """Why ``level`` cannot run on this machine, or None when it can."""
    if level == "bubblewrap" and not shutil.which("bwrap"):
        return "bubblewrap is not installed"
    previous = os.environ.get("GRIND_SANDBOX")
    os.environ["GRIND_SANDBOX"] = level if level != "bubblewrap" else "auto"
    isolation.isolation.cache_clear()
    try:
        found = isolation.isolation().level
    finally:
        os.environ.pop("GRIND_SANDBOX") if previous is None else os.environ.update(GRIND_SANDBOX=previous)
        isolation.isolation.cache_clear()
    return None if found == level else f"{level} is not available here (got {found})"


def test_a_bundle_ships_no_reference_pitfalls_or_oracle(bundles: dict[str, zipfile.ZipFile]) -> None:
    """Sealed: the answer and the known mistakes are not in the zip at all, only their
    observations (the reference's entry and the pitfall pairs) and the key they are read under."""
    names = bundles["strict"].namelist()
    leaked = [n for n in names if n.rsplit("/", 1)[-1] in ("reference.py", "pitfalls.py", "oracle.py")]
    assert leaked == []
    solution = sorted(n for n in names if n.startswith("grind/solutions/clipping/"))
    assert solution == ["grind/solutions/clipping/checks.py", "grind/solutions/clipping/sealed.json"]
    key = json.loads(bundles["strict"].read("grind/solutions/clipping/sealed.json"))["key"]
    assert f"grind/cache/clipping-{key}/observations.safetensors" in names
    assert any(n.startswith("grind/cache/clipping.pair.") for n in names)  # naming two mistakes needs them
    settings = json.loads(bundles["strict"].read("grind/bundle.json"))
    assert settings["allow_weak_isolation"] is False
    assert json.loads(bundles["weak"].read("grind/bundle.json"))["allow_weak_isolation"] is True


@pytest.mark.parametrize("level", ["bubblewrap", "landlock"])
def test_the_reference_attack_scores_zero_at_every_level(bundles: dict[str, zipfile.ZipFile], level: str) -> None:
    """The submission of issue 34 imports source/grind/solutions/clipping/reference.py from the
    bundle. There is no such file at any level, so it scores 0; the level is said in results.json
    and in the log. (limits-only as the grader's own user is refused outright: see below.)"""
    why = _level_here(level)
    if why:
        pytest.skip(why)
    root = _gradescope_root(bundles["strict"], ATTACK)
    try:
        results, log = _run(root, level)
        assert results["score"] == 0 and results["max_score"] > 0, results
        assert "PROBE ModuleNotFoundError" in json.dumps(results), results  # it ran, and found nothing to import
        assert not (root / "source" / "grind" / "solutions" / "clipping" / "reference.py").exists()
        assert f"isolation: {level} (" in results["output"], results["output"]
        assert f"isolation: {level} (" in log and "reference: cache hit" in log, log
        if level != "limits-only":  # hidden (bubblewrap) or never granted (landlock)
            assert "source/grind/cache: PermissionError" in json.dumps(results) or \
                   "source/grind/cache: FileNotFoundError" in json.dumps(results), results
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_bundle_still_grades_a_correct_submission_in_full(bundles: dict[str, zipfile.ZipFile]) -> None:
    """The control for the attack: the same sealed bundle gives a correct answer every point,
    from the shipped observations alone, and leaves the cache unreadable to other users (the
    child's user, nobody, when Gradescope runs it as root)."""
    root = _gradescope_root(bundles["strict"], (ROOT / "tests" / "submissions" / "clipping" /
                                                "correct_loop.py").read_text(encoding="utf-8"))
    try:
        results, log = _run(root, "auto")
        assert results["score"] == results["max_score"] == 16, results
        assert "Graded by grind" in results["output"] and "isolation: " in results["output"]
        cache = root / "source" / "grind" / "cache"
        assert stat.S_IMODE(cache.stat().st_mode) & 0o077 == 0
        entry = next(cache.iterdir())
        assert stat.S_IMODE(next(entry.iterdir()).stat().st_mode) & 0o077 == 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_sealed_bundle_names_two_mistakes_from_its_shipped_pairs(bundles: dict[str, zipfile.ZipFile]) -> None:
    """Naming needs the pitfalls' observations, not their code: a submission that makes two of
    clipping's mistakes is named with both, from the pairs cached at build time."""
    wrong = next(p for p in sorted((ROOT / "tests" / "corpus" / "clipping").glob("*.py"))
                 if p.read_text(encoding="utf-8").startswith("# expect: failed pitfall=sum-of-norms+no-clamp"))
    root = _gradescope_root(bundles["strict"], wrong.read_text(encoding="utf-8"))
    try:
        results, _ = _run(root, "auto")
        assert 0 <= results["score"] < results["max_score"], results
        assert results["output"].count("Diagnosis:") == 2, results["output"]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_limits_only_is_refused_unless_the_bundle_allows_it(bundles: dict[str, zipfile.ZipFile]) -> None:
    """As `grind grade` does: at limits-only a bundle built without --allow-weak-isolation does
    not grade (a correct submission is not given marks either), and says why and how to fix it."""
    good = (ROOT / "tests" / "submissions" / "clipping" / "correct_loop.py").read_text(encoding="utf-8")
    root = _gradescope_root(bundles["strict"], good)
    try:
        results, log = _run(root, "limits-only")
        assert results["score"] == 0 and "tests" not in results, results
        # Gradescope needs max_score to show "0 / 16"; the student reads a line meant for them,
        # the instructor's fix (rebuild, install bubblewrap) is in the log they alone see.
        assert results["max_score"] == 16, results
        assert "not graded" in results["output"] and "not about your code" in results["output"], results
        assert "--allow-weak-isolation" not in results["output"] and "Fix the image" not in results["output"]
        assert "refused to grade: isolation: limits-only" in log, log
        # limits-only is simulated with GRIND_SANDBOX, so the fix named is to unset it
        assert "--allow-weak-isolation" in log and "Fix the image: unset GRIND_SANDBOX" in log, log
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_weak_bundle_refuses_where_the_submission_would_run_as_the_graders_own_user(
        bundles: dict[str, zipfile.ZipFile]) -> None:
    """--allow-weak-isolation allows limits-only only where the child runs as another user:
    GRIND_SANDBOX=limits-only never drops to nobody, so here the child would be the grader's own
    user (root, with every capability, on Gradescope) and the bundle refuses before it runs:
    no mark, max_score said, the instructor's reason in the log."""
    good = (ROOT / "tests" / "submissions" / "clipping" / "correct_loop.py").read_text(encoding="utf-8")
    root = _gradescope_root(bundles["weak"], good)
    try:
        results, log = _run(root, "limits-only")
        assert results["score"] == 0 and results["max_score"] == 16 and "tests" not in results, results
        assert "not graded" in results["output"], results
        assert "refused to grade" in log and "only where the submission runs as" in log, log
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_override_allows_limits_only_only_for_a_child_running_as_another_user() -> None:
    from judge.autograder import refusal

    assert refusal(weak=False, other_user=False, allowed=False) is None
    assert refusal(weak=True, other_user=True, allowed=True) is None
    assert "another user" in (refusal(weak=True, other_user=False, allowed=True) or "")
    assert "--allow-weak-isolation" in (refusal(weak=True, other_user=True, allowed=False) or "")


def test_the_isolation_line_says_a_root_child_keeps_every_capability_at_limits_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Capabilities are dropped only where Landlock or bubblewrap confines the child: at
    limits-only a root child keeps them all (a06 read CapEff=000001fffeffffff), and the line
    the log, results.json and grind doctor print must not say otherwise."""
    monkeypatch.setattr(isolation.os, "geteuid", lambda: 0)
    assert isolation.child_user(isolation.Isolation(None, None, 0)) == \
        "root, with every capability and nothing confining it"
    assert isolation.child_user(isolation.Isolation(None, None, 6)) == "root (no capabilities)"
    assert isolation.child_user(isolation.Isolation(65534, None, 0)) == "nobody"


def test_run_autograder_trusts_only_a_results_file_from_a_grader_that_exited_0(
        bundles: dict[str, zipfile.ZipFile], tmp_path: Path) -> None:
    """a01: a child that wrote results.json (16/16) and killed the grader kept its forged score.
    Here a stand-in grader does just that; a results.json left from before is not trusted either."""
    good = (ROOT / "tests" / "submissions" / "clipping" / "correct_loop.py").read_text(encoding="utf-8")
    root = _gradescope_root(bundles["strict"], good)
    fake = tmp_path / "python"
    fake.write_text(f"""#!/bin/bash
if [ "$1" = -m ]; then
    printf '%s' '{{"score": 16, "max_score": 16, "output": "PWNED"}}' > "$6"
    kill -9 $$
fi
exec {sys.executable} "$@"
""")
    fake.chmod(0o755)
    try:
        (root / "results").mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("GRIND_CACHE_DIR", "GRIND_CONTENT", "PYTHONPATH")}
        env.update(GRIND_AUTOGRADER_ROOT=str(root), GRIND_PYTHON=str(fake))
        subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, check=True, timeout=120,
                       capture_output=True, text=True, cwd=root)
        results = json.loads((root / "results" / "results.json").read_text())
        assert results["score"] == 0 and results["max_score"] == 16, results
        assert "PWNED" not in json.dumps(results) and "exited with status 137" in results["output"], results
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_sealed_bundle_with_a_broken_cache_says_so_and_never_recomputes(
        bundles: dict[str, zipfile.ZipFile]) -> None:
    """With no reference to run, a corrupt shipped entry cannot be rebuilt: the student's
    results.json says the autograder could not grade, naming the sealed bundle, not a crash."""
    good = (ROOT / "tests" / "submissions" / "clipping" / "correct_loop.py").read_text(encoding="utf-8")
    root = _gradescope_root(bundles["strict"], good)
    try:
        for entry in (root / "source" / "grind" / "cache").iterdir():
            if entry.name.startswith("clipping-"):
                (entry / "observations.safetensors").write_bytes(b"not safetensors")
        results, _ = _run(root, "auto")
        assert results["score"] == 0 and "sealed bundle" in results["output"], results
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- setup.sh (point 2)

def test_setup_pins_every_dependency_and_takes_torch_from_the_cpu_index(bundles: dict[str, zipfile.ZipFile]) -> None:
    """constraints.txt holds this machine's version of every package grading needs, torch's
    own dependencies included; setup.sh checks the Python, installs bubblewrap with apt, and
    installs torch from PyTorch's CPU index (the default index's Linux torch is the CUDA one)."""
    archive = bundles["strict"]
    constraints = archive.read("constraints.txt").decode()
    pins = dict(line.split("==") for line in constraints.splitlines() if "==" in line)
    assert pins["numpy"] == metadata.version("numpy")
    assert pins["safetensors"] == metadata.version("safetensors")
    assert pins["torch"] == metadata.version("torch").split("+")[0]
    for torch_dependency in metadata.requires("torch") or []:
        name = torch_dependency.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
        if "extra ==" not in torch_dependency and name.replace("_", "-") in {"filelock", "sympy", "jinja2"}:
            assert name.replace("_", "-") in pins, (name, constraints)
    assert not {"typer", "rich", "fsrs", "plotext", "watchfiles"} & set(pins)
    setup = archive.read("setup.sh").decode()
    assert 'TORCH_INDEX_URL="${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"' in setup
    assert '-c "$SRC/constraints.txt"' in setup
    assert "apt-get install -y -qq --no-install-recommends bubblewrap python3-venv" in setup
    assert "grind needs Python >= 3.10" in setup
    assert '--no-index --find-links "$SRC/wheels"' in setup


def test_torch_index_url_is_configurable_at_build_time(tmp_path: Path) -> None:
    archive = _build(tmp_path, "--torch-index-url", "https://mirror.example/torch-cpu")
    assert 'TORCH_INDEX_URL="${TORCH_INDEX_URL:-https://mirror.example/torch-cpu}"' in archive.read("setup.sh").decode()


def _wheel(folder: Path, name: str, version: str) -> Path:
    """A minimal pure-Python wheel (PEP 427), made here so the offline install needs no network."""
    dist = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": f"VERSION = {version!r}\n",
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
             f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: grind-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join(record + [f"{dist}/RECORD,,"]) + "\n"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name_in, text in files.items():
            zf.writestr(name_in, text)
    return path


def _setup_root(archive: zipfile.ZipFile, tmp_path: Path) -> Path:
    root = tmp_path / "autograder"
    archive.extractall(root / "source")
    (root / "source" / "setup.sh").chmod(0o755)
    return root


def test_setup_installs_offline_from_the_wheelhouse_at_the_pinned_version(
        bundles: dict[str, zipfile.ZipFile], tmp_path: Path) -> None:
    """setup.sh run for real into a temp venv, offline (--no-index): the shipped wheels are the
    only source, and the constraints file picks the pinned version of two in the wheelhouse.
    torch's wheel is too large for a test, so the bundle's requirements are swapped for a small
    package made here; the apt step and the reference check are switched off, and say so."""
    root = _setup_root(bundles["strict"], tmp_path)
    source = root / "source"
    (source / "wheels").mkdir()
    _wheel(source / "wheels", "grindprobe", "1.0")
    _wheel(source / "wheels", "grindprobe", "2.0")
    (source / "requirements.txt").write_text("grindprobe\n")
    (source / "constraints.txt").write_text("grindprobe==1.0\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "GRIND_"))}
    env.update(GRIND_AUTOGRADER_ROOT=str(root), GRIND_SETUP_PYTHON=sys.executable, GRIND_SKIP_APT="1",
               GRIND_SETUP_SKIP_CHECK="1", PIP_NO_CACHE_DIR="1")
    ran = subprocess.run(["bash", str(source / "setup.sh")], env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "GRIND_SKIP_APT=1" in ran.stdout and "was NOT checked" in ran.stdout
    version = subprocess.run([str(root / "venv" / "bin" / "python"), "-c", "import grindprobe; print(grindprobe.VERSION)"],
                             capture_output=True, text=True, check=True)
    assert version.stdout.strip() == "1.0"


def test_setup_refuses_a_python_older_than_3_10_with_a_clear_message(
        bundles: dict[str, zipfile.ZipFile], tmp_path: Path) -> None:
    root = _setup_root(bundles["strict"], tmp_path)
    old = tmp_path / "python3.9"
    old.write_text(f"#!/bin/sh\nexec {sys.executable} -c \"import sys; sys.version_info = (3, 9, 18, 'final', 0); "
                   "sys.version = '3.9.18 (fake)'; exec(sys.stdin.read())\"\n")
    old.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRIND_")}
    env.update(GRIND_AUTOGRADER_ROOT=str(root), GRIND_SETUP_PYTHON=str(old), GRIND_SKIP_APT="1")
    ran = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 1
    assert "grind needs Python >= 3.10" in ran.stderr and "3.9.18" in ran.stderr, ran.stderr
    assert not (root / "venv").exists()


def test_setup_refuses_a_python_other_than_the_one_the_bundle_was_pinned_on(
        bundles: dict[str, zipfile.ZipFile], tmp_path: Path) -> None:
    """constraints.txt holds the build machine's versions (numpy 2.4 needs Python >= 3.11):
    setup.sh accepted any Python >= 3.10 and failed in pip on another minor. Now it refuses at
    once, naming the Python the bundle was pinned on and the two ways out."""
    built = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert json.loads(bundles["strict"].read("grind/bundle.json"))["python"] == built
    other = (sys.version_info[0], sys.version_info[1] + 1)
    root = _setup_root(bundles["strict"], tmp_path)
    fake = tmp_path / "python-other"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} -c \"import sys; sys.version_info = {other + (0, 'final', 0)!r}; "
                    f"sys.version = '{other[0]}.{other[1]}.0 (fake)'; exec(sys.stdin.read())\"\n")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRIND_")}
    env.update(GRIND_AUTOGRADER_ROOT=str(root), GRIND_SETUP_PYTHON=str(fake), GRIND_SKIP_APT="1")
    ran = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert f"this bundle was pinned on Python {built}" in ran.stderr, ran.stderr
    assert f"{other[0]}.{other[1]}.0" in ran.stderr and "Build the bundle with this image's Python" in ran.stderr
    assert not (root / "venv").exists()


def test_setup_installs_the_cpu_torch_by_its_local_tag_and_torch_dependencies_from_pypi(
        bundles: dict[str, zipfile.ZipFile]) -> None:
    """torch's pinned dependencies (filelock, sympy, ...) are mirrored only in part on the CPU
    index, so pypi is searched too; that is safe only because torch is asked for as 2.13.0+cpu,
    a version the CPU index alone has (pypi's Linux torch is the CUDA build)."""
    setup = bundles["strict"].read("setup.sh").decode()
    installed = metadata.version("torch")
    if "+" not in installed:
        assert f'TORCH_PIN="${{TORCH_PIN:-{installed}}}"' in setup
        pytest.skip("this machine's torch has no local tag (not the +cpu build)")
    assert f'TORCH_PIN="${{TORCH_PIN:-{installed}}}"' in setup, setup
    assert '--extra-index-url https://pypi.org/simple "torch==$TORCH_PIN"' in setup


def test_a_wheel_built_for_another_python_or_platform_is_refused_at_build_time(tmp_path: Path) -> None:
    """The wheelhouse check looked at names and versions only: a wheelhouse filled for another
    Python or for a Mac passed the build and failed the image."""
    import judge.autograder as autograder

    house = tmp_path / "wheels"
    house.mkdir()
    major, minor = sys.version_info[:2]
    version = metadata.version("numpy")
    for tags in (f"cp{major}{minor - 1}-cp{major}{minor - 1}-manylinux_2_17_x86_64",
                 f"cp{major}{minor}-cp{major}{minor}-macosx_11_0_arm64"):
        (house / f"numpy-{version}-{tags}.whl").write_bytes(b"")
    problems = autograder.wheelhouse_problems(house, f"numpy=={version}\n", ["numpy"])
    assert problems[:2] == [f"numpy-{version}-{tags}.whl does not fit Python {major}.{minor} on Linux x86_64 "
                            "(the bundle's)" for tags in (f"cp{major}{minor - 1}-cp{major}{minor - 1}-manylinux_2_17_x86_64",
                                                          f"cp{major}{minor}-cp{major}{minor}-macosx_11_0_arm64")]
    assert "no wheel of numpy" in problems[2]
    (house / f"numpy-{version}-cp{major}{minor}-cp{major}{minor}-manylinux_2_17_x86_64.whl").write_bytes(b"")
    (house / f"numpy-{version}-cp{major}{minor - 1}-cp{major}{minor - 1}-manylinux_2_17_x86_64.whl").unlink()
    (house / f"numpy-{version}-cp{major}{minor}-cp{major}{minor}-macosx_11_0_arm64.whl").unlink()
    assert autograder.wheelhouse_problems(house, f"numpy=={version}\n", ["numpy"]) == []


def test_a_wheelhouse_that_lacks_a_pinned_wheel_is_refused_at_build_time(tmp_path: Path) -> None:
    """--wheelhouse must hold a wheel of each package setup.sh installs, at the pinned version:
    one missing is refused at build time, naming it and how to fill the folder."""
    house = tmp_path / "wheels"
    house.mkdir()
    _wheel(house, "numpy", "0.1")
    result = runner.invoke(app, ["autograder", "build", "clipping", "--out", str(tmp_path / "out"),
                                 "--wheelhouse", str(house)])
    assert result.exit_code != 0
    assert "cannot install offline" in result.output and "no wheel of torch" in result.output, result.output
    assert f"numpy {metadata.version('numpy')} is pinned, the wheelhouse has 0.1" in result.output
    assert "pip download" in result.output
    # Nothing is written yet: the refusal says how to get requirements.txt and constraints.txt.
    assert "both files are in the bundle folder" not in result.output
    assert "without --wheelhouse" in " ".join(result.output.split()), result.output


def test_a_complete_wheelhouse_ships_in_the_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Wheels named for every requirement at the pinned version are copied into wheels/."""
    import judge.autograder as autograder

    house = tmp_path / "wheels"
    house.mkdir()
    pins = dict(line.split("==") for line in autograder.constraints_text(autograder.build_torch_version()).splitlines()
                if "==" in line and not line.startswith("#"))
    requirements = [f"torch=={autograder.build_torch_version()}"] + autograder.grader_dependencies()
    for requirement in requirements:
        name = autograder._requirement_name(requirement)
        if name in pins:
            _wheel(house, name.replace("-", "_"), pins[name])
    assert autograder.wheelhouse_problems(house, autograder.constraints_text(autograder.build_torch_version()),
                                          requirements) == []
    archive = _build(tmp_path / "out", "--wheelhouse", str(house))
    assert sorted(n for n in archive.namelist() if n.startswith("wheels/")) == \
        sorted(f"wheels/{p.name}" for p in house.iterdir())
