"""``grind mcp``: grind as Model Context Protocol tools, on stdio, for an AI tutor.

A tutor beside a learner needs what the learner's terminal gives, as data rather than scraped
text: the exercises, a statement, a verdict on a submission, the next hint, the progress. Each
tool returns the JSON the matching ``--json`` command prints (``grind list --json``, ``grind run
--json``, ``grind progress --json``), or that command's error object with the tool result marked
as an error. The tools are the learner's, with the learner's rules (``judge.frontends.actions``):

- ``run_submission`` grades through the same sandbox, daemon and cache as ``grind run``, each
  grade in a process of its own (``actions.grade_in_child``), and records the attempt;
- ``next_hint`` records the hint as shown, so the verdicts and progress count it;
- ``solution`` answers only after a pass: there is no force here, because the one who would
  force it is the tutor, not the learner.

The server is built on the official ``mcp`` SDK (2.x, ``MCPServer``), imported here alone. It
serves the workspace found from its working folder (``grind mcp --workspace DIR`` sets it).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from judge.version import __version__
from judge.frontends import actions

INSTRUCTIONS = (
    "grind is a judge for ML-training interview exercises (gradient clipping, loss scaling, Adam, "
    "learning-rate schedules...). The learner writes each one from memory. Grade their code with "
    "run_submission and explain the verdict: it names the smallest failing input and, usually, the "
    "classic mistake. Prefer next_hint over writing the answer for them: hints are counted as hints. "
    "The reference solution is only available once the learner has passed."
)


def _result(produce: Callable[[], Any]) -> CallToolResult:
    """The tool's answer: the ``--json`` output as text (and as structured content when it is an
    object), or grind's error object as an error result. Nothing a submission or an argument
    does reaches the server as an exception."""
    try:
        data = produce()
    except Exception as exc:  # noqa: BLE001 - the boundary: an error result, never a crashed server
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(actions.error_json(exc), indent=2))],
                              is_error=True)
    text = json.dumps(data, indent=2)
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=data if isinstance(data, dict) else None)


def build() -> MCPServer:
    """The server and its tools."""
    server = MCPServer("grind", version=__version__, instructions=INSTRUCTIONS)

    @server.tool(description="List the exercises with title, topic, difficulty and the learner's status "
                             "(new, attempted, passed): the output of `grind list --json`.")
    def list_exercises() -> CallToolResult:
        return _result(actions.list_json)

    @server.tool(description="An exercise's statement (Markdown) with what the learner must define (entry), "
                             "its time limit and how many hints it has.")
    def show_exercise(exercise: str) -> CallToolResult:
        return _result(lambda: actions.statement_json(exercise))

    @server.tool(description="Grade a submission for an exercise, exactly as `grind run NAME --json` does, and "
                             "record the attempt in the learner's progress. Give the Python source as `source`, or "
                             "the path of a .py file inside the workspace as `path` (relative to it). The "
                             "verdict's status is passed, failed, error, timeout, crashed or forbidden; a failure "
                             "names the smallest failing input and the classic mistake (`pitfall`).")
    def run_submission(exercise: str, source: str | None = None, path: str | None = None) -> CallToolResult:
        return _result(lambda: actions.grade_in_child(
            exercise, source, path=None if path is None else actions.confined_path(path), label="mcp").to_json())

    @server.tool(description="Reveal the next hint for an exercise. It is recorded as a hint the learner has "
                             "seen, as `grind hint NAME` does; use it instead of giving the answer away.")
    def next_hint(exercise: str) -> CallToolResult:
        return _result(lambda: actions.next_hint(exercise))

    @server.tool(description="The learner's progress: status, best time, attempts, last practised and next "
                             "review per exercise, with totals and the streak (`grind progress --json`).")
    def progress() -> CallToolResult:
        return _result(actions.progress_json)

    @server.tool(description="The reference solution of an exercise, only once the learner has passed it; "
                             "before that this tool refuses (suggest a hint instead).")
    def solution(exercise: str) -> CallToolResult:
        return _result(lambda: actions.solution(exercise, force=False))

    return server


def serve() -> None:
    """Run the server on stdin/stdout until the client closes it."""
    build().run("stdio")
