"""``grind new``: lay out a new exercise from templates, ready to be proven adequate.

The scaffold is a tiny working exercise (its reference passes, its stub fails, its example
pitfall is caught and named), so ``grind validate`` on it reports exactly the TODOs left to
fill in and nothing else: the instructor replaces them one by one until validation is clean.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judge.catalog import SLUG_RE, Catalog
from judge.errors import UsageError

TEMPLATES = Path(__file__).with_name("templates")


@dataclass
class Scaffold:
    exercise_dir: Path
    solution_dir: Path
    files: list[Path]


def new_exercise(catalog: Catalog, slug: str) -> Scaffold:
    if not SLUG_RE.match(slug):
        raise UsageError(f"'{slug}' is not a valid exercise name: use lowercase letters, digits and dashes")
    if "_content" in catalog.root.parts:
        raise UsageError("grind is using the exercises bundled in its install; point GRIND_CONTENT at your "
                         "course folder (the one holding exercises/ and solutions/) to add an exercise")
    exercise_dir, solution_dir = catalog.exercises_root / slug, catalog.solutions_root / slug
    for folder in (exercise_dir, solution_dir):
        if folder.exists():
            raise UsageError(f"{folder} already exists")
    files = []
    for part, target in (("exercise", exercise_dir), ("solution", solution_dir)):
        target.mkdir(parents=True)
        for template in sorted((TEMPLATES / part).glob("*.tmpl")):
            path = target / template.name.removesuffix(".tmpl")
            path.write_text(template.read_text(encoding="utf-8").replace("{slug}", slug), encoding="utf-8")
            files.append(path)
    return Scaffold(exercise_dir, solution_dir, files)
