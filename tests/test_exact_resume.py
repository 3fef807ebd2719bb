"""exact-resume: the reference's resumed runs really are the uninterrupted runs.

Grading compares a learner's trajectory with the reference's, so a harness or reference that
resumed inexactly would still "pass" itself. Every case also records, inside the child, whether
the resumed trajectory equals the uninterrupted run bit for bit; for the reference and the
oracle (a generic derivation through torch.save) that must be True on every case.
"""

from __future__ import annotations

import numpy as np
import pytest

from judge.catalog import Catalog
from judge.grade import REFERENCE, compute_reference

KEY = "identical to the uninterrupted run"


@pytest.mark.parametrize("slug", ["exact-resume"])  # the id lets `pytest -k exact-resume` select it
def test_reference_and_oracle_resume_bit_identically(slug: str) -> None:
    exercise = Catalog().get(slug)
    ref = compute_reference(exercise, with_oracle=True)
    for subject in (REFERENCE, "oracle"):
        observations = ref.subjects[subject].obs
        assert set(observations) == {i.name for i in ref.instances}, subject
        for case, obs in observations.items():
            assert bool(np.asarray(obs[KEY])), f"{subject} on {case}: the resumed run differs from the uninterrupted one"
