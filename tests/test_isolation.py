"""Isolation levels, grind doctor, and a parent that reads the job folder as hostile bytes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from judge import cache
from judge.catalog import Catalog
from judge.trusted import reference_for, reference_problem
from judge.worker import protocol
from judge.worker.isolation import LEVELS, isolation
from judge.worker.sandbox import OBSERVATIONS_CAP, read_regular

ROOT = Path(__file__).resolve().parents[1]
CORRECT = ROOT / "tests" / "submissions" / "clipping" / "correct_loop.py"


def _grind(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "judge", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})}, cwd=cwd)


@pytest.mark.parametrize("mode", ["auto", "landlock", "limits-only"])
def test_doctor_names_the_level_in_force_and_what_each_level_guarantees(mode: str) -> None:
    done = _grind("doctor", "--json", env={"GRIND_SANDBOX": mode})
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["level"] in LEVELS
    assert set(info["guarantees"]) == set(LEVELS)
    if mode == "limits-only":
        assert info["level"] == "limits-only" and info["grading_allowed"] is False and info["strengthen"]
    if mode == "landlock":
        assert info["level"] != "bubblewrap"
    text = _grind("doctor", env={"GRIND_SANDBOX": mode})
    assert text.returncode == 0 and f"Isolation level: {info['level']}" in text.stdout


def test_grade_refuses_weak_isolation_unless_allowed(tmp_path: Path) -> None:
    klass = tmp_path / "class"
    klass.mkdir()
    shutil.copyfile(CORRECT, klass / "ada.py")
    env = {"GRIND_SANDBOX": "limits-only", "GRIND_CACHE_DIR": str(tmp_path / "cache")}
    refused = _grind("grade", str(klass), "-e", "clipping", "--out", str(tmp_path / "out"), env=env)
    assert refused.returncode == 2
    assert "limits-only" in refused.stderr and "--allow-weak-isolation" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "out").exists()
    allowed = _grind("grade", str(klass), "-e", "clipping", "--out", str(tmp_path / "out"),
                     "--allow-weak-isolation", "-F", "json", env=env)
    assert allowed.returncode == 0, allowed.stderr
    rows = json.loads((tmp_path / "out" / "results.json").read_text())
    assert rows[0]["verdict"]["status"] == "passed"
    assert rows[0]["verdict"]["isolation"] == "limits-only"


def test_the_json_verdict_carries_the_isolation_level(tmp_path: Path) -> None:
    done = _grind("run", "clipping", "--file", str(CORRECT), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["isolation"] == isolation().level


# ---------------------------------------------------------------------------------------------
# Reading hostile files


def test_read_regular_refuses_fifos_symlinks_and_oversized_files(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "big").write_bytes(b"x" * 2048)
    (tmp_path / "ok").write_bytes(b"fine")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(protocol.ProtocolError, match="not a regular file"):
            read_regular(fd, "fifo", 1024)  # would block forever with a plain open()
        with pytest.raises(OSError):
            read_regular(fd, "zero", OBSERVATIONS_CAP)  # would read until out of memory
        with pytest.raises(protocol.ProtocolError, match="larger"):
            read_regular(fd, "big", 1024)
        assert read_regular(fd, "ok", 1024) == b"fine"
    finally:
        os.close(fd)


@pytest.mark.parametrize("document, problem", [
    (b"{", "not valid JSON"),
    (b'{"token": "t", "observations_sha256": "h", "subjects": {"learner": {"cases": []}}}', "expected an object"),
    (b'{"token": "t", "observations_sha256": "h", "subjects": {"learner": {"elapsed_s": 1e400}}}', "not a duration"),
    (b'{"token": "t", "observations_sha256": "h", "subjects": {"learner": {"elapsed_s": NaN}}}', "NaN"),
    (b'{"token": "t", "observations_sha256": "h", "subjects": {"learner": {"cases": {"a": {"status": "ok", '
     b'"keys": [1]}}}}}', "expected text"),
    (b'{"token": "t", "observations_sha256": "h", "subjects": {}, "instances": [{"name": "a", "case": "a", '
     b'"kind": "egde", "params": {}}]}', "unknown case kind"),
    (b'[1, 2]', "expected an object"),
    (b'{"token": 5, "observations_sha256": "h", "subjects": {}}', "token"),
])
def test_a_malformed_result_is_refused_with_its_reason(document: bytes, problem: str) -> None:
    with pytest.raises(protocol.ProtocolError, match=problem):
        protocol.parse_result(document)


def test_a_well_formed_result_round_trips() -> None:
    result = protocol.Result(
        token="abc", observations_sha256="0" * 64,
        subjects={"learner": protocol.SubjectRecord(
            cases={"a": protocol.CaseRecord("ok", keys=["x"]),
                   "b": protocol.CaseRecord("error", error=protocol.ErrorInfo("ValueError", "no", 3, "x = 1"))},
            forbidden=[protocol.ForbiddenHit("torch.optim.Adam", 4)], elapsed_s=0.5)},
        instances=[protocol.Instance("a", "a", "edge", {}, {"v": [1.0, "nan"]}, None)],
        pitfalls=[protocol.PitfallMeta("s", "n", "e", "h")],
    )
    again = protocol.parse_result(json.dumps(result.to_json()).encode())
    assert again == result


# ---------------------------------------------------------------------------------------------
# The reference cache is checked before use


def _entry(slug: str) -> Path:
    entries = [p for p in cache.cache_root().iterdir() if p.name.startswith(slug + "-")]
    assert len(entries) == 1, entries
    return entries[0]


def test_an_emptied_cache_entry_is_rebuilt_never_compared_against(course: Path) -> None:
    """A submission at a weak level could rewrite the cache: drop the reference's observations
    and re-hash. The parent notices the entry is incomplete and rebuilds it, so a wrong answer
    still fails."""
    from safetensors.numpy import load, save

    exercise = Catalog().get("clipping")
    reference_for(exercise)
    entry = _entry("clipping")
    result = json.loads((entry / "result.json").read_text())
    arrays = load((entry / "observations.safetensors").read_bytes())
    kept = {k: v for k, v in arrays.items() if not k.startswith("reference::")}
    raw = save(kept)
    import hashlib

    result["observations_sha256"] = hashlib.sha256(raw).hexdigest()
    (entry / "observations.safetensors").write_bytes(raw)
    (entry / "result.json").write_text(json.dumps(result))
    parsed = protocol.parse_result((entry / "result.json").read_bytes())
    assert reference_problem(parsed, kept) is not None

    wrong = course / "wrong.py"
    wrong.write_text("def clip_grad_norm_(parameters, max_norm, norm_type=2.0):\n    return 0.0\n")
    from judge.grade import grade

    verdict = grade(exercise, wrong)
    assert verdict.status.value == "failed"
    rebuilt = protocol.parse_result((_entry("clipping") / "result.json").read_bytes())
    assert rebuilt.subjects["reference"].cases  # the entry on disk is whole again


def test_a_reference_case_without_observations_is_an_authoring_error(course: Path) -> None:
    checks = course / "solutions" / "clipping" / "checks.py"
    checks.write_text(checks.read_text() + "\nCASES[1] = dict(CASES[1], call=lambda subject, **kw: {})\n")
    from judge.errors import JudgeError

    with pytest.raises(JudgeError, match="observes nothing"):
        reference_for(Catalog().get("clipping"))


def test_a_mistyped_grind_sandbox_is_said_and_a_chosen_weak_level_says_how_to_undo_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer's GRIND_SANDBOX=bogus was silently the default, and GRIND_SANDBOX=limits-only
    was answered with "install bubblewrap" on a machine that had it: the fix is the variable."""
    from judge.worker import isolation as iso_module

    monkeypatch.setenv("GRIND_SANDBOX", "bogus")
    iso_module.isolation.cache_clear()
    try:
        notes = iso_module.isolation().notes
        assert any("GRIND_SANDBOX='bogus' is not a level" in note for note in notes), notes
        monkeypatch.setenv("GRIND_SANDBOX", "limits-only")
        iso_module.isolation.cache_clear()
        assert iso_module.isolation().level == "limits-only"
        assert iso_module.how_to_strengthen("limits-only").startswith("unset GRIND_SANDBOX")
        monkeypatch.delenv("GRIND_SANDBOX")
        assert "apt-get install bubblewrap" in iso_module.how_to_strengthen("limits-only")
    finally:
        iso_module.isolation.cache_clear()
