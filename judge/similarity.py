"""Near-copies across a class: ``grind grade ... --similarity 0.8`` writes similarity.csv and
similarity.md, the pairs of students whose code overlaps at least that much.

Exact copies already show in the marks (one sha256 for two students); a copy with its names
changed, comments rewritten or lines moved does not. The comparison is copydetect's (MIT, on
PyPI; ``pip install 'grind[marks]'``): each submission is tokenised (pygments) with names,
strings and comments abstracted away, and fingerprinted by winnowing (Schleimer et al., the
method behind MOSS); two submissions' similarity is the share of each one's code found in the
other. The exercise's stub is given as boilerplate, so the starter code every student was
handed does not count as copied.

grind only reads the learners' text here (a notebook: its answer cells, as graded): nothing is
run. A pair above the threshold is a reason to look, never a verdict: short exercises have few
ways to be right, which is why the threshold is the instructor's to set.
"""

from __future__ import annotations

import csv
import io
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.errors import EnvironmentProblem
from judge.text import safe

NOISE = 25  # copydetect's defaults (its noise and guarantee thresholds): matches shorter than
WINDOW = 1  # 25 characters of abstracted code are ignored, longer ones are always found


@dataclass
class Pair:
    a: str
    b: str
    a_in_b: float  # share of a's code found in b
    b_in_a: float
    tokens: int  # overlapping (abstracted) characters
    identical: bool  # same bytes (same sha256)

    @property
    def score(self) -> float:
        return max(self.a_in_b, self.b_in_a)


def require_copydetect() -> Any:
    try:
        import copydetect  # type: ignore[import-untyped]  # the package ships neither stubs nor py.typed
    except ImportError as exc:
        raise EnvironmentProblem("--similarity needs the copydetect package: pip install -e '.[marks]' in your "
                                 f"grind clone (here: {exc})") from None
    return copydetect


def similar_pairs(sources: dict[str, str], threshold: float, boilerplate: str = "",
                  digests: dict[str, str] | None = None) -> list[Pair]:
    """Every pair of ``sources`` (student: Python text) at least ``threshold`` similar (0-1),
    most similar first."""
    copydetect = require_copydetect()
    # copydetect hands back a set of hashes and wants a list (numpy's intersect1d) as boilerplate
    base = sorted(copydetect.CodeFingerprint("stub.py", NOISE, WINDOW, fp=io.StringIO(boilerplate)).hashes) \
        if boilerplate else []
    prints = {}
    for student, text in sources.items():
        prints[student] = copydetect.CodeFingerprint(f"{student}.py", NOISE, WINDOW, boilerplate=base,
                                                     fp=io.StringIO(text))
    pairs = []
    digests = digests or {}
    for a, b in itertools.combinations(sorted(prints), 2):
        if not len(prints[a].hashes) or not len(prints[b].hashes):
            continue  # nothing of their own (the stub, or empty): nothing to compare
        tokens, (a_in_b, b_in_a), _ = copydetect.compare_files(prints[a], prints[b])
        pair = Pair(a, b, float(a_in_b), float(b_in_a), int(tokens),
                    bool(digests.get(a)) and digests.get(a) == digests.get(b))
        if pair.score >= threshold:
            pairs.append(pair)
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


def to_csv(pairs: list[Pair]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["student_a", "student_b", "similarity", "a_in_b", "b_in_a", "overlap", "identical"])
    for p in pairs:
        writer.writerow([safe(p.a), safe(p.b), f"{p.score:.2f}", f"{p.a_in_b:.2f}", f"{p.b_in_a:.2f}", p.tokens,
                         "yes" if p.identical else ""])
    return out.getvalue()


def to_markdown(pairs: list[Pair], threshold: float, students: int, exercise: str) -> str:
    def cell(text: str) -> str:
        return safe(text).replace("|", "\\|").replace("\n", " ")

    lines = [f"# Similar submissions: {exercise}", "",
             f"{len(pairs)} pair{'s' if len(pairs) != 1 else ''} of {students} submissions at or above "
             f"{threshold:.0%} similarity (copydetect: names, strings and comments abstracted; the stub not "
             "counted). A pair here is a reason to look, not a verdict.", ""]
    if pairs:
        lines += ["| student A | student B | similarity | A's code in B | B's code in A | identical |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {cell(p.a)} | {cell(p.b)} | {p.score:.0%} | {p.a_in_b:.0%} | {p.b_in_a:.0%} | "
                  f"{'yes' if p.identical else ''} |" for p in pairs]
    return "\n".join(lines) + "\n"


def class_sources(students: list[Any], entry: tuple[str, ...]) -> dict[str, str]:
    """Each gradable student's text, as graded: a .py file decoded by its coding cookie, a
    notebook's answer cells. A file that cannot be read is left out (its row says why)."""
    from judge.notebooks import notebook_source
    from judge.text import decode_source

    sources = {}
    for student in students:
        path: Path | None = student.path
        if path is None:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if path.suffix == ".ipynb":
            extracted = notebook_source(data, path.name, entry)
            if extracted.problem is None:
                sources[student.name] = extracted.source
        else:
            text, problem = decode_source(data, path.name)
            if problem is None:
                sources[student.name] = text
    return sources


def write_report(students: list[Any], exercise: Any, rows: list[dict[str, Any]], threshold: float,
                 out_dir: Path) -> tuple[list[Pair], list[Path]]:
    """``grind grade --similarity``: the pairs of the class at or above ``threshold``, written to
    ``OUT/similarity.csv`` and ``OUT/similarity.md`` (atomically, as every output of a run)."""
    from judge.formats import write_atomic

    sources = class_sources(students, exercise.entry)
    pairs = similar_pairs(sources, threshold, exercise.stub_path.read_text(encoding="utf-8"),
                          {row["student"]: row["sha256"] for row in rows})
    written = [out_dir / "similarity.csv", out_dir / "similarity.md"]
    write_atomic(written[0], to_csv(pairs))
    write_atomic(written[1], to_markdown(pairs, threshold, len(sources), exercise.slug))
    return pairs, written
