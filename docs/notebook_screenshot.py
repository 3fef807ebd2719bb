"""Make the README's notebook screenshots: a real notebook, run in a real kernel, rendered to HTML
by nbconvert and captured by headless Chromium.

    python docs/notebook_screenshot.py        # writes docs/notebook-verdict.png, docs/notebook-curve.png

Needs the notebook extra, nbclient and nbconvert, and a `chromium` (or `chromium-browser`,
`google-chrome`) on PATH. The notebooks run in a scratch workspace with a state folder of their
own, so the screenshots never touch your progress.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbclient
import nbformat
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "tests" / "submissions"


def _answer(path: Path) -> str:
    """A golden submission without the test suite's "# expect:" line."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(lines[1:] if lines and lines[0].startswith("# expect:") else lines).lstrip("\n")


def _notebook(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.cells = [nbformat.v4.new_markdown_cell(text) if kind == "md" else nbformat.v4.new_code_cell(text)
                for kind, text in cells]
    return nb


def _capture(nb: nbformat.NotebookNode, folder: Path, name: str, height: int) -> Path:
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    page = folder / f"{name}.html"
    page.write_text(html, encoding="utf-8")
    browser = next(b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b))
    target = ROOT / "docs" / f"{name}.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--window-size=1000,{height}", f"--screenshot={target}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    return target


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        os.environ["GRIND_STATE_DIR"] = str(folder / "state")
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        per_tensor = _answer(SUBMISSIONS / "clipping" / "pitfall_per_tensor.py")
        (folder / "scaler.py").write_text(_answer(SUBMISSIONS / "loss-scaling" / "learner_no_reset.py"))
        verdict = _notebook([("md", "## Gradient clipping, graded in the notebook"), ("code", "%load_ext judge"),
                             ("code", f"%%grind clipping\n{per_tensor}")])
        curve = _notebook([("md", "## A loss scaler, graded from Python"), ("code", "import judge"),
                           ("code", 'judge.check("loss-scaling", open("scaler.py").read())')])
        for nb, name, height in ((verdict, "notebook-verdict", 1010), (curve, "notebook-curve", 1320)):
            print(_capture(nb, folder, name, height))


if __name__ == "__main__":
    sys.exit(main())
