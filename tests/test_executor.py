"""Grading asks an executor (judge/executor.py): the front (judge.grade.grade) hands a checked
submission to whichever executor it was given, grades cold when that one declines, and never
asks one about a file the static checks already judged. The daemon's messages (judge/daemon_wire.py)
are typed, and what comes back from the socket is parsed as untrusted data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge import pipeline
from judge.catalog import Catalog
from judge.daemon_wire import Answer, GradeRequest
from judge.executor import Executor, Submission
from judge.grade import grade, pick_executor
from judge.models import Status, Verdict

ROOT = Path(__file__).resolve().parents[1]
CORRECT = ROOT / "tests" / "submissions" / "clipping" / "correct_loop.py"


class Answering(Executor):
    """An executor that answers every submission itself (as the daemon does when it can)."""

    def __init__(self, answer: Verdict | None) -> None:
        self.answer = answer
        self.asked: list[Submission] = []

    def verdict(self, submission: Submission) -> Verdict | None:
        self.asked.append(submission)
        return self.answer


def test_an_executor_handed_to_grade_is_asked_and_its_verdict_is_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    exercise = Catalog().get("clipping")
    monkeypatch.setattr(pipeline.ColdExecutor, "verdict", lambda self, s: pytest.fail("graded cold as well"))
    given = Answering(Verdict(exercise=exercise.slug, status=Status.PASSED, message="from the executor"))
    verdict = grade(exercise, CORRECT, worker=given, speed=True)
    assert verdict.message == "from the executor" and verdict.submission == str(CORRECT)
    (asked,) = given.asked
    assert asked.filename == str(CORRECT.resolve()) and asked.speed and not asked.marked
    assert asked.source == CORRECT.read_text()


def test_an_executor_that_declines_leaves_the_submission_to_the_cold_path(monkeypatch: pytest.MonkeyPatch) -> None:
    exercise = Catalog().get("clipping")
    cold: list[Submission] = []

    def graded_cold(self: pipeline.ColdExecutor, submission: Submission) -> Verdict:
        cold.append(submission)
        return Verdict(exercise=exercise.slug, status=Status.FAILED, message="graded cold")

    monkeypatch.setattr(pipeline.ColdExecutor, "verdict", graded_cold)
    declining = Answering(None)
    verdict = grade(exercise, CORRECT, worker=declining)
    assert verdict.message == "graded cold" and cold == declining.asked


def test_a_file_the_static_checks_judge_never_reaches_an_executor(tmp_path: Path) -> None:
    exercise = Catalog().get("clipping")
    empty = tmp_path / "clipping.py"
    empty.write_text("\n")
    given = Answering(None)
    verdict = grade(exercise, empty, worker=given)
    assert verdict.status is Status.ERROR and "empty" in verdict.message and given.asked == []


def test_no_worker_means_the_cold_path_and_a_warm_server_means_the_warm_one() -> None:
    class Server:
        shut = False

        def run_job(self, job: object, limits: object) -> object:
            raise AssertionError("not run by picking")

    assert isinstance(pick_executor(None), pipeline.ColdExecutor)
    server = Server()
    warm = pick_executor(server)  # type: ignore[arg-type]  # a stand-in for WarmWorker: run_job and shut
    assert isinstance(warm, pipeline.WarmExecutor) and warm.worker is server
    given = Answering(None)
    assert pick_executor(given) is given


def _request(**changes: object) -> dict[str, object]:
    wire = GradeRequest(exercise_dir="/e", solutions_root="/s", exercise_key="k", cache_root="/c", source="x = 1\n",
                        filename="/f.py", limits={"wall_s": 3.0}, speed=True, key="d", hidden=["/h"]).to_wire()
    return {**json.loads(wire), **changes}


def test_a_grade_request_reads_back_as_it_was_sent() -> None:
    message = _request()
    assert message["op"] == "grade"
    parsed = GradeRequest.parse(message)
    assert parsed.source == "x = 1\n" and parsed.limits == {"wall_s": 3.0} and parsed.hidden == ["/h"] and parsed.speed


@pytest.mark.parametrize("changes", [{"source": 3}, {"filename": None}, {"exercise_dir": ["/e"]},
                                     {"limits": [1, 2]}, {"hidden": "/h"}])
def test_a_grade_request_with_a_field_of_the_wrong_kind_is_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        GradeRequest.parse(_request(**changes))


def test_an_answer_is_read_as_flags_and_a_raw_verdict_never_as_anything_more() -> None:
    answer = Answer.parse(json.dumps({"ok": "yes", "accepted": 0, "error": {"not": "text"}, "verdict": [1],
                                      "extra": "ignored"}).encode())
    assert answer.ok and not answer.accepted and answer.error == "" and answer.verdict == [1]
    with pytest.raises(ValueError):
        Answer.parse(b"[1, 2]")  # not an object
