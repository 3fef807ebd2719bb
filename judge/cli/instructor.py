"""The instructor's commands: new, validate, grade (registered on ``judge.cli.app``) and
``autograder build`` (its sub-app is added there); what they decide is in ``judge.classroom``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judge.catalog import Catalog
from judge.cli.shared import _exercise, app, complete_names, console
from judge.status import ExitStatus

autograder_app: typer.Typer = typer.Typer(help="Build course-platform bundles.")


@app.command()
def new(
    slug: str = typer.Argument(..., help="The new exercise's name, e.g. sgd-momentum."),
    kind: str = typer.Option("function", "--kind", "-k",
                             help="What the learner writes: function (of tensors), optimizer (a class run in "
                                  "lockstep with scripted gradients) or training (a loop driving an optimizer)."),
) -> None:
    """Scaffold a new exercise (both folders) on the author kit, from a template with TODOs."""
    from judge.scaffold import new_exercise

    made = new_exercise(Catalog(), slug, kind)
    if made.kit_copied is not None:
        typer.echo(f"Copied grind's author kit to {made.kit_copied} (checks and pitfalls import it as grind_kit).")
    typer.echo(f"Created {made.exercise_dir} and {made.solution_dir} ({kind}):")
    for path in made.files:
        typer.echo(f"  {path}")
    typer.echo(f"Next: replace every TODO (statement, contract, reference, cases, pitfalls), then run "
               f"'grind validate {slug}' until it is clean. The authoring guide is docs/authoring.md.")


@app.command()
def validate(
    slug: Optional[str] = typer.Argument(None, help="Exercise to validate.", autocompletion=complete_names),
    all_: bool = typer.Option(False, "--all", help="Validate every exercise."),
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="Folder with one folder of independently written "
                                          "submissions per exercise (default: the repository's tests/corpus)."),
    quiz: bool = typer.Option(False, "--quiz", help="Check the quiz decks (quiz/*.toml) only; --all checks them too."),
) -> None:
    """Prove exercises adequate: schema, reference (twice), stub, every pitfall caught and named.

    Also the share of the exercise's corpus named right, beside the share named wrongly. With
    --quiz (or --all), check the quiz cards: numbers agree with their formulas, choices are
    distinct, explanations are written."""
    catalog = Catalog()
    if quiz and slug is None and not all_:
        raise typer.Exit(int(_validate_quiz(catalog)))
    from judge.classroom import validate_exercises
    from judge.render import render_validation

    reports = validate_exercises(catalog, slug, all_, corpus)
    render_validation(console(), reports)
    decks_ok = _validate_quiz(catalog) == ExitStatus.PASSED if (all_ or quiz) else True
    raise typer.Exit(int(ExitStatus.PASSED if all(r.ok for r in reports) and decks_ok else ExitStatus.FAILED))


def _validate_quiz(catalog: Catalog) -> ExitStatus:
    """Check every quiz deck, print the table and problems, and say whether all are valid."""
    from judge.decks import validate_decks
    from judge.render import show
    from judge.views.screens import quiz_validation_view

    reports = validate_decks(catalog.slugs(), catalog.root)
    show(console(), quiz_validation_view(reports))
    return ExitStatus.PASSED if all(r.ok for r in reports) else ExitStatus.FAILED


@app.command("grade")
def grade_command(
    submissions: Path = typer.Argument(..., help="A folder with one NAME.py or NAME.ipynb file, or NAME/ folder, per student."),
    exercise_name: str = typer.Option(..., "--exercise", "-e", help="Exercise to grade against.",
                                      autocompletion=complete_names),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Submissions graded at once (default 2; local only)."),
    formats: list[str] = typer.Option(["csv", "json"], "--format", "-F",
                                      help="Outputs: csv, json, junit, gradescope (repeatable)."),
    out: Path = typer.Option(Path("grind-results"), "--out", "-o", help="Folder for the outputs."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Override the exercise's time limit (s)."),
    memory_mb: Optional[int] = typer.Option(None, "--memory-mb", help="Override the exercise's memory limit (MB)."),
    allow_weak_isolation: bool = typer.Option(
        False, "--allow-weak-isolation",
        help="Grade even where submissions can read each other and the reference (see grind doctor)."),
    roster: Optional[Path] = typer.Option(
        None, "--roster", help="CSV of 'file or folder name,student id', or with id, name and email columns: "
        "adds a student_id column and names who is missing."),
    gradebook: Optional[str] = typer.Option(
        None, "--gradebook", help="With --roster: also write gradebook-canvas.csv or gradebook-moodle.csv."),
    executor_name: str = typer.Option(
        "local", "--executor", help="Where to grade: local (this machine, --jobs at once) or dask (a Dask cluster)."),
    scheduler: Optional[str] = typer.Option(
        None, "--scheduler", help="With --executor dask: the scheduler's address, e.g. tcp://host:8786."),
    worker_wait: Optional[float] = typer.Option(
        None, "--worker-wait", min=1,
        help="With --executor dask: seconds to wait for a worker when the cluster has none (default 300)."),
    similarity: Optional[float] = typer.Option(
        None, "--similarity", min=0.01, max=1.0,
        help="Also write similarity.csv/.md: pairs of submissions at least this similar (0-1, e.g. 0.8; needs copydetect)."),
    regrade: list[str] = typer.Option(
        [], "--regrade", help="Grade again stored results with this status, e.g. timeout (repeatable)."),
    force: bool = typer.Option(False, "--force", help="Grade every submission again, ignoring stored results."),
) -> None:
    """Grade a whole class, resumably, into CSV / JSON / JUnit / Gradescope results."""
    from judge import classroom
    from judge.batch import find_students, grade_class
    from judge.render import grading_progress, render_class

    executor = classroom.executor_for(executor_name, jobs, scheduler, allow_weak_isolation, worker_wait)
    classroom.check_outputs(formats, regrade)
    exercise = _exercise(exercise_name)
    limits = classroom.limits(exercise, time_limit, memory_mb)
    people = classroom.read_roster(roster, gradebook)  # a bad roster stops us before any grading
    if similarity is not None:
        from judge.similarity import require_copydetect

        require_copydetect()  # missing: said now, not after the class is graded
    total = len(find_students(submissions, exercise))  # and so does a name collision
    with grading_progress(console(stderr=True), total) as tick:
        rows = grade_class(exercise, submissions, out, jobs=jobs or 2, limits=limits, on_done=tick, executor=executor,
                           regrade=set(regrade), force=force)
    written = classroom.write_outputs(rows, exercise, submissions, out, formats, people=people, roster=roster,
                                      gradebook=gradebook, similarity=similarity,
                                      say=lambda line: typer.echo(f"grind: {line}", err=True))
    render_class(console(), rows)
    typer.echo(classroom.written_note(written, out))


@autograder_app.command("build")
def autograder_build(
    slugs: list[str] = typer.Argument(..., help="Exercises to bundle (one bundle each).",
                                      autocompletion=complete_names),
    out: Path = typer.Option(Path("autograder"), "--out", "-o", help="Folder for the bundles."),
    torch_version: Optional[str] = typer.Option(
        None, "--torch-version",
        help="torch version setup.sh installs (default: this machine's, which computed the shipped reference)."),
    torch_index_url: str = typer.Option(
        "https://download.pytorch.org/whl/cpu", "--torch-index-url",
        help="Index setup.sh installs torch from (default: PyTorch's CPU wheels; the default index's are CUDA)."),
    wheelhouse: Optional[Path] = typer.Option(
        None, "--wheelhouse", help="Folder of wheels to ship in the bundle: setup.sh then installs offline from it."),
    allow_weak_isolation: bool = typer.Option(
        False, "--allow-weak-isolation",
        help="Let run_autograder grade where the image gives only limits-only isolation (see grind doctor), "
             "but only where submissions run as another user (nobody, which needs a Python every user can read); "
             "as the grader's own user (root without a sandbox) it still refuses."),
) -> None:
    """Build a ready-to-upload Gradescope autograder bundle for each exercise: sealed (the
    reference's and pitfalls' observations precomputed; the reference, pitfalls and oracle left
    out), grading-only dependencies pinned to this machine's versions, torch from its CPU index."""
    from judge.autograder import build
    from judge.classroom import check_torch_version, refuse_inadequate

    check_torch_version(torch_version)
    exercises = [_exercise(slug) for slug in slugs]
    refuse_inadequate(exercises)
    out.mkdir(parents=True, exist_ok=True)
    for exercise in exercises:
        archive = build(exercise, out, torch_version=torch_version, torch_index_url=torch_index_url,
                        wheelhouse=wheelhouse, allow_weak_isolation=allow_weak_isolation)
        typer.echo(f"{exercise.slug}: {archive}")
