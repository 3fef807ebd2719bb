"""Shared fixtures. Every test gets its own cache folder unless it asks for the shared one,
so no test can pass because another one left a cache entry behind."""

from __future__ import annotations

import os
import sys
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


def python() -> str:
    return sys.executable
