"""On-disk cache of the reference's and pitfalls' observations.

They are deterministic, so computing them once per (exercise files, torch, judge) saves a whole
torch start on every later ``grind run``. Writes go to a private temp folder that is renamed into
place, so a reader sees either nothing or a complete entry, and two concurrent writers cannot
interleave: the second rename fails and its copy is discarded.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from judge.version import __version__
from judge import environment
from judge.kit import kit_dir
from judge.models import Exercise
from judge.sha import sha256

if TYPE_CHECKING:
    import numpy as np

    from judge.worker import protocol

# The trusted child's code (judge/worker/runner.py, its neighbours and the child/ package), found
# without importing it: a daemon-served `grind run` hashes it for the key, and never runs a child itself.
RUNNER = Path(__file__).with_name("worker") / "runner.py"  # judge.worker.isolation.RUNNER, not imported

KEPT = Path(__file__).with_name("kept.py")  # judge/kept.py: see _worker_digest

RESULT = "result.json"
OBSERVATIONS = "observations.safetensors"


_ROOT: list[Path] = []  # set by ``rooted_at`` while the daemon grades a client's job


def cache_root() -> Path:
    if _ROOT:
        return _ROOT[-1]
    env = os.environ.get("GRIND_CACHE_DIR")
    if env:
        return Path(env)
    from judge.userdirs import user_cache_dir

    return Path(user_cache_dir())


@contextmanager
def rooted_at(root: Path) -> Iterator[None]:
    """The cache of another process's settings: the per-user daemon grades for clients whose
    GRIND_CACHE_DIR may differ from its own (a course's folder, a test's), one job at a time."""
    _ROOT.append(root)
    try:
        yield
    finally:
        _ROOT.pop()


def torch_version() -> str:
    """Hashed into every key: judge.environment's reading of the installed metadata (importing
    torch here would cost a second), kept there once found."""
    return environment.torch_version() or "absent"


def _folder_files(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(".pyc")
    )


_WORKER_DIGEST: list[bytes] = []


def _bulk_sha256(data: bytes) -> str:
    """A reference's observations (up to tens of MB): hashlib's OpenSSL SHA-256 is about 5x the
    speed of Python's builtin one (judge.sha, which spares the client hashlib's import for its
    small digests): 21 ms against 118 ms for 38 MB. Only trusted code reading or writing a
    reference gets here, never a daemon-served run's client."""
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _worker_digest() -> bytes:
    """Every file the trusted child runs (the runner and the modules it loads beside it: ranks,
    guards, protocol...), hashed once per process: a change to any of them changes what is
    observed, and `grind validate` trusts a cached reference as much as grading does."""
    if not _WORKER_DIGEST:
        digest = sha256()
        for path in sorted(RUNNER.parent.rglob("*.py")):  # the child package (child/) included
            digest.update(path.relative_to(RUNNER.parent).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        # judge/kept.py rewrites a trusted job's observations before they are stored (the kept
        # checkpoint's facts): a change to it changes what the cache holds too
        digest.update(b"kept.py\0" + KEPT.read_bytes() + b"\0")
        _WORKER_DIGEST.append(digest.digest())
    return _WORKER_DIGEST[0]


def exercise_key(exercise: Exercise, extra: str = "") -> str:
    """Hash of everything that can change the observations. A sealed exercise (a Gradescope
    bundle's) has no reference left to hash: its key is the one it was built with."""
    if exercise.sealed_key:
        if not extra:
            return exercise.sealed_key
        return sha256(f"{exercise.sealed_key}\0{extra}".encode()).hexdigest()[:32]
    digest = sha256()
    for part in (__version__, torch_version(), sys.version.split()[0], extra):
        digest.update(part.encode() + b"\0")
    digest.update(_worker_digest())
    # The author kit (solutions/_kit) runs with every case: editing it recomputes every reference.
    kit = kit_dir(exercise)
    for label, folder in (("exercise", exercise.exercise_dir), ("solution", exercise.solution_dir), ("kit", kit)):
        digest.update(label.encode() + b"\0")
        for path in (_folder_files(folder) if folder.is_dir() else []):
            digest.update(str(path.relative_to(folder)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def has(slug: str, key: str) -> bool:
    """Cheap: is there an entry (not yet checked) for this key?"""
    return (cache_root() / f"{slug}-{key}" / RESULT).is_file()


def stamp(slug: str, key: str) -> tuple[int, ...] | None:
    """(inode, size, mtime) of an entry's two files, or None: whether it changed since it was read."""
    found: tuple[int, ...] = ()
    for name in (RESULT, OBSERVATIONS):
        try:
            info = os.stat(cache_root() / f"{slug}-{key}" / name, follow_symlinks=False)
        except OSError:
            return None
        found += (info.st_ino, info.st_size, info.st_mtime_ns)
    return found


def load(slug: str, key: str) -> tuple[protocol.Result, dict[str, np.ndarray]] | None:
    """The entry, parsed as strictly as a child's answer (opened without following links or
    blocking, sizes capped), or None if it is missing, unreadable or corrupt: it is then rebuilt.
    Whether it is complete is grade.reference_problem's question."""
    from judge.worker import protocol
    from judge.worker.sandbox import OBSERVATIONS_CAP, RESULT_CAP, read_regular

    try:
        dir_fd = os.open(cache_root() / f"{slug}-{key}", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        return parse_entry(read_regular(dir_fd, RESULT, RESULT_CAP),
                           read_regular(dir_fd, OBSERVATIONS, OBSERVATIONS_CAP))
    except (OSError, protocol.ProtocolError):
        return None
    finally:
        os.close(dir_fd)


def parse_entry(raw_result: bytes, raw_observations: bytes) -> tuple[protocol.Result, dict[str, np.ndarray]]:
    """An entry's two files, parsed as strictly as a child's answer; ProtocolError if corrupt."""
    from judge.worker import protocol
    from judge.worker.sandbox import OBSERVATIONS_CAP, RESULT_CAP, load_observations

    if len(raw_result) > RESULT_CAP or len(raw_observations) > OBSERVATIONS_CAP:
        raise protocol.ProtocolError("entry too large")
    result = protocol.parse_result(raw_result)
    if _bulk_sha256(raw_observations) != result.observations_sha256:
        raise protocol.ProtocolError("corrupt entry")
    return result, load_observations(raw_observations)


def entry_bytes(slug: str, key: str) -> tuple[bytes, bytes] | None:
    """The raw files of an entry (result.json, observations.safetensors), to hand to another
    machine (a Dask worker), which parses them with ``parse_entry`` before storing them."""
    from judge.worker import protocol
    from judge.worker.sandbox import OBSERVATIONS_CAP, RESULT_CAP, read_regular

    try:
        dir_fd = os.open(cache_root() / f"{slug}-{key}", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        return read_regular(dir_fd, RESULT, RESULT_CAP), read_regular(dir_fd, OBSERVATIONS, OBSERVATIONS_CAP)
    except (OSError, protocol.ProtocolError):
        return None
    finally:
        os.close(dir_fd)


def store(slug: str, key: str, result: protocol.Result, observations: dict[str, np.ndarray]) -> None:
    """Atomically publish one entry. Losing a race is fine: the winner's entry is identical."""
    from safetensors.numpy import save

    root = cache_root()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)  # no other user (nor nobody) reads it
    final = root / f"{slug}-{key}"
    raw = save(observations)
    document = dict(result.to_json(), observations_sha256=_bulk_sha256(raw), token="")
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix=f".{slug}-", dir=root))
    try:
        (tmp / OBSERVATIONS).write_bytes(raw)
        (tmp / RESULT).write_text(json.dumps(document), encoding="utf-8")
        for name in (OBSERVATIONS, RESULT):
            with open(tmp / name, "rb") as handle:
                os.fsync(handle.fileno())
        if final.exists() and load(slug, key) is None:
            shutil.rmtree(final, ignore_errors=True)  # a broken entry from a crash: replace it
        try:
            os.rename(tmp, final)
        except OSError:
            pass  # another grind published the same entry first
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


TIMINGS = "reference-seconds.json"  # how long each exercise's reference took to compute, here


def reference_seconds(slug: str) -> float | None:
    """How long the last computation of ``slug``'s reference took on this machine (None: never
    measured): the first run of an exercise says "about N s" instead of a silent wait."""
    try:
        value = json.loads((cache_root() / TIMINGS).read_text(encoding="utf-8")).get(slug)
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) and value >= 0 else None


def record_reference_seconds(slug: str, seconds: float) -> None:
    """Remember ``seconds`` for ``slug`` (kept by ``clear``: the timing outlives the entries).
    Best effort: a lost update between two writers only makes one estimate stale."""
    path = cache_root() / TIMINGS
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data = data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        data = {}
    data[slug] = round(seconds, 1)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def reference_note(exercise: Exercise) -> str | None:
    """What to say before a grade that must first compute the reference's observations (no
    cache entry for these files, this torch and this grind), so the first run of an exercise
    does not sit on "checking..." for seconds without a word; None when they are cached."""
    if has(exercise.slug, exercise_key(exercise)):
        return None
    seconds = reference_seconds(exercise.slug)
    how_long = (f"about {max(1, round(seconds))} s" if seconds is not None
                else f"up to {round(exercise.time_limit)} s")
    return (f"Computing {exercise.slug}'s reference once ({how_long}); later runs reuse it.")


def clear() -> int:
    """Remove every cached entry; return how many there were."""
    import shutil

    root = cache_root()
    if not root.is_dir():
        return 0
    entries = [p for p in root.iterdir() if p.is_dir()]
    for entry in entries:
        shutil.rmtree(entry, ignore_errors=True)
    return len([e for e in entries if not e.name.startswith(".")])
