"""The architecture stays visible: torch only where learner or reference code runs, rich behind
the render package and typer behind the CLI, and a wheel that carries the exercises."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "judge"
CLI = {f"cli/{p.name}" for p in (PACKAGE / "cli").glob("*.py")}  # the adapter package: typer and consoles


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("module, allowed", [
    ("typer", CLI),
    ("fsrs", {"scheduling.py"}),
    ("watchfiles", {"watch.py"}),
    ("sqlite3", {"progress.py"}),
    ("distributed", {"cluster.py"}),  # grind grade --executor dask, an optional extra
    ("dask", {"cluster.py"}),
    ("IPython", {"frontends/notebook.py"}),  # the notebook extra: %load_ext judge
    ("mcp", {"frontends/mcp_server.py"}),  # the mcp extra: grind mcp
    ("mcp_types", {"frontends/mcp_server.py"}),
])
def test_heavy_and_ui_imports_stay_in_their_module(module: str, allowed: set[str]) -> None:
    """typer only in cli; the fsrs scheduler, file watching, SQLite and Dask each behind their
    one module."""
    users = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if module in _imports(p)}
    assert users <= allowed


CHILD = PACKAGE / "worker" / "child"


def test_torch_is_imported_only_by_the_child_package() -> None:
    """torch only where learner or reference code runs: the child package (judge/worker/child),
    and repro_runtime, imported only by a `grind run --repro` script in the learner's own
    process. The rule names the package, so a new room of the child may import torch too."""
    users = {p for p in PACKAGE.rglob("*.py") if "torch" in _imports(p)}
    outside = {str(p.relative_to(PACKAGE)) for p in users if CHILD not in p.parents}
    assert outside <= {"repro_runtime.py"}
    assert any(CHILD in p.parents for p in users)  # the check looks where torch is


def test_the_child_package_imports_nothing_of_the_judge() -> None:
    """The child loads its package by path under a name of its own, with ``judge`` refused: its
    modules import the standard library and their siblings (relatively), never ``judge``, and
    the worker's modules beside it that the child also loads stay stdlib-only the same way."""
    child_side = [*CHILD.glob("*.py"), *(PACKAGE / "worker" / name for name in (
        "runner.py", "protocol.py", "process.py", "guards.py", "heap.py", "integrity.py", "landlock.py",
        "kernel.py", "poison.py", "witness.py"))]
    for path in child_side:
        assert "judge" not in _imports(path), path


def test_the_worker_has_no_import_circle() -> None:
    """Policy (isolation) and mechanism (sandbox) depend one way, and the parent's modules reach
    the process primitives through judge.worker.process, never through the child package: the
    graph of judge.worker's own imports has no cycle, type-only imports included."""
    graph: dict[str, set[str]] = {}
    for path in (PACKAGE / "worker").rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        graph[name] = {target for target in _worker_targets(path, name) if target != name}
    seen: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        seen[node] = 1
        for target in sorted(graph.get(node, ())):
            assert seen.get(target) != 1, " -> ".join([*stack, node, target])
            if target in graph and target not in seen:
                visit(target, [*stack, node])
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node, [])
    child_side = {n for n in graph if n.startswith("judge.worker.child")} | {"judge.worker.runner"}
    for node in set(graph) - child_side:
        assert not graph[node] & child_side, f"{node} imports the child side ({graph[node] & child_side})"


def _worker_targets(path: Path, name: str) -> set[str]:
    """The judge.worker modules ``path`` imports, absolute or relative, at any depth."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}")
                found.add(base)
    return {_module_of(t) for t in found if t.startswith("judge.worker")} - {""}


def _module_of(target: str) -> str:
    """``target`` trimmed to a module or package that exists (a name imported from a module)."""
    parts = target.split(".")
    while parts:
        candidate = PACKAGE.parent.joinpath(*parts)
        if candidate.with_suffix(".py").is_file() or (candidate / "__init__.py").is_file():
            return ".".join(parts)
        parts.pop()
    return ""


def test_rich_is_imported_only_by_the_render_package_and_the_cli() -> None:
    """Screens are drawn in judge/render/ alone (the cli/ package makes the console): the report facade,
    the view models and the rest of the core never import rich themselves."""
    users = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if "rich" in _imports(p)}
    assert {user for user in users if not user.startswith("render/")} <= CLI
    assert "render/styled.py" in users  # the rich renderer is where the check looks for it


def test_view_models_import_neither_rich_nor_typer(tmp_path: Path) -> None:
    """judge.views is plain data: building every screen's model loads no UI library, directly or
    through anything it imports."""
    views = list((PACKAGE / "views").rglob("*.py"))
    assert len(views) >= 2
    for path in views:
        assert not _imports(path) & {"rich", "typer"}, path
    code = ("import sys, judge.views, judge.views.screens, judge.views.verdict\n"
            "print(sorted(m for m in ('rich', 'typer') if m in sys.modules))")
    assert _torch_loaded_after(code, tmp_path) == "[]"


def test_the_fast_run_entry_imports_no_typer_rich_numpy_nor_torch(tmp_path: Path) -> None:
    """judge/entry.py is what every `grind` imports first, and judge/fast_run.py what a
    daemon-served `grind run` runs to its end: at import they, and every module that run loads
    until it draws (the catalog, the recording, the daemon's client, the verdict's view model and
    plain renderer), load no typer, no rich, no numpy and no torch. The full CLI is imported only
    for what it must answer."""
    for module in ("entry.py", "fast_run.py"):
        assert not _imports(PACKAGE / module) & {"typer", "rich", "numpy", "torch", "click"}, module
    code = ("import sys, judge.entry, judge.fast_run, judge.grade, judge.daemon, judge.outcome, judge.catalog, "
            "judge.render.direct, judge.render.plain, judge.views.verdict\n"
            "print(sorted(m for m in ('typer', 'rich', 'numpy', 'torch', 'click') if m in sys.modules))")
    assert _torch_loaded_after(code, tmp_path) == "[]"


def _torch_loaded_after(code: str, cwd: Path) -> str:
    env = dict(os.environ, GRIND_STATE_DIR=str(cwd / "state"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr


def test_importing_the_cli_does_not_import_torch(tmp_path: Path) -> None:
    assert _torch_loaded_after("import sys, judge.cli; print('torch' in sys.modules)", tmp_path) == "False"


@pytest.mark.parametrize("entry", ["judge.cli", "judge.entry"])
@pytest.mark.parametrize("argv", [["--help"], ["list"], ["run", "clipping"]])
def test_commands_in_the_parent_never_import_torch(argv: list[str], entry: str, tmp_path: Path) -> None:
    """`grind --help`, `grind list`, and even a full `grind run` keep torch out of the parent,
    through the full CLI and through the console script's fast entry."""
    code = (
        f"import sys\nfrom {entry} import main\n"
        f"sys.argv = ['grind', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('torch' in sys.modules)"
    )
    assert _torch_loaded_after(code, tmp_path) == "False"


def test_wheel_ships_exercises_and_works_from_any_directory(tmp_path: Path) -> None:
    """A non-editable install carries exercises/ and solutions/ and grades from anywhere."""
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next(tmp_path.glob("grind-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "judge/_content/exercises/clipping/exercise.toml" in names
    assert "judge/_content/solutions/clipping/reference.py" in names
    assert "judge/_content/quiz/clipping.toml" in names  # grind quiz's cards travel too
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=str(target), GRIND_STATE_DIR=str(tmp_path / "state"))
    code = "import judge.catalog as c; print(c.content_root())"
    root = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert root.stdout.strip() == str(target / "judge" / "_content")
    run = subprocess.run([sys.executable, "-m", "judge", "run", "clipping"], cwd=elsewhere, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "worked_example" in run.stdout


def test_ci_runs_the_readmes_test_command() -> None:
    """The README's one-command setup ends with the test command, and CI's last step is that very
    command: a change to one that forgets the other would make CI test something users do not."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = next(line for line in readme.splitlines() if 'pip install -e ".[test' in line and "pytest" in line)
    command = setup.rsplit("&&", 1)[1].strip()
    assert re.fullmatch(r"python -m pytest( -n \d+)?", command), command
    steps = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith(("#", "echo"))]
    assert steps[-1] == command, f".ci/run ends with {steps[-1]!r}, the README says {command!r}"


def test_the_architecture_docs_picture_is_the_code_as_it_is() -> None:
    """docs/architecture.md shows docs/import_graph.py's output: a room added or an import that
    changes the arrows must be redrawn (run the script, paste its output between the markers)."""
    import runpy

    graph = runpy.run_path(str(ROOT / "docs" / "import_graph.py"))["mermaid"]()
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = doc.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block == graph, "docs/architecture.md's picture is stale: rerun python docs/import_graph.py"


def test_no_module_of_judge_imports_another_in_a_circle_even_on_first_use() -> None:
    """Issue 35: grade and the daemon imported each other, and so did the worker's isolation and
    sandbox. Counting imports made inside functions too (TYPE_CHECKING blocks aside), the modules
    of judge/ form no circle: a room depends on the rooms below it and never back."""
    import runpy

    graph_module = runpy.run_path(str(ROOT / "docs" / "import_graph.py"))
    modules: set[str] = graph_module["MODULES"]
    edges: dict[str, set[str]] = {}
    for path in sorted((ROOT / "judge").rglob("*.py")):
        name = graph_module["module_name"](path)
        targets = set()
        for target, _lazy in graph_module["imports"](path, name):
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != name:
                targets.add(target)
        edges[name] = targets

    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                circles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert not circles, circles[:3]


@pytest.mark.parametrize("xdg_runtime", [False, True])
def test_a_fast_run_loads_neither_hashlib_tempfile_nor_platformdirs(xdg_runtime: bool, tmp_path: Path) -> None:
    """What a daemon-served `grind run` works out (the hidden folders, the socket's folder, the
    exercise's cache key, the daemon's key, the source's digest, the progress database's folder),
    with no XDG folder set (the socket then lives under the temporary folder, the cache under
    ~/.cache) and with a private XDG_RUNTIME_DIR (a laptop's session): without tempfile (which
    loads shutil and random), platformdirs and hashlib (which loads OpenSSL), about 7 ms of
    every such run."""
    script = ("import sys\n"
              "import judge.entry, judge.fast_run, judge.grade, judge.daemon, judge.outcome\n"
              "from judge import cache, daemon_wire, paths, progress\n"
              "from judge.catalog import Catalog\n"
              "exercise = Catalog().get('clipping')\n"
              "paths.hidden_from_learners(exercise); paths.runtime_dir(); paths.runtime_problem()\n"
              "cache.exercise_key(exercise); daemon_wire.key_of(daemon_wire.identity())\n"
              "daemon_wire.socket_path(paths.runtime_dir()); progress.source_hash('x = 1')\n"
              "from judge.workspace import progress_path; progress_path(None)\n"
              "print(sorted(m for m in ('hashlib', 'tempfile', 'platformdirs', 'shutil', '_hashlib') "
              "if m in sys.modules))\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "XDG_STATE_HOME", "GRIND_CACHE_DIR", "GRIND_STATE_DIR",
                        "GRIND_RUNTIME_DIR")}
    env.update(HOME=str(tmp_path), TMPDIR=str(tmp_path))
    if xdg_runtime:
        (tmp_path / "run").mkdir(mode=0o700)
        env["XDG_RUNTIME_DIR"] = str(tmp_path / "run")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip().splitlines()[-1:] == ["[]"], (done.stdout, done.stderr)
    assert (tmp_path / "run" / "grind").is_dir() == xdg_runtime
