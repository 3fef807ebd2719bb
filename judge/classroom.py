"""What the instructor's commands decide, apart from parsing and drawing: the core under
``grind grade``, ``grind validate`` and ``grind autograder build`` in judge/cli/.

Which options go together, where a class is graded, what the outputs are and what the run left
under its folder; which exercises are proven adequate, and which may be bundled. Plain functions
over the core (no typer, no rich: tests/test_architecture.py), so the CLI stays a few lines a
command. The learner's commands have theirs in judge/commands.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from judge.catalog import Catalog
from judge.errors import EnvironmentProblem, JudgeError, ManifestError, UsageError
from judge.models import Exercise, Status

# -- grind grade ------------------------------------------------------------------------------


def executor_for(name: str, jobs: int | None, scheduler: str | None, allow_weak_isolation: bool,
                 worker_wait: float | None) -> Any:
    """Where the class is graded: None for this machine (refused at a weak isolation level unless
    allowed), a DaskExecutor for ``--executor dask --scheduler ADDR``."""
    from judge.worker.isolation import how_to_strengthen, isolation

    if name == "dask" and jobs is not None:
        raise UsageError("--jobs counts this machine's parallel gradings; with --executor dask each worker grades "
                         "as many at once as its --nthreads: leave --jobs out")
    executor = grade_executor(name, scheduler, allow_weak_isolation, worker_wait)
    iso = isolation()  # on a Dask cluster, submissions run on the workers: each checks its own level
    if executor is None and iso.weak and not allow_weak_isolation:
        raise UsageError(f"refusing to grade at isolation level {iso.level}: a submission could read the "
                         "reference and classmates' files and fake a pass. "
                         f"Fix: {how_to_strengthen(iso.level)}; or pass --allow-weak-isolation "
                         "(see grind doctor)")
    return executor


def grade_executor(name: str, scheduler: str | None, allow_weak_isolation: bool,
                   worker_wait: float | None = None) -> Any:
    """None for the local executor; a DaskExecutor for ``--executor dask --scheduler ADDR``."""
    if name not in ("local", "dask"):
        raise UsageError(f"--executor {name!r}: choose local or dask")
    if name == "local":
        if scheduler is not None or worker_wait is not None:
            raise UsageError(f"{'--scheduler' if scheduler is not None else '--worker-wait'} is for --executor dask")
        return None
    if not scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS, e.g. --scheduler tcp://host:8786")
    try:
        from judge.cluster import DaskExecutor
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("distributed", "dask"):
            raise
        raise EnvironmentProblem("--executor dask needs the distributed package: pip install -e '.[dask]' in your grind clone "
                                 f"(here: {exc})") from None
    return DaskExecutor(scheduler, allow_weak_isolation=allow_weak_isolation, worker_wait=worker_wait)


def check_outputs(formats: list[str], regrade: list[str]) -> None:
    """Every --format is one grind writes, every --regrade a verdict's status."""
    from judge.formats import FORMATS

    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise UsageError(f"unknown format {unknown[0]!r}; choose from {', '.join(FORMATS)}")
    statuses = {s.value for s in Status}
    for status in regrade:
        if status not in statuses:
            raise UsageError(f"--regrade {status!r}: choose from {', '.join(sorted(statuses))}")


def limits(exercise: Exercise, time_limit: float | None, memory_mb: int | None) -> Any:
    """The exercise's limits, with an instructor's overrides."""
    from judge.worker.sandbox import Limits

    if time_limit is None and memory_mb is None:
        return None
    if time_limit is not None and not 0 < time_limit <= 3600:
        raise UsageError("--time-limit must be between 0 and 3600 seconds")
    if memory_mb is not None and memory_mb < 512:
        raise UsageError("--memory-mb must be at least 512")
    return Limits(wall_s=time_limit or exercise.time_limit, memory_mb=memory_mb or exercise.memory_mb)


def read_roster(roster: Path | None, gradebook: str | None) -> Any:
    """The roster's people (None without --roster); a bad roster stops us before any grading."""
    from judge.gradebook import GRADEBOOKS, read_people

    if gradebook is not None and (roster is None or gradebook not in GRADEBOOKS):
        raise UsageError("--gradebook needs --roster (a gradebook has a line per student on it)" if roster is None
                         else f"--gradebook {gradebook!r}: choose from {', '.join(GRADEBOOKS)}")
    return read_people(roster) if roster is not None else None


def write_outputs(rows: list[Any], exercise: Exercise, submissions: Path, out: Path, formats: list[str], *,
                  people: Any, roster: Path | None, gradebook: str | None, similarity: float | None,
                  say: Callable[[str], None]) -> list[Path]:
    """Write every output asked for (the formats, the gradebook, the similarity report) and say
    (on stderr, through ``say``) the roster's problems and the similar pairs found."""
    from judge.formats import write_all

    owner: dict[str, Any] = {}
    if people is not None:
        from judge.gradebook import match

        owner, problems = match(rows, people, str(roster))
        for problem in problems:
            say(problem)
    written = write_all(rows, exercise.slug, out, formats)
    if gradebook is not None and people is not None:
        from judge.formats import write_atomic
        from judge.gradebook import gradebook_csv

        written.append(out / f"gradebook-{gradebook}.csv")
        write_atomic(written[-1], gradebook_csv(gradebook, rows, people, owner, exercise.title))
    if similarity is not None:
        from judge.batch import find_students
        from judge.similarity import write_report

        pairs, report = write_report(find_students(submissions, exercise), exercise, rows, similarity, out)
        written += report
        say(f"{len(pairs)} pair{'s' if len(pairs) != 1 else ''} of submissions at or above "
            f"{similarity:.0%} similarity (see {written[-1]})")
    return written


def written_note(written: list[Path], out: Path) -> str:
    """What ``grind grade`` left under OUT, every entry named: the outputs asked for, plus the
    two it always keeps (the resumable per-student store and the run's log), so a listing of
    OUT never shows more than the message said."""
    outputs = [str(path.relative_to(out)) for path in written if path.parent == out]
    per_student = len(written) - len(outputs)
    if per_student:
        outputs.append(f"gradescope/ ({per_student} student file{'s' if per_student != 1 else ''})")
    return (f"Wrote under {out}: {', '.join(outputs) or 'no outputs'}; also graded/ (one stored result per "
            "student, reused when you run this again) and grade.log (this run's progress)")


# -- grind validate ---------------------------------------------------------------------------


def validate_exercises(catalog: Catalog, slug: str | None, every: bool, corpus: Path | None) -> list[Any]:
    """One adequacy report per exercise (``slug``, or all with ``every``). A broken exercise is
    its report's problem; a usage or environment problem is not the exercise's, and is raised."""
    from judge.adequacy import AdequacyReport, check_adequacy, golden_root
    from judge.corpus import default_root

    if every == (slug is not None):
        raise UsageError("give one exercise name, --all, or --quiz")
    slugs = catalog.slugs() if every else [slug or ""]
    if corpus is not None and not corpus.is_dir():
        raise UsageError(f"{corpus}: no such folder")
    corpus_root = corpus if corpus is not None else default_root()
    reports = []
    for name in slugs:
        try:
            reports.append(check_adequacy(catalog.get(name), determinism=True, corpus_root=corpus_root,
                                          golden=golden_root()))
        except ManifestError as exc:
            reports.append(AdequacyReport(name, problems=[exc.message]))
        except JudgeError as exc:
            if isinstance(exc, (UsageError, EnvironmentProblem)):  # not the exercise's fault: exit 2 / 5
                raise
            reports.append(AdequacyReport(name, problems=[exc.message]))
    return reports


# -- grind autograder build -------------------------------------------------------------------


def check_torch_version(torch_version: str | None) -> None:
    if torch_version is not None and not re.fullmatch(r"\d+(\.\d+){1,2}", torch_version):
        raise UsageError(f"--torch-version {torch_version!r}: give a version such as 2.13.0")


def refuse_inadequate(exercises: list[Exercise]) -> None:
    """A bundle of a broken exercise tells every student "the autograder crashed": refuse it here."""
    from judge.adequacy import check_adequacy

    for exercise in exercises:
        try:
            problems = check_adequacy(exercise).problems
        except UsageError:
            raise
        except JudgeError as exc:
            problems = [exc.message]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise JudgeError(f"refusing to build {exercise.slug}: it fails 'grind validate {exercise.slug}': "
                             f"{problems[0]}{more}")
