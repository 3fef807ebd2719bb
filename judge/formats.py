"""Batch results in the formats course platforms read: CSV, JSON, JUnit XML, Gradescope.

Every writer takes rows of ``{"student", "sha256", "verdict"}`` where ``verdict`` is
``Verdict.to_json()``, so a resumed run (rows read back from disk) and a fresh one render the same.

Rows hold learner text. ``to_json`` escapes it, but rows stored by an older grind, and student
names taken from file names (which may not be UTF-8), did not pass through it, so every writer
escapes again (``safe_data``; XML also forbids most control characters). Files are replaced
atomically: an LMS or a CI job reading ``junit.xml`` never sees half of one, even if grind is
killed while writing.
"""

from __future__ import annotations

import csv
import io
import json
import os
import threading
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from judge.text import safe_data, xml_safe

FORMATS = ("csv", "json", "junit", "gradescope")
VISIBLE_KINDS = {"example"}  # worked examples are public; hidden cases stay hidden


Points = float | int


def points(value: float) -> Points:
    """A mark as people write it: 3, not 3.0; 2.5 stays 2.5 (weights may be fractions)."""
    return int(value) if float(value).is_integer() else round(float(value), 4)


def worth(check: dict[str, Any], weights: dict[str, float] | None) -> float:
    """What one check is worth: its case's weight from ``[marks] weights``, else 1."""
    return (weights or {}).get(stable_name(check), 1.0)


def earned(check: dict[str, Any], weights: dict[str, float] | None, partial: bool = False) -> float:
    """What one check earns: its weight if it passed; with ``[marks] partial``, a failed case of
    several inputs earns the share of its inputs that passed (1 of 4 failed: 0.75 of its weight);
    otherwise nothing. A check that could not run (error, not run) earns nothing either way."""
    if check["status"] == "passed":
        return worth(check, weights)
    inputs, failed = int(check.get("inputs") or 1), int(check.get("inputs_failed") or 0)
    if partial and check["status"] == "failed" and inputs > 1 and 0 <= failed < inputs:
        return worth(check, weights) * (inputs - failed) / inputs
    return 0.0


def score(verdict: dict[str, Any], max_score: Points | None = None,
          weights: dict[str, float] | None = None, partial: bool = False) -> tuple[Points, Points]:
    """(points, out of): each passed check earns its case's weight (1 unless the exercise's
    ``[marks] weights`` says otherwise; with ``[marks] partial``, see ``earned``). ``max_score``
    is the exercise's, which a class run sets on every row, so a crash is 0 out of the same total
    as a pass."""
    checks = verdict.get("checks") or []
    total = max_score or max(sum(worth(c, weights) for c in checks), 1)
    if verdict["status"] == "forbidden":
        return 0, points(total)
    return points(sum(earned(c, weights, partial) for c in checks)), points(total)


def row_score(row: dict[str, Any]) -> tuple[Points, Points]:
    return score(row["verdict"], row.get("max_score"), row.get("weights"), bool(row.get("partial")))


def weigh(rows: list[dict[str, Any]], weights: dict[str, float], cases: list[str], partial: bool = False) -> None:
    """Put an exercise's marks on every row of a class: ``weights`` (every case, 1 where the
    exercise named none), ``max_score`` (their sum) and ``partial``. A class run (the Gradescope
    bundle's too) calls this, so every format scores the same rows the same way."""
    full = {case: float(weights.get(case, 1.0)) for case in cases}
    for row in rows:
        row["weights"] = dict(full)
        row["max_score"] = points(sum(full.values()))
        if partial:
            row["partial"] = True


def stable_name(check: dict[str, Any]) -> str:
    """A check's name without the failing input: ``random``, pass or fail, so a platform tracking
    a test across students and runs sees one test. Results stored before ``case`` existed carry
    the input in the name (``random[size=1, seed=0]``) when it failed; it is cut off here."""
    if check.get("case"):
        return str(check["case"])
    name = str(check["name"])
    if name.endswith("]") and "[" in name and str(check.get("message", "")).startswith("fails on "):
        return name[:name.index("[")]
    return name


def _named(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pitfall the verdict names: a compound diagnosis names two (or more), all of which an
    instructor's summary must show, not only the first."""
    return verdict.get("pitfalls") or ([verdict["pitfall"]] if verdict.get("pitfall") else [])


def _pitfall(verdict: dict[str, Any]) -> str:
    return " + ".join(p["name"] for p in _named(verdict))


def to_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    ids = any("student_id" in row for row in rows)  # a roster was given
    # A weighted exercise adds a column per case, "name (weight)", holding the points each earned.
    cases = next((list(row["weights"]) for row in rows if row.get("weights")), [])
    writer.writerow(["student", *(["student_id"] if ids else []), "status", "score", "max_score", "pitfall",
                     "message", "sha256", "duration_s", *(f"{c} ({points(rows[0]['weights'][c])})" for c in cases)])
    for row in safe_data(rows):
        v = row["verdict"]
        got, total = row_score(row)
        got_by_case = {stable_name(c): points(earned(c, row.get("weights"), bool(row.get("partial"))))
                       for c in v.get("checks") or [] if v["status"] != "forbidden"}
        writer.writerow([row["student"], *([row.get("student_id", "")] if ids else []), v["status"], got, total,
                         _pitfall(v), v["message"].replace("\n", " "), row["sha256"], v.get("duration_s", ""),
                         *(got_by_case.get(c, 0) for c in cases)])
    return out.getvalue()


def to_json(rows: list[dict[str, Any]]) -> str:
    """Every row as stored, with its ``score`` added (weighted, as in every other format)."""
    return json.dumps(safe_data([{**row, "score": row_score(row)[0]} for row in rows]), indent=2)


def _failure_text(check: dict[str, Any]) -> str:
    lines = [check["message"]]
    if check["name"] != stable_name(check):  # the stable name hides which input failed: say it here
        lines.append(f"failing input: {check['name']}")
    for label in ("input", "expected", "got"):
        if check.get(label) is not None:
            lines.append(f"{label}: {json.dumps(check[label])[:500]}")
    if check.get("pitfall"):
        lines.append(f"diagnosis: {check['pitfall']}")
    return "\n".join(lines)


def to_junit(rows: list[dict[str, Any]], exercise: str) -> str:
    """One <testsuite> per student, one <testcase> per check; a submission that could not run is
    one <testcase name="load"> with an <error>."""
    suites = ET.Element("testsuites", name=f"grind {exercise}")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for row in _xml_data(rows):
        counts = _junit_suite(suites, row, exercise)
        for key, value in counts.items():
            if key in totals:
                totals[key] += value
    for key, value in totals.items():
        suites.set(key, str(value))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _junit_suite(suites: ET.Element, row: dict[str, Any], exercise: str) -> dict[str, int]:
    """One student's <testsuite>, added to ``suites``; its counts (also set on it)."""
    v = row["verdict"]
    suite = ET.SubElement(suites, "testsuite", name=row["student"], time=f"{v.get('duration_s', 0):.3f}")
    properties = ET.SubElement(suite, "properties")
    if row.get("student_id"):
        ET.SubElement(properties, "property", name="student_id", value=row["student_id"])
    got, total = row_score(row)  # JUnit has no marks: the weighted score rides as properties
    ET.SubElement(properties, "property", name="score", value=str(got))
    ET.SubElement(properties, "property", name="max_score", value=str(total))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    checks = v.get("checks") or []
    if not checks or v["status"] == "forbidden":
        case = ET.SubElement(suite, "testcase", classname=f"{exercise}.{row['student']}", name="load", time="0")
        ET.SubElement(case, "error" if v["status"] != "forbidden" else "failure",
                      message=v["message"][:500], type=v["status"]).text = v["message"]
        counts["tests"] += 1
        counts["errors" if v["status"] != "forbidden" else "failures"] += 1
    for check in checks if v["status"] != "forbidden" else []:
        outcome = _junit_case(suite, row, check, exercise)
        counts["tests"] += 1
        if outcome:
            counts[outcome] += 1
    for key, value in counts.items():
        suite.set(key, str(value))
    return counts


def _junit_case(suite: ET.Element, row: dict[str, Any], check: dict[str, Any], exercise: str) -> str | None:
    """One check's <testcase>, added to ``suite``; "failures" or "errors" if it counts as one."""
    case = ET.SubElement(suite, "testcase", classname=f"{exercise}.{row['student']}",
                         name=stable_name(check), time="0")
    if row.get("weights"):
        ET.SubElement(ET.SubElement(case, "properties"), "property", name="weight",
                      value=str(points(worth(check, row["weights"]))))
    if check["status"] == "failed":
        ET.SubElement(case, "failure", message=check["message"][:500],
                      type=check.get("pitfall") or "wrong answer").text = _failure_text(check)
        return "failures"
    if check["status"] in ("error", "not_run"):
        ET.SubElement(case, "error", message=check["message"][:500], type=check["status"]).text = \
            _failure_text(check)
        return "errors"
    return None


def _xml_data(value: Any) -> Any:
    """``value`` with every string in it allowed in an XML document (see ``xml_safe``)."""
    if isinstance(value, str):
        return xml_safe(value)
    if isinstance(value, dict):
        return {key: _xml_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_xml_data(item) for item in value]
    return value


def to_gradescope(row: dict[str, Any]) -> dict[str, Any]:
    """Gradescope's results.json for one student: each check worth its case's weight (1 unless
    ``[marks] weights`` says otherwise); worked examples visible,
    hidden cases hidden (their names only say which kind of case failed)."""
    v = safe_data(row["verdict"])
    checks = v.get("checks") or []
    got, total = row_score(row)
    tests = []
    if not checks or v["status"] == "forbidden":
        # worth the whole exercise, so the tests add up to max_score as they do for a graded row
        tests.append({"name": "submission loads and follows the rules", "score": 0, "max_score": total,
                      "status": "failed", "output": v["message"], "visibility": "visible"})
    else:
        for number, check in enumerate(checks, start=1):
            passed = check["status"] == "passed"
            visible = check["kind"] in VISIBLE_KINDS
            output = "" if passed else (_failure_text(check) if visible else check["message"].split(":")[0])
            weight = points(worth(check, row.get("weights")))
            tests.append({"name": stable_name(check) if visible else f"hidden {check['kind']} case {number}",
                          "number": str(number), "max_score": weight,
                          "score": points(earned(check, row.get("weights"), bool(row.get("partial")))),
                          "status": "passed" if passed else "failed", "output": output,
                          "visibility": "visible" if visible else "hidden"})
    summary = v["message"]
    for pitfall in _named(v):
        summary += f"\nDiagnosis: {pitfall['name']}. {pitfall['explanation']}"
    # What was not run (a notebook's `!pip` line, its plotting cells) is the student's to know:
    # on Gradescope this output is all they see.
    summary += "".join(f"\nNote: {notice}" for notice in v.get("notices") or [])
    return {"score": float(got), "max_score": float(total), "output": summary,
            "execution_time": round(float(v.get("duration_s", 0))), "tests": tests,
            "stdout_visibility": "hidden"}


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, then rename it over
    ``path``: readers see the old file or the new one, never a partial one. The temporary name
    is private to this process and thread, so concurrent writers never share one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_all(rows: list[dict[str, Any]], exercise: str, out_dir: Path, formats: list[str]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if "csv" in formats:
        written.append(out_dir / "summary.csv")
        write_atomic(written[-1], to_csv(rows))
    if "json" in formats:
        written.append(out_dir / "results.json")
        write_atomic(written[-1], to_json(rows))
    if "junit" in formats:
        written.append(out_dir / "junit.xml")
        write_atomic(written[-1], to_junit(rows, exercise))
    if "gradescope" in formats:
        for row in rows:
            # The folder keeps the student's own name, byte for byte; only the contents are escaped.
            path = out_dir / "gradescope" / row["student"] / "results.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(to_gradescope(row), indent=2))
            written.append(path)
    return written
