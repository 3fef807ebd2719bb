"""The notebook and MCP front ends, driven by real clients: a real ``.ipynb`` executed by nbclient
on an ipykernel kernel, and ``grind mcp`` driven by the mcp SDK's own stdio client.

Both grade through the same core as ``grind run`` (cold here: the suite starts no daemon, see
conftest), so these tests check what only a real client shows: that the cell is what gets
graded, that the verdict reaches the notebook as HTML and text, that a hostile cell leaves the
kernel alive, that errors are messages and not tracebacks, and that the MCP tools answer with
the CLI's JSON and keep the learner's rules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.progress import Progress
from judge.views.verdict import SeriesView, VerdictView

from .conftest import ROOT, SUBMISSIONS

CORRECT = (SUBMISSIONS / "clipping" / "correct_loop.py").read_text(encoding="utf-8")
PER_TENSOR = (SUBMISSIONS / "clipping" / "pitfall_per_tensor.py").read_text(encoding="utf-8")
HOSTILE = """\
import os, signal
# everything a cell could try against the process that graded it, then against its own
try:
    os.kill(os.getppid(), signal.SIGKILL)
except OSError:
    pass
try:
    os.killpg(0, signal.SIGKILL)
except OSError:
    pass
os._exit(0)
"""

# Run a notebook in a real kernel (nbclient on ipykernel's python3), in the notebook's folder as
# Jupyter would, and save it with its outputs.
EXECUTE = """\
import sys, nbclient, nbformat
source, target = sys.argv[1:]
nb = nbformat.read(source, as_version=4)
nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
nbformat.write(nb, target)
"""


@pytest.fixture()
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace made by `grind init --notebook`, with a user state folder of its own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "user-state"))
    result = CliRunner().invoke(app, ["init", "ws", "--notebook"])
    assert result.exit_code == 0, result.output
    assert "clipping/clipping.ipynb" in result.output
    return tmp_path / "ws"


def _outputs(cell: dict) -> tuple[str, str, list[dict]]:
    """A cell's displayed HTML and plain text, and its error outputs (tracebacks)."""
    html = "".join(o.get("data", {}).get("text/html", "") for o in cell["outputs"])
    text = "".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in cell["outputs"])
    return html, text, [o for o in cell["outputs"] if o["output_type"] == "error"]


def test_a_notebook_grades_cells_in_a_real_kernel_which_survives_a_hostile_one(
        workspace: Path) -> None:
    """The starter notebook `grind init --notebook` wrote, run in a real kernel with cells added:
    a correct cell passes and is recorded, a per-tensor cell is named as such, a function from
    another cell is graded with its imports, a syntax error and an unknown name are one message
    each, and after a cell that kills what it can the same kernel still answers."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    path = workspace / "clipping" / "clipping.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    starter = [c.source for c in nb.cells]
    assert starter[0].startswith("# ") and "clip_grad_norm_" in starter[0]  # the statement, as Markdown
    assert starter[2] == "%load_ext judge" and starter[3].startswith("%%grind clipping\n")
    code = nbformat.v4.new_code_cell
    body = "\n".join(line for line in CORRECT.splitlines() if line.strip() != "import torch")
    nb.cells = nb.cells[:3] + [
        code("import os, judge\nprint(judge.__file__, os.getpid())"),  # 3
        code(f"%%grind clipping\n{CORRECT}"),  # 4: passes
        code(f"%%grind clipping\n{PER_TENSOR}"),  # 5: the classic mistake, named
        code(f"%%grind clipping\n{HOSTILE}"),  # 6: hostile
        code("print('alive', os.getpid())"),  # 7
        code("import torch"),  # 8
        code(body),  # 9: the function, without its import
        code("result = judge.check('clipping', clip_grad_norm_)\nresult"),  # 10
        code("judge.check('clipping', 'def clip_grad_norm_(:\\n')"),  # 11: a syntax error
        code("%%grind clippin\nx = 1"),  # 12: an unknown exercise
        code("%grind_hint clipping"),  # 13
        code("%grind_solution clipping"),  # 14: after the pass above
    ]
    nbformat.write(nb, path)
    # Executed from a process of its own: the kernel's parent is then that process, so a regression
    # that ran the hostile cell in the kernel would kill it (and fail here), not pytest. The kernel
    # must import this checkout's judge (the one under test), not an installed one.
    executed = path.with_name("executed.ipynb")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", EXECUTE, str(path), str(executed)], env=env, cwd=path.parent,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, (run.returncode, run.stderr[-3000:])
    cells = nbformat.read(executed, as_version=4).cells

    judge_file, kernel_pid = _outputs(cells[3])[1].split()
    assert judge_file == str(ROOT / "judge" / "__init__.py")

    html, text, errors = _outputs(cells[4])
    assert not errors
    assert "PASSED" in text and "All checks passed" in text
    assert 'class="grind-status"' in html and ">PASSED<" in html

    html, text, errors = _outputs(cells[5])
    assert not errors and "FAILED" in text
    assert "Diagnosis: per-tensor clipping" in text
    assert "per-tensor clipping" in html and "grind-pitfall" in html and "First failure" in html
    assert "Input" in html and "Each tensor was clipped by its own norm" in html

    html, text, errors = _outputs(cells[6])
    assert not errors and ("CRASHED" in text or "ERROR" in text), text
    assert _outputs(cells[7])[1].split() == ["alive", kernel_pid]  # the very same kernel process

    html, text, errors = _outputs(cells[10])
    assert not errors and "PASSED" in text, text

    html, text, errors = _outputs(cells[11])
    assert not errors and "ERROR" in text and "SyntaxError" in text

    html, text, errors = _outputs(cells[12])
    assert not errors and "Unknown exercise 'clippin'. Did you mean 'clipping'?" in text
    assert "Traceback" not in text

    assert "Hint 1 of" in _outputs(cells[13])[1]
    assert "Reference solution: clipping" in _outputs(cells[14])[1]

    # Recorded in the workspace's progress, as `grind run` records: the pass and the hint.
    with Progress(workspace / ".grind" / "progress.db") as state:
        verdicts = [a.verdict for a in state.attempts("clipping")]
        assert "passed" in verdicts and "failed" in verdicts
        assert state.passed("clipping") and state.hints_revealed("clipping") == 1


def test_the_solution_stays_hidden_before_a_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """judge.solution before any pass is a message naming the way to force it; forced, it shows."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    import judge

    hidden = judge.solution("clipping")
    assert not hidden and "have not passed 'clipping'" in repr(hidden) and "--force" in repr(hidden)
    assert "def clip_grad_norm_" not in hidden._repr_html_()
    assert "def clip_grad_norm_" in repr(judge.solution("clipping", force=True))


def test_the_html_verdict_escapes_learner_text_and_draws_the_curve() -> None:
    """Learner-made text is never markup, and a per-step difference is drawn as two SVG lines
    with the first differing step marked (what a colour terminal plots)."""
    from judge.models import CheckStatus, Status
    from judge.render.html import html
    from judge.views.verdict import CheckRow, DiagnosisBlock, series_view

    series = series_view({"expected": [0.0, 0.5, 1.0, 1.0, 0.5], "got": [0.0, 0.5, 1.0, 0.8, float("nan")],
                          "first_step": 1}, "lr per step")
    assert isinstance(series, SeriesView)
    view = VerdictView(title="lr-schedule · Warmup", status=Status.FAILED, message="1 of 2 checks passed.",
                       lead=[], checks=[CheckRow(CheckStatus.FAILED, "<script>alert(1)</script>", "edge", "a < b")],
                       failure="x", details=[("Input", '{"a": "<b>"}')], series=series,
                       diagnoses=[DiagnosisBlock("Diagnosis", "decays to zero", ["It ends at 0 & not the floor."])],
                       output=[], notices=[], footer="")
    page = html(view)
    assert "<script>" not in page and "&lt;script&gt;" in page and "a &lt; b" in page
    assert page.count("<path ") == 2 and "first difference: step 4" in page
    assert "decays to zero" in page and "0 &amp; not" in page


def test_grind_mcp_with_the_sdks_stdio_client(tmp_path: Path) -> None:
    """`grind mcp` in a workspace, driven by the SDK's stdio client: the tools are listed; a
    correct answer passes and a per-tensor one fails named, each the JSON of `grind run --json`;
    an unknown exercise, an early solution and a file outside the workspace are error results; a
    hint is counted; progress
    shows the pass; and the server is still serving after all of it."""
    pytest.importorskip("mcp")
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    result = CliRunner().invoke(app, ["init", str(tmp_path / "ws")])
    assert result.exit_code == 0, result.output
    (tmp_path / "ws" / "clipping" / "clipping.py").write_text(CORRECT, encoding="utf-8")
    (tmp_path / "answer.py").write_text(CORRECT, encoding="utf-8")  # outside the workspace
    env = {"PYTHONPATH": str(ROOT), "GRIND_NO_DAEMON": "1", "GRIND_STATE_DIR": str(tmp_path / "state"),
           "GRIND_CACHE_DIR": os.environ["GRIND_CACHE_DIR"]}
    params = StdioServerParameters(command=sys.executable, args=["-m", "judge", "mcp", "--workspace",
                                                                 str(tmp_path / "ws")], env=env, cwd=str(tmp_path))

    async def session_run() -> dict[str, object]:
        seen: dict[str, object] = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            seen["tools"] = sorted(t.name for t in (await session.list_tools()).tools)

            async def call(name: str, **arguments: object) -> tuple[bool, object]:
                answer = await session.call_tool(name, arguments)
                return bool(answer.is_error), json.loads(answer.content[0].text)

            seen["early_solution"] = await call("solution", exercise="clipping")
            seen["wrong"] = await call("run_submission", exercise="clipping", source=PER_TENSOR)
            seen["hint"] = await call("next_hint", exercise="clipping")
            seen["outside"] = await call("run_submission", exercise="clipping", path=str(tmp_path / "answer.py"))
            seen["right"] = await call("run_submission", exercise="clipping", path="clipping/clipping.py")
            seen["unknown"] = await call("run_submission", exercise="clippin", source="x = 1")
            seen["statement"] = await call("show_exercise", exercise="clipping")
            seen["progress"] = await call("progress")
            seen["list"] = await call("list_exercises")
        return seen

    seen = anyio.run(session_run)
    assert seen["tools"] == ["list_exercises", "next_hint", "progress", "run_submission", "show_exercise",
                             "solution"]
    failed, early = seen["early_solution"]
    assert failed and early["error"]["kind"] == "usage" and "have not passed" in early["error"]["message"]
    failed, wrong = seen["wrong"]
    assert not failed and wrong["status"] == "failed" and wrong["pitfall"]["slug"] == "per-tensor"
    assert wrong["pitfall"]["name"] == "per-tensor clipping"
    assert set(wrong) >= {"exercise", "status", "checks", "pitfalls", "notices", "isolation"}  # run --json's keys
    failed, hint = seen["hint"]
    assert not failed and hint["number"] == 1 and hint["counted"]
    failed, outside = seen["outside"]
    assert failed and "inside" in outside["error"]["message"]  # a tutor grades the workspace's files only
    failed, right = seen["right"]
    assert not failed and right["status"] == "passed", right
    failed, unknown = seen["unknown"]
    assert failed and "Did you mean 'clipping'?" in unknown["error"]["message"]
    assert seen["statement"][1]["statement"].startswith("# ")
    row = next(e for e in seen["progress"][1]["exercises"] if e["slug"] == "clipping")
    assert row["status"] == "passed" and row["attempts"] == 2
    assert next(e for e in seen["list"][1] if e["slug"] == "clipping")["status"] == "passed"
    # the attempts went to the workspace's database, not the per-user one
    assert (tmp_path / "ws" / ".grind" / "progress.db").is_file()


def test_init_notebook_never_overwrites_a_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second `grind init --notebook` keeps the learner's notebooks as they are."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRIND_STATE_DIR", str(tmp_path / "state"))
    assert CliRunner().invoke(app, ["init", "ws", "--notebook"]).exit_code == 0
    mine = tmp_path / "ws" / "adam" / "adam.ipynb"
    mine.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', encoding="utf-8")
    again = CliRunner().invoke(app, ["init", "ws", "--notebook"])
    assert again.exit_code == 0 and "kept your existing notebooks" in again.output and "adam" in again.output
    assert json.loads(mine.read_text(encoding="utf-8"))["cells"] == []
    starter = json.loads((tmp_path / "ws" / "clipping" / "clipping.ipynb").read_text(encoding="utf-8"))
    assert starter["cells"][3]["source"][0] == "%%grind clipping\n"
