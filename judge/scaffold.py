"""``grind new``: lay out a new exercise from templates, ready to be proven adequate.

The scaffold is a tiny working exercise built on the author kit (its reference passes, its stub
fails, its example pitfalls are caught and named), so ``grind validate`` on it reports exactly
the TODOs left to fill in and nothing else: the instructor replaces them one by one until
validation is clean. Three kinds, one template folder each:

- ``function``: a function of tensors (``scale(x, factor)``), the shape of clipping or a schedule;
- ``optimizer``: an optimizer class run in lockstep with a script of gradients (``SGD`` with
  weight decay), the shape of adam or sgd-momentum, with pitfalls as deltas of a base class;
- ``training``: training code driven through the kit's recording optimizer (``train_epoch``),
  the shape of accumulation, with pitfalls as deltas of one loop's options.

A course without the kit (``solutions/_kit``) gets a copy of grind's own, which every scaffold
imports as ``grind_kit``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from judge.catalog import SLUG_RE, Catalog
from judge.errors import JudgeError, UsageError
from judge.kit import FOLDER, builtin_kit

TEMPLATES = Path(__file__).with_name("templates")
KINDS = ("function", "optimizer", "training")


@dataclass
class Scaffold:
    exercise_dir: Path
    solution_dir: Path
    files: list[Path]
    kit_copied: Path | None = None  # the course had no kit: grind's own was copied here


def new_exercise(catalog: Catalog, slug: str, kind: str = "function") -> Scaffold:
    if not SLUG_RE.match(slug):
        raise UsageError(f"'{slug}' is not a valid exercise name: use lowercase letters, digits and dashes")
    if kind not in KINDS:
        raise UsageError(f"unknown kind '{kind}': use one of {', '.join(KINDS)}")
    if "_content" in catalog.root.parts:
        raise UsageError("grind is using the exercises bundled in its install; point GRIND_CONTENT at your "
                         "course folder (the one holding exercises/ and solutions/) to add an exercise")
    exercise_dir, solution_dir = catalog.exercises_root / slug, catalog.solutions_root / slug
    for folder in (exercise_dir, solution_dir):
        if folder.exists():
            raise UsageError(f"{folder} already exists")
    kit, copied = catalog.solutions_root / FOLDER, None
    if not kit.exists():
        source = builtin_kit()
        if source is None:
            raise JudgeError("grind's own author kit (solutions/_kit) is missing from this install")
        shutil.copytree(source, kit, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        copied = kit
    files = []
    for part, target in (("exercise", exercise_dir), ("solution", solution_dir)):
        target.mkdir(parents=True)
        for template in sorted((TEMPLATES / kind / part).glob("*.tmpl")):
            path = target / template.name.removesuffix(".tmpl")
            path.write_text(template.read_text(encoding="utf-8").replace("{slug}", slug), encoding="utf-8")
            files.append(path)
    golden = catalog.root / "tests" / "submissions" / slug
    golden.mkdir(parents=True, exist_ok=True)
    readme = golden / "README.md"
    if not readme.exists():
        readme.write_text(GOLDEN_README.replace("{slug}", slug), encoding="utf-8")
        files.append(readme)
    return Scaffold(exercise_dir, solution_dir, files, copied)


GOLDEN_README = """# Golden submissions for {slug}

Each `*.py` here is a submission whose verdict you know; `grind validate {slug}` grades every one
and reports each whose verdict or named pitfall differs. Line 1 says what grind must answer:

    # expect: passed
    # expect: failed pitfall=SLUG      (rejected, and named as the pitfall with this slug)
    # expect: forbidden                (also: error, timeout, crashed)

Start with a correct answer written differently from the reference, and each mistake you expect.
"""
