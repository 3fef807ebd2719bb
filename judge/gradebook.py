"""A class's marks as a learning platform imports them: a roster, and a gradebook CSV for Canvas
or Moodle (``grind grade --roster roster.csv --gradebook canvas``).

The roster is the course's list of students, not the class folder's: a gradebook has one line per
student on it, so a student who handed nothing in gets 0 there and is named, and an entry of
the class folder that matches nobody on it is named too (its marks would otherwise be lost in
silence, or given to nobody). Two roster shapes are read:

- the original two columns, ``file or folder name,student id`` (an optional header line);
- a roster with a header naming its columns, as a platform exports it: a student id (``id``,
  ``student id``, ``sis user id``, ``id number``), a ``name``, an ``email``, and optionally the
  ``submission`` (``file``, ``folder``, ``username``, ``login``) the student's entry is named by.
  Without that column an entry is matched by the student id, the email, or the email's user
  name (``ann.lee`` for ``ann.lee@uni.example``), the names platforms give submission folders.

Standard library only (the core): the CLI writes what ``gradebook_csv`` returns.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.errors import UsageError

LEGACY_HEADERS = {"file", "folder", "name", "student", "submission", "file or folder", "file or folder name"}
COLUMNS = {
    "submission": {"submission", "file", "folder", "file or folder", "file or folder name", "username", "login",
                   "sis login id", "login id"},
    "student_id": {"id", "student id", "student_id", "sis user id", "id number", "idnumber", "student number"},
    "name": {"name", "full name", "student name", "student"},
    "email": {"email", "email address", "e-mail", "mail"},
}
GRADEBOOKS = ("canvas", "moodle")


@dataclass
class Person:
    """One student on the roster, and the names their entry in the class folder may have."""

    student_id: str
    name: str = ""
    email: str = ""
    keys: list[str] = field(default_factory=list)  # candidate entry names, first is the one named


def _columns(header: list[str]) -> dict[str, int] | None:
    """Which roster column holds what, for a header that names an email or a name: None for the
    original two-column roster (whose header, if any, names only the file and the id)."""
    found: dict[str, int] = {}
    for index, cell in enumerate(header):
        label = cell.strip().lower()
        for what, names in COLUMNS.items():
            if label in names and what not in found:
                found[what] = index
                break
    if "email" not in found and "name" not in found:
        return None
    if "student_id" not in found:
        raise UsageError(f"the roster's header ({','.join(header)}) names no student id column "
                         "(id, student id, sis user id or id number)")
    return found


def read_people(path: Path) -> list[Person]:
    """Every student on the roster at ``path``, in its order; a malformed line is one line naming
    file and line, before anything is graded."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the roster ({exc.__class__.__name__}: {exc})") from None
    lines = [(n, [c.strip() for c in cells]) for n, cells in enumerate(csv.reader(io.StringIO(text)), start=1)
             if any(c.strip() for c in cells)]
    if not lines:
        return []
    try:
        columns = _columns(lines[0][1])
    except UsageError as exc:
        raise UsageError(f"{path}:{lines[0][0]}: {exc.message}") from None
    if columns is None:  # file or folder name, student id
        return _two_columns(path, lines)
    return _with_header(path, lines[1:], columns)


def _two_columns(path: Path, lines: list[tuple[int, list[str]]]) -> list[Person]:
    """The original roster: ``file or folder name,student id`` lines, an optional header first."""
    people: list[Person] = []
    seen: dict[str, int] = {}
    for number, cells in lines:
        if number == lines[0][0] and cells[0].lower() in LEGACY_HEADERS:
            continue
        if len(cells) < 2 or not cells[0] or not cells[1]:
            raise UsageError(f"{path}:{number}: expected 'file or folder name,student id', got {','.join(cells)!r}")
        name = cells[0].rstrip("/")
        if name in seen:
            raise UsageError(f"{path}:{number}: {name!r} is listed twice; keep one line per student")
        seen[name] = number
        people.append(Person(cells[1], keys=[name]))
    return people


def _with_header(path: Path, lines: list[tuple[int, list[str]]], columns: dict[str, int]) -> list[Person]:
    """A platform's roster: the columns its header named, one student a line."""
    people: list[Person] = []
    seen: dict[str, int] = {}
    for number, cells in lines:
        def cell(what: str, cells: list[str] = cells) -> str:
            index = columns.get(what)
            return cells[index] if index is not None and index < len(cells) else ""

        student_id, email = cell("student_id"), cell("email")
        if not student_id:
            raise UsageError(f"{path}:{number}: no student id on this line ({','.join(cells)!r})")
        if student_id in seen:
            raise UsageError(f"{path}:{number}: student id {student_id!r} is listed twice (first on line "
                             f"{seen[student_id]}); keep one line per student")
        seen[student_id] = number
        keys = [cell("submission").rstrip("/")] if cell("submission") else []
        keys += [student_id, *([email, email.split("@", 1)[0]] if email else [])]
        people.append(Person(student_id, cell("name"), email, [k for k in keys if k]))
    return people


def match(rows: list[dict[str, Any]], people: list[Person], source: str = "roster") -> tuple[dict[str, Person], list[str]]:
    """Which roster line each row (a student of the class folder) is: sets ``student_id`` on
    every row (empty for none) and returns {row's student: person} and one line per roster
    student with no entry and per entry on no roster line."""
    students = {row["student"] for row in rows}
    owner: dict[str, Person] = {}
    problems = []
    for person in people:
        found = _entry_of(person, students, owner)
        who = f"{person.name} ({person.student_id})" if person.name else f"{person.keys[0]} ({person.student_id})"
        if found is None:
            problems.append(f"{source}: {who} has no entry in the class folder")
        else:
            owner[found] = person
    for row in rows:
        entry = owner.get(row["student"])
        row["student_id"] = entry.student_id if entry else ""
        if entry is None:
            problems.append(f"{source}: no line for {row['student']}; its student_id is left empty")
    return owner, problems


def _entry_of(person: Person, students: set[str], owner: dict[str, Person]) -> str | None:
    """The first of the person's names (as given, or without .py or .ipynb) that is an entry of
    the class folder not already someone's."""
    for key in person.keys:
        for candidate in (key, key[:-3] if key.endswith(".py") else None, key[:-6] if key.endswith(".ipynb") else None):
            if candidate and candidate in students and candidate not in owner:
                return candidate
    return None


def gradebook_csv(kind: str, rows: list[dict[str, Any]], people: list[Person], owner: dict[str, Person],
                  title: str) -> str:
    """The gradebook to import: one line per roster student, in roster order, with the score
    (0 for a student with no entry). ``canvas``: the columns of a Canvas gradebook export
    (Student, ID, SIS User ID, SIS Login ID, Section, then the assignment; its Points Possible
    line first), matched on SIS User ID. ``moodle``: Full name, ID number, Email address and the
    grade item, for Moodle's CSV grade import (map "ID number" or "Email address" to the user)."""
    from judge.formats import row_score
    from judge.text import safe

    if kind not in GRADEBOOKS:
        raise UsageError(f"--gradebook {kind!r}: choose from {', '.join(GRADEBOOKS)}")
    row_of = {row["student"]: row for row in rows}
    by_person = {id(person): row_of[student] for student, person in owner.items()}
    total = next((row_score(row)[1] for row in rows), 0)
    out = io.StringIO()
    writer = csv.writer(out)
    if kind == "canvas":
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", title])
        writer.writerow(["    Points Possible", "", "", "", "", total])
    else:
        writer.writerow(["Full name", "ID number", "Email address", title])
    for person in people:
        row = by_person.get(id(person))
        got = row_score(row)[0] if row is not None else 0
        if kind == "canvas":
            writer.writerow([safe(person.name), "", person.student_id, person.email, "", got])
        else:
            writer.writerow([safe(person.name), person.student_id, person.email, got])
    return out.getvalue()
