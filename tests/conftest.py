"""Shared fixtures. Every test gets its own cache folder unless it asks for the shared one,
so no test can pass because another one left a cache entry behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "tests" / "submissions"
ADVERSARIAL = ROOT / "tests" / "adversarial"


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    # One cache per test session (and per xdist worker): reference observations are computed
    # once per exercise, like a learner's second run, but never leak in from a real user cache.
    os.environ["GRIND_CACHE_DIR"] = str(tmp_path_factory.mktemp("grind-cache"))
    os.environ.pop("GRIND_CONTENT", None)


@pytest.fixture()
def course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private course folder holding a copy of clipping and of the author kit (which its checks
    import) that a test may edit or break, with its own cache and state, as an instructor's
    course would be."""
    import shutil

    root = tmp_path / "course"
    for part in ("exercises", "solutions"):
        shutil.copytree(ROOT / part / "clipping", root / part / "clipping")
    shutil.copytree(ROOT / "solutions" / "_kit", root / "solutions" / "_kit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("GRIND_CONTENT", str(root))
    monkeypatch.setenv("GRIND_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    return root
