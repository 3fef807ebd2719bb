"""Landlock confinement (judge/worker/landlock.py), tested the way the child uses it: the file is
loaded by path under ``python -I`` in a fresh process, which confines itself and then probes.

Every denial is checked against a control taken in the same process just before restrict(), so
a check cannot pass because a path was missing or a listener was down. Checks that need a newer
ABI than this kernel has are skipped with the ABI they need named.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import site
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LANDLOCK = ROOT / "judge" / "worker" / "landlock.py"


def _load():
    """The module as the child loads it: by path, not as ``judge.worker.landlock``."""
    spec = importlib.util.spec_from_file_location("grind_landlock_under_test", LANDLOCK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ll = _load()
ABI = ll.abi()


def needs(version: int, what: str):
    return pytest.mark.skipif(ABI < version, reason=f"{what} needs Landlock ABI >= {version}; this kernel has {ABI}")


# A child's prelude: load landlock.py by path (argv[1]), read its arguments (argv[2]), and a
# probe() that records how each attempt ended. Probes run before and after restrict().
PRELUDE = r"""
import importlib.util, json, os, socket, sys
spec = importlib.util.spec_from_file_location("grind_landlock", sys.argv[1])
ll = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ll)
args = json.loads(sys.argv[2])
results = {}

def probe(name, fn):
    try:
        results[name] = ["ok", fn()]
    except PermissionError as exc:
        results[name] = ["denied", str(exc)]
    except BaseException as exc:
        results[name] = ["error", f"{type(exc).__name__}: {exc}"]

def write(path):
    with open(path, "w") as handle:
        handle.write("x")

def read(path):
    with open(path) as handle:
        return handle.read()

def connect_tcp():
    with socket.create_connection(("127.0.0.1", args["tcp_port"]), timeout=5):
        return None

def bind_tcp():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))

def connect_abstract():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect("\0" + args["abstract"])

def environ_of_parent():
    with open(f"/proc/{os.getppid()}/environ", "rb") as handle:
        return len(handle.read(1))
"""

CONFINED = PRELUDE + r"""
checks = {
    "read_hidden": lambda: read(args["secret"]),
    "read_hidden_in_site_packages": lambda: read(args["site_secret"]),
    "write_elsewhere": lambda: write(os.path.join(args["other"], when + ".txt")),
    "mknod_in_work": lambda: os.mknod(os.path.join(args["work"], when + "-null"), 0o666 | 0o020000, os.makedev(1, 3)),
    "kill_parent": lambda: os.kill(os.getppid(), 0),
    "environ_of_parent": environ_of_parent,
    "tcp_connect": connect_tcp,
    "tcp_bind": bind_tcp,
    "abstract_unix_connect": connect_abstract,
}
with open("/proc/self/status") as status:
    caps = int(next(line for line in status if line.startswith("CapEff:")).split()[1], 16)
results["cap_sys_admin"] = bool(caps & (1 << 21))
when = "before"
for name, fn in checks.items():
    probe("before:" + name, fn)

probe("restrict", lambda: ll.restrict(
    args["read"] + [args["only_readable_file"], "/nonexistent/grind-landlock"],
    [args["work"], args["only_writable_file"], "/dev/null"],
    list_only=args["list_only"],
))
if results["restrict"][0] != "ok":
    print(json.dumps(results))
    sys.exit(0)

when = "after"
for name, fn in checks.items():
    probe("after:" + name, fn)

probe("write_work", lambda: write(os.path.join(args["work"], "made.txt")))
probe("mkdir_work", lambda: os.mkdir(os.path.join(args["work"], "sub")))
probe("write_devnull", lambda: write("/dev/null"))
probe("write_only_writable_file", lambda: write(args["only_writable_file"]))
probe("create_next_to_writable_file", lambda: write(args["only_writable_file"] + ".new"))
probe("read_only_readable_file", lambda: read(args["only_readable_file"]))
probe("read_next_to_readable_file", lambda: read(args["next_to_readable_file"]))
probe("write_only_readable_file", lambda: write(args["only_readable_file"]))
probe("read_visible", lambda: read(args["visible"]))
probe("read_sibling_of_hidden", lambda: read(args["sibling"]))

def import_from_split_folder():
    sys.path.insert(0, args["pkgs"])
    import visible_mod
    return visible_mod.VALUE
probe("import_from_split_folder", import_from_split_folder)

def train():
    import numpy as np
    import torch
    from safetensors.numpy import load_file, save_file
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)  # imports torch._dynamo: needs TMPDIR
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    path = os.path.join(args["work"], "obs.safetensors")
    save_file({"w": model.weight.detach().numpy()}, path)
    return float(np.abs(load_file(path)["w"]).sum())
probe("torch", train)
print(json.dumps(results))
"""


def run_child(script: str, args: dict, **kwargs) -> dict:
    proc = subprocess.run(
        [kwargs.pop("python", sys.executable), "-I", "-c", script, kwargs.pop("landlock", str(LANDLOCK)),
         json.dumps(args)],
        capture_output=True, text=True, timeout=120, **kwargs,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _site_packages_secret() -> Path:
    """A real folder inside site-packages to hide, as the solutions are hidden in a regular
    install: site-packages is then split, and numpy and torch must still import from it."""
    for folder in site.getsitepackages():
        for entry in sorted(Path(folder).glob("*.dist-info")):
            if not entry.name.startswith(("numpy", "torch", "safetensors", "nvidia", "triton")):
                if (entry / "METADATA").exists():
                    return entry
    pytest.skip("no dist-info folder in site-packages to hide")


@pytest.fixture(scope="module")
def confined(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One confined child (importing torch costs seconds), probed for everything at once."""
    if ABI < 1:
        pytest.skip(f"confinement needs Landlock ABI >= 1; this kernel has {ABI}")
    base = tmp_path_factory.mktemp("landlock")
    root, work, other = base / "root", base / "work", base / "other"
    for folder in (root / "hidden", root / "pkgs" / "solutions", root / "pkgs" / "solutions2", work, other):
        folder.mkdir(parents=True)
    (root / "hidden" / "secret.txt").write_text("the reference")
    (root / "visible.txt").write_text("visible")
    (root / "pkgs" / "visible_mod.py").write_text("VALUE = 42\n")
    (root / "pkgs" / "solutions" / "answer.py").write_text("ANSWER = 1\n")
    (root / "pkgs" / "solutions2" / "ok.txt").write_text("ok")
    singles = base / "singles"
    singles.mkdir()
    for name in ("writable.txt", "readable.txt", "next_to_readable.txt"):
        (singles / name).write_text(name)

    site_secret = _site_packages_secret()
    hidden = [str(root / "hidden"), str(root / "pkgs" / "solutions"), str(site_secret)]
    extra = [str(root)]

    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(16)
    abstract = f"grind-landlock-test-{os.getpid()}"
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind("\0" + abstract)
    unix.listen(16)
    try:
        args = {
            "read": ll.read_roots(hidden, extra),
            "list_only": ll.listable_roots(hidden, extra),
            "secret": str(root / "hidden" / "secret.txt"),
            "site_secret": str(site_secret / "METADATA"),
            "visible": str(root / "visible.txt"),
            "sibling": str(root / "pkgs" / "solutions2" / "ok.txt"),
            "pkgs": str(root / "pkgs"),
            "work": str(work),
            "other": str(other),
            "only_writable_file": str(singles / "writable.txt"),
            "only_readable_file": str(singles / "readable.txt"),
            "next_to_readable_file": str(singles / "next_to_readable.txt"),
            "tcp_port": tcp.getsockname()[1],
            "abstract": abstract,
        }
        # What the worker's scrubbed environment does: scratch space is the writable folder.
        env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(work), "OMP_NUM_THREADS": "1"}
        results = run_child(CONFINED, args, env=env, cwd=str(work))
    finally:
        tcp.close()
        unix.close()
    results["_args"] = args
    return results


def _denied_after_allowed_before(results: dict, name: str) -> None:
    assert results[f"before:{name}"][0] == "ok", f"control failed, the check proves nothing: {results[f'before:{name}']}"
    assert results[f"after:{name}"][0] == "denied", results[f"after:{name}"]


# --- allow_except: a pure function of the paths and the file system -------------------------


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    a = tmp_path / "a"
    for folder in ("solutions", "solutions2", "sub/deep/hidden", "sub/deep/y", "sub/z"):
        (a / folder).mkdir(parents=True)
    (a / "keep.txt").write_text("k")
    (a / "solutions" / "ref.py").write_text("r")
    (a / "sub" / "deep" / "hidden" / "x").write_text("x")
    (tmp_path / "b").mkdir()
    return tmp_path.resolve()


def test_allow_except_splits_every_folder_above_a_nested_hidden_one(tree: Path) -> None:
    a = tree / "a"
    hidden = [str(a / "sub" / "deep" / "hidden")]
    assert ll.allow_except([str(a)], hidden) == sorted(
        str(p) for p in (a / "keep.txt", a / "solutions", a / "solutions2", a / "sub" / "deep" / "y", a / "sub" / "z")
    )
    assert ll.listable_except([str(a)], hidden) == [str(a), str(a / "sub"), str(a / "sub" / "deep")]


def test_allow_except_drops_a_root_that_is_hidden_or_inside_a_hidden_folder(tree: Path) -> None:
    a, b = tree / "a", tree / "b"
    assert ll.allow_except([str(a), str(b)], [str(b)]) == [str(a)]
    assert ll.allow_except([str(a / "solutions")], [str(a / "solutions")]) == []
    assert ll.allow_except([str(a / "solutions" / "ref.py")], [str(a / "solutions")]) == []


def test_allow_except_keeps_roots_when_hidden_is_outside_them(tree: Path) -> None:
    assert ll.allow_except([str(tree / "a")], [str(tree / "b")]) == [str(tree / "a")]
    assert ll.listable_except([str(tree / "a")], [str(tree / "b")]) == []


def test_allow_except_is_not_fooled_by_a_sibling_sharing_the_prefix(tree: Path) -> None:
    a = tree / "a"
    allowed = ll.allow_except([str(a)], [str(a / "solutions")])
    assert str(a / "solutions2") in allowed
    assert str(a / "solutions") not in allowed
    assert allowed == sorted(str(p) for p in (a / "keep.txt", a / "solutions2", a / "sub"))
    # and a hidden "solutions2" does not hide "solutions"
    assert str(a / "solutions") in ll.allow_except([str(a)], [str(a / "solutions2")])


def test_allow_except_resolves_symlinks_and_survives_loops(tree: Path) -> None:
    a = tree / "a"
    (a / "into_hidden").symlink_to(a / "solutions")  # an entry pointing at the hidden folder
    (a / "loop").symlink_to(a)  # an entry pointing back up
    (a / "elsewhere").symlink_to(tree / "b")  # outside the root: the whole root would not grant it
    (tree / "alias").symlink_to(a)  # a root given through a symlink
    allowed = ll.allow_except([str(tree / "alias")], [str(tree / "alias" / "solutions")])
    assert allowed == sorted(str(p) for p in (a / "keep.txt", a / "solutions2", a / "sub"))


def test_allow_except_deduplicates_and_drops_covered_and_missing_paths(tree: Path) -> None:
    a = tree / "a"
    roots = [str(a), str(a / "sub"), str(a) + "/", str(a / "sub" / "z"), str(tree / "missing")]
    assert ll.allow_except(roots, []) == [str(a)]


def test_read_roots_split_site_packages_around_a_regular_install_s_solutions(tmp_path: Path) -> None:
    """The layout of a non-editable install: solutions under site-packages/judge/_content."""
    sp = (tmp_path / "site-packages").resolve()
    for folder in ("numpy", "judge/worker", "judge/_content/solutions/clipping", "judge/_content/exercises"):
        (sp / folder).mkdir(parents=True)
    hidden = [str(sp / "judge" / "_content" / "solutions")]
    allowed = ll.read_roots(hidden, [str(sp)])
    assert str(sp / "numpy") in allowed
    assert str(sp / "judge" / "worker") in allowed
    assert str(sp / "judge" / "_content" / "exercises") in allowed
    assert not any(ll._within(p, hidden[0]) or ll._within(hidden[0], p) for p in allowed)
    assert ll.listable_roots(hidden, [str(sp)]) == [str(sp), str(sp / "judge"), str(sp / "judge" / "_content")]


def test_read_roots_cover_the_interpreter_and_the_packages_the_worker_imports() -> None:
    allowed = ll.read_roots([])
    covered = lambda path: any(ll._within(os.path.realpath(path), p) for p in allowed)  # noqa: E731
    for name in ("numpy", "torch", "safetensors"):
        spec = importlib.util.find_spec(name)
        assert spec is not None and covered(spec.origin), name
    assert covered(sys.prefix) and covered(sys.base_prefix) and covered(os.__file__)
    assert covered("/dev/null") and covered("/dev/urandom") and covered("/etc")
    assert not covered("/dev/sda") and "/dev" not in allowed  # raw disks stay out of reach
    assert len(allowed) < 100


def test_importing_the_module_has_no_side_effects() -> None:
    script = (
        "import importlib.util, sys, threading\n"
        f"spec = importlib.util.spec_from_file_location('m', {str(LANDLOCK)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "before = set(sys.modules)\n"
        "m.read_roots(['/nonexistent'])\n"
        "print(sorted(n for n in ('ctypes', 'torch', 'numpy', 'safetensors') if n in sys.modules),"
        " threading.active_count())\n"
    )
    proc = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]", "1"]


def test_every_right_of_the_newest_known_abi_is_handled() -> None:
    assert ll._ALL_FS == ll._fs_rights(ll.KNOWN_ABI)
    assert ll._fs_rights(1) & ll.FS_REFER == 0 and ll._fs_rights(2) & ll.FS_REFER
    assert ll._fs_rights(4) & ll.FS_IOCTL_DEV == 0 and ll._fs_rights(5) & ll.FS_IOCTL_DEV


def test_abi_never_raises_and_is_zero_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(ABI, int) and ABI >= 0
    monkeypatch.setattr(sys, "platform", "darwin")
    assert ll.abi() == 0


def test_macos_profile_denies_by_default_and_escapes_paths() -> None:
    profile = ll.macos_profile(["/usr", '/odd "name"'], ["/dev/null"])
    lines = profile.splitlines()
    assert lines[:2] == ["(version 1)", "(deny default)"]
    assert '(subpath "/odd \\"name\\"")' in profile
    assert any(line.startswith("(allow file-write*") and "/dev/null" in line and "/usr" not in line for line in lines)
    assert "(allow signal (target self))" in lines and "(allow signal (target children))" in lines
    assert "network" not in profile.replace("(deny network*)", "")


# --- A confined child ---------------------------------------------------------------------


def test_confined_child_trains_with_torch(confined: dict) -> None:
    assert confined["restrict"] == ["ok", min(ABI, ll.KNOWN_ABI)]
    assert confined["torch"][0] == "ok", confined["torch"]


def test_confined_child_writes_only_where_allowed(confined: dict) -> None:
    assert confined["write_work"][0] == "ok", confined["write_work"]
    assert confined["mkdir_work"][0] == "ok", confined["mkdir_work"]
    assert confined["write_devnull"][0] == "ok", confined["write_devnull"]
    _denied_after_allowed_before(confined, "write_elsewhere")
    assert not os.path.exists(os.path.join(confined["_args"]["other"], "after.txt"))


def test_confined_child_may_not_make_device_nodes(confined: dict) -> None:
    # As root, mknod works in the scratch folder before restrict(); a block node for the disk
    # would then open the raw device and bypass every rule.
    if confined["before:mknod_in_work"][0] != "ok":
        pytest.skip(f"mknod needs CAP_MKNOD, which this test process lacks: {confined['before:mknod_in_work']}")
    _denied_after_allowed_before(confined, "mknod_in_work")


def test_a_file_rule_covers_that_file_only(confined: dict) -> None:
    assert confined["write_only_writable_file"][0] == "ok", confined["write_only_writable_file"]
    assert confined["create_next_to_writable_file"][0] == "denied", confined["create_next_to_writable_file"]
    assert confined["read_only_readable_file"] == ["ok", "readable.txt"]
    assert confined["read_next_to_readable_file"][0] == "denied", confined["read_next_to_readable_file"]
    assert confined["write_only_readable_file"][0] == "denied", confined["write_only_readable_file"]


def test_confined_child_cannot_read_a_hidden_folder_inside_a_readable_root(confined: dict) -> None:
    _denied_after_allowed_before(confined, "read_hidden")
    assert confined["read_visible"] == ["ok", "visible"]
    assert confined["read_sibling_of_hidden"] == ["ok", "ok"]


def test_confined_child_imports_from_a_split_site_packages(confined: dict) -> None:
    """A hidden folder in site-packages (as in a regular install) splits it; numpy and torch
    still import (torch's result above), the hidden files stay closed."""
    _denied_after_allowed_before(confined, "read_hidden_in_site_packages")
    assert confined["import_from_split_folder"] == ["ok", 42]


def test_confined_child_cannot_read_the_parent_s_environment(confined: dict) -> None:
    # Landlock denies ptrace-mode reads (/proc/<pid>/environ, maps) of processes outside the
    # sandbox, but on Linux 6.18 a process holding CAP_SYS_ADMIN still reads environ and maps:
    # the worker must not run as root. The unprivileged test below checks the real setup.
    if confined["cap_sys_admin"]:
        pytest.skip("the child runs with CAP_SYS_ADMIN (root), which Landlock does not stop from reading "
                    "/proc/<pid>/environ; checked as nobody in test_an_unprivileged_user_can_confine_itself")
    _denied_after_allowed_before(confined, "environ_of_parent")


@needs(6, "denying signals to processes outside the sandbox")
def test_confined_child_cannot_signal_its_parent(confined: dict) -> None:
    _denied_after_allowed_before(confined, "kill_parent")


@needs(6, "denying connections to abstract unix sockets outside the sandbox")
def test_confined_child_cannot_reach_an_abstract_unix_socket(confined: dict) -> None:
    _denied_after_allowed_before(confined, "abstract_unix_connect")


@needs(4, "denying TCP")
def test_confined_child_has_no_tcp(confined: dict) -> None:
    _denied_after_allowed_before(confined, "tcp_connect")
    _denied_after_allowed_before(confined, "tcp_bind")


# --- Refusals ----------------------------------------------------------------------------------

STACK = PRELUDE + r"""
layers = 0
try:
    for _ in range(40):
        ll.restrict(["/usr"], [])
        layers += 1
    print(json.dumps({"layers": layers}))
except ll.LandlockError as exc:
    print(json.dumps({"layers": layers, "errno": exc.errno, "message": str(exc), "oserror": isinstance(exc, OSError)}))
"""


@needs(1, "a kernel refusal")
def test_a_kernel_refusal_is_a_one_line_landlock_error() -> None:
    # The kernel stacks at most 16 Landlock layers on a thread; the 17th is refused (E2BIG).
    result = run_child(STACK, {})
    assert result["layers"] == 16, result
    assert result["errno"] == 7 and result["oserror"], result
    assert "landlock_restrict_self" in result["message"] and "\n" not in result["message"]


THREADED = PRELUDE + r"""
import threading, time
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
probe("restrict", lambda: ll.restrict(["/usr"], []))
probe("read_after", lambda: len(read(args["file"])))  # nothing was confined
print(json.dumps(results))
"""


@needs(1, "restrict()")
def test_restrict_refuses_a_process_that_already_has_threads(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("abc")
    result = run_child(THREADED, {"file": str(tmp_path / "f.txt")})
    assert result["restrict"][0] == "error" and "single-threaded" in result["restrict"][1], result
    assert result["read_after"] == ["ok", 3]


EXECUTE = PRELUDE + r"""
import subprocess
probe("restrict", lambda: ll.restrict(args["read"], [], execute=args["execute"]))
probe("run_true", lambda: subprocess.run(["/bin/true"], check=True).returncode)
print(json.dumps(results))
"""


@needs(1, "restrict()")
def test_execute_defaults_to_the_read_paths_and_can_be_narrowed() -> None:
    read = ll.read_roots([])
    assert run_child(EXECUTE, {"read": read, "execute": None})["run_true"] == ["ok", 0]
    narrowed = run_child(EXECUTE, {"read": read, "execute": []})
    assert narrowed["run_true"][0] == "denied", narrowed


UNPRIVILEGED = PRELUDE + r"""
r, w = os.pipe()
pid = os.fork()
if pid:  # the unconfined parent, same user: only the confined child's reach is limited
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.waitpid(pid, 0)
    print(data.decode())
    sys.exit(0)
os.close(r)
checks = {
    "kill_parent": lambda: os.kill(os.getppid(), 0),
    "environ_of_parent": environ_of_parent,
    "read_hidden": lambda: read(args["secret"]),
    "write_elsewhere": lambda: write(os.path.join(args["other"], "f.txt")),
}
results["uid"] = os.getuid()
for name, fn in checks.items():
    probe("before:" + name, fn)
probe("restrict", lambda: ll.restrict(args["read"], [args["work"]], list_only=args["list_only"]))
for name, fn in checks.items():
    probe("after:" + name, fn)
probe("write_work", lambda: write(os.path.join(args["work"], "f.txt")))
probe("read_visible", lambda: read(args["visible"]))
os.write(w, json.dumps(results).encode())
os._exit(0)
"""


@pytest.fixture(scope="module")
def unprivileged() -> dict:
    """A child running as ``nobody`` with the system Python (the venv may sit under /root, which
    nobody cannot reach). It forks: the parent stays unconfined, the child confines itself and
    probes its parent, a process of the same user outside its sandbox."""
    import tempfile

    python = "/usr/bin/python3"
    if ABI < 1:
        pytest.skip(f"confinement needs Landlock ABI >= 1; this kernel has {ABI}")
    if os.geteuid() != 0 or not os.path.exists(python):
        pytest.skip("running as nobody needs root (to switch user) and /usr/bin/python3")
    base = Path(tempfile.mkdtemp(prefix="grind-landlock-"))
    try:
        base.chmod(0o755)
        shutil.copy(LANDLOCK, base / "landlock.py")
        for folder in ("root/hidden", "work", "other"):
            (base / folder).mkdir(parents=True)
        for folder in ("work", "other"):
            (base / folder).chmod(0o777)
        (base / "root" / "hidden" / "secret.txt").write_text("the reference")
        (base / "root" / "visible.txt").write_text("visible")
        roots = ["/usr", "/lib", "/lib64", "/bin", "/etc", "/proc", "/dev/null", "/dev/urandom", str(base)]
        hidden = [str(base / "root" / "hidden")]
        args = {
            "read": ll.allow_except(roots, hidden),
            "list_only": ll.listable_except(roots, hidden),
            "secret": hidden[0] + "/secret.txt",
            "visible": str(base / "root" / "visible.txt"),
            "work": str(base / "work"),
            "other": str(base / "other"),
        }

        def become_nobody() -> None:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)

        return run_child(UNPRIVILEGED, args, python=python, landlock=str(base / "landlock.py"),
                         env={"PATH": "/usr/bin:/bin"}, cwd=str(base / "work"), preexec_fn=become_nobody)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_an_unprivileged_user_can_confine_itself(unprivileged: dict) -> None:
    assert unprivileged["uid"] == 65534
    assert unprivileged["restrict"][0] == "ok", unprivileged["restrict"]
    for name in ("environ_of_parent", "read_hidden", "write_elsewhere"):
        _denied_after_allowed_before(unprivileged, name)
    assert unprivileged["write_work"][0] == "ok", unprivileged["write_work"]
    assert unprivileged["read_visible"] == ["ok", "visible"]


@needs(6, "denying signals to processes outside the sandbox")
def test_an_unprivileged_confined_child_cannot_signal_its_parent(unprivileged: dict) -> None:
    _denied_after_allowed_before(unprivileged, "kill_parent")


def test_a_submission_cannot_reach_a_unix_socket_of_the_host(tmp_path: Path) -> None:
    """A unix socket with a path (tmux's in /tmp, ssh-agent's, D-Bus's, docker.sock) is reached
    through the file system, and neither Landlock nor bubblewrap's network namespace stops a
    connect() to one: a submission drove a tmux server that way and read the reference (as root,
    outside bubblewrap). The child's seccomp filter refuses AF_UNIX sockets, cold and warm, at
    whatever sandboxed level this runs (root with bubblewrap; CI's laptop mode: Landlock)."""
    import threading

    from judge.catalog import Catalog
    from judge.worker.isolation import isolation

    from .conftest import graded_cold_and_warm

    if isolation().level not in ("bubblewrap", "landlock"):
        pytest.skip(f"isolation level {isolation().level}: no sandbox here")
    path = tmp_path / "service.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(tmp_path, 0o755)
    os.chmod(path, 0o777)  # as an unprivileged child (nobody) could reach a careless service's socket
    listener.listen(4)
    reached: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            reached.append(conn.recv(64))
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    learner = tmp_path / "clipping.py"
    learner.write_text(
        "import socket\n"
        "try:\n"
        "    _s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        f"    _s.connect({str(path)!r})\n"
        "    _s.sendall(b'reached')\n"
        "except OSError:\n"
        "    pass\n"
        + (ROOT / "tests" / "submissions" / "clipping" / "correct_loop.py").read_text())
    exercise = Catalog().get("clipping")
    try:
        cold, warm = graded_cold_and_warm(exercise, learner)
    finally:
        listener.close()
    assert cold.status.value == warm.status.value == "passed", (cold.message, warm.message)
    assert not reached, f"the submission reached a unix socket of the host: {reached}"
