"""Every corpus answer graded for marks: does each keep the status practice gives it? (issue 28)

Marks (``grind grade``, the Gradescope bundle) add the scan and the child's record of the
libraries (judge/worker/integrity.py); a correct answer they refuse is a false positive. This
grades ``tests/corpus/<slug>/*.py`` with one warm worker per exercise, ``marked=True``, and prints
each file whose status differs from its header's, then the totals. A file whose header calls it
hostile may differ (refused for marks, failed in practice): that is the point of marks.
Usage: ``python bench/marks_corpus.py [SLUG ...]`` (all exercises by default; about 6 minutes).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from judge.catalog import Catalog
from judge.corpus import corpus_files, expectation
from judge.grade import grade, hidden_from_learners
from judge.worker.sandbox import WarmWorker

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"


def main() -> None:
    slugs = sys.argv[1:] or sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    differ = total = 0
    started = time.monotonic()
    for slug in slugs:
        exercise = Catalog().get(slug)
        with WarmWorker(hidden_from_learners(exercise, CORPUS / slug)) as worker:
            for path in corpus_files(CORPUS / slug):
                want, _ = expectation(path)
                verdict = grade(exercise, path, worker=worker, marked=True)
                total += 1
                if verdict.status.value != want:
                    differ += 1
                    print(f"{path.relative_to(CORPUS)}: {want} in practice, {verdict.status.value} for marks: "
                          f"{verdict.message[:160]}", flush=True)
    print(f"{total} corpus answers graded for marks in {time.monotonic() - started:.0f} s; "
          f"{differ} got another status than practice's")


if __name__ == "__main__":
    main()
