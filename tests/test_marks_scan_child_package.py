"""Review of issue 35: the marks scan (judge/introspection.py) and the child's own package name.

Since issue 35 the child loads judge/worker as a package named ``grind_worker`` (runner.py), so a
submission can import the job's phases, the value conversions and the guards by name. The scan
refuses grind's other in-child modules (``grind_checks``, ``grind_kit``) by name; these tests say
whether it refuses ``grind_worker`` too: found unrefused on 2026-12-03 (not a regression: before
the redesign ``grind_worker_guards`` and ``from __main__ import _CONVERT`` were unrefused as well),
and refused since.
"""

from __future__ import annotations

import pytest

from judge import introspection
from judge.catalog import Catalog

SOURCES = {
    "import the package": "import grind_worker\n",
    "import a child room": "import grind_worker.child.values as V\n",
    "from-import a child dict": "from grind_worker.child.values import _CONVERT\n_CONVERT['numpy'] = len\n",
}


def _refusal(source: str) -> object:
    exercise = Catalog().get("clipping")
    body = source + "\ndef clip_grad_norm_(parameters, max_norm, norm_type=2.0):\n    return 0.0\n"
    return introspection.refusal(body, exercise.scanned_strictly, tuple(exercise.forbidden), tuple(exercise.entry))


def test_marks_refuse_grind_checks_by_name() -> None:
    assert _refusal("import grind_checks\n") is not None


@pytest.mark.parametrize("source", SOURCES.values(), ids=list(SOURCES))
def test_marks_refuse_the_childs_own_package(source: str) -> None:
    assert _refusal(source) is not None
