"""A distributed case in the job: its call on every rank of the subject's rank pool (ranks.py),
each rank's observations read back and kept as "rank r: key", a rank's failure made the case's
record."""

from __future__ import annotations

import os
from typing import Any

from .. import protocol as _protocol
from . import ranks as _ranks
from .run import Run, reseed
from .values import BadOutput, describe_exception, to_array


def _rank_body(run: Run, subject: Any, filename: str) -> Any:
    """What a rank of a subject's pool does with one case: make the instance's inputs as the
    child made them (the same seed, the same factory), call the case, and write its observations
    as a safetensors file named by the command."""
    np, torch = run.np, run.torch
    from safetensors.numpy import save_file

    instances = {instance["name"]: instance for instance in run.instances}

    def body(rank: int, command: dict[str, Any]) -> dict[str, Any]:
        instance = instances[command["name"]]
        case = instance["case"]
        os.environ[_protocol.KEPT_VARIABLE] = command["kept"]  # this case's kept folder (judge/kept.py)
        try:
            reseed(torch)
            inputs = case["inputs"](**instance["params"]) if "inputs" in case else {}
            raw = case["call"](subject, **inputs)
            if type(raw) is not dict:
                raise BadOutput("the case did not produce observations")
            arrays = {}
            for key, value in raw.items():
                try:
                    arrays[str(key)] = np.ascontiguousarray(to_array(value, np, torch))
                except BadOutput as exc:
                    raise BadOutput(f"{key}: {exc}") from None
            breaches = run.check_integrity()  # before the observations leave this rank
            if not breaches:
                save_file(arrays, f"{command['base']}-rank{rank}.safetensors")
            record: dict[str, Any] = {"status": "ok", "keys": list(arrays)}
        except BadOutput as exc:
            record = {"status": "bad_output", "message": str(exc)}
        except BaseException as exc:  # noqa: BLE001 - a learner's exception is data
            record = {"status": "error", "error": describe_exception(exc, filename)}
        os.environ.pop(_protocol.KEPT_VARIABLE, None)
        run.check_integrity()
        record["forbidden"] = list(run.guards.hits) if run.guards else []
        return record

    return body


def close_rank_pools(run: Run, subject_id: str | None = None) -> None:
    """Kill the ranks kept for ``subject_id`` (every subject's when None)."""
    for key in [k for k in run.rank_pools if subject_id is None or k[0] == subject_id]:
        run.rank_pools.pop(key).close()


def observe_ranks(run: Run, subject_id: str, subject: Any, name: str, case: dict[str, Any], filename: str) -> Any:
    """One distributed case (see ranks.py): the case's call on every rank of the subject's rank
    pool (made at its first distributed case, kept for the next ones), each rank's observations
    kept as "rank r: key". A rank that raised makes the case's error (the lowest such rank, named);
    a rank that died or ranks that deadlocked make an error saying where every rank was."""
    world = int(case["world_size"])
    run.distributed_cases += 1
    base = os.path.join(run.job["out_dir"], f"ranks-{run.distributed_cases}")
    pool = run.rank_pools.get((subject_id, world))
    if pool is None or not pool.healthy():
        pool = _ranks.RankPool(run.torch.distributed, world, base + ".store", _rank_body(run, subject, filename))
        run.rank_pools[(subject_id, world)] = pool
    # The folder grind reads after the run (judge/kept.py), named so that grind finds it without
    # this process's word; made here, before any rank runs the case.
    kept = os.path.join(run.job["out_dir"], _protocol.KEPT, _protocol.kept_folder(subject_id, name))
    os.makedirs(kept, exist_ok=True)
    seen: dict[int, list[int]] = {}
    held: list[int] = []
    outcome = pool.run({"name": name, "base": base, "kept": kept}, lambda rank: _seen_when_done(kept, rank, seen),
                       lambda rank: _held(kept, held))
    records = outcome.get("ranks") or outcome.get("records") or {}
    if isinstance(records, list):
        records = dict(enumerate(records))
    for record in records.values():
        if run.guards:
            run.guards.hits.extend(h for h in record.get("forbidden", []) if h not in run.guards.hits)
    failed = _failed(records, outcome.get("failure"))
    if failed is not None:
        return failed
    for look in seen.values():
        look.append(held[0] if held else -1)  # the first grant's ctime: judge/kept.py compares it
    return _read_ranks(run, subject_id, name, base, records, seen)


def _seen_when_done(kept: str, rank: int, seen: dict[int, list[int]]) -> None:
    """The moment rank ``rank``'s record arrives: what stood at the kept checkpoint's path then
    ([inode, ctime in ns, size] of a regular file, -1s for nothing else). Taken here, in the
    process that watches the ranks, on the kernel's word, before any held save is let go (the
    watcher reads every record before it grants: ranks.hold_save): nothing the ranks run later,
    a forked process that touches the file after the rank returned included, changes what was
    seen (judge/kept.py)."""
    import stat as _stat

    try:
        info = os.stat(os.path.join(kept, _protocol.KEPT_CHECKPOINT), follow_symlinks=False)
        seen[rank] = [info.st_ino, info.st_ctime_ns, info.st_size] if _stat.S_ISREG(info.st_mode) else [-1, -1, -1]
    except OSError:
        seen[rank] = [-1, -1, -1]


def _held(kept: str, held: list[int]) -> None:
    """The moment the watcher lets a held save go: a file of a new random name in the kept
    folder, whose ctime (the kernel's, the clock the checkpoint's ctime is on) says when. Only
    the first grant is kept; judge/kept.py says a checkpoint was written by a held save when its
    last change came no earlier. Made here, in the process that watches the ranks: no rank can
    make a grant, nor know the file's name before it exists."""
    if held:
        return
    try:
        fd = os.open(os.path.join(kept, f"held-{os.urandom(8).hex()}"),
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        held.append(os.fstat(fd).st_ctime_ns)
    finally:
        os.close(fd)


def _failed(records: dict[int, Any], failure: dict[str, Any] | None) -> Any:
    """The case's record when a rank raised, died, deadlocked or returned something that is not
    data; None when every rank observed."""
    raised = [r for r in sorted(records) if records[r]["status"] == "error"]
    if failure and failure["type"] == "deadlock":
        # A rank's own exception explains a deadlock better than the deadlock does; gloo's timeout
        # or a reset connection on a rank is only its consequence.
        raised = [r for r in raised if "gloo" not in str(records[r]["error"].get("message", ""))]
    if raised and (not failure or failure["type"] == "deadlock"):
        error = dict(records[raised[0]]["error"])
        error["message"] = f"rank {raised[0]}: {error['message']}"
        if failure:
            error["message"] += f" ({failure['type']}: {failure['message']})"
        return _protocol.CaseRecord("error", error=_protocol.ErrorInfo(**error))
    if failure:
        return _protocol.CaseRecord("error", error=_protocol.ErrorInfo(str(failure["type"]), str(failure["message"])))
    for rank in sorted(records):
        if records[rank]["status"] != "ok":
            return _protocol.CaseRecord("bad_output", message=f"rank {rank}: {records[rank].get('message', '')}")
    return None


def _read_ranks(run: Run, subject_id: str, name: str, base: str, records: dict[int, Any],
                seen: dict[int, list[int]]) -> Any:
    """Every rank's observations, read from its file (the learner's bytes: a file that cannot be
    read, or holds other keys than its record says, is bad output) and kept as "rank r: key"."""
    from safetensors.numpy import load_file

    keys = []
    for rank in sorted(records):
        path = f"{base}-rank{rank}.safetensors"
        try:
            arrays = load_file(path)
        except Exception:  # noqa: BLE001 - the rank's file is the learner's bytes
            return _protocol.CaseRecord("bad_output", message=f"rank {rank}: its observations could not be read")
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        if sorted(arrays) != sorted(records[rank]["keys"]):
            return _protocol.CaseRecord("bad_output", message=f"rank {rank}: its observations do not match its record")
        for key in records[rank]["keys"]:
            if key == _protocol.KEPT_SEEN:
                continue  # this process's observation, never the rank's
            run.observed[_protocol.obs_name(subject_id, name, f"rank {rank}: {key}")] = arrays[key]
            keys.append(f"rank {rank}: {key}")
        seen_key = f"rank {rank}: {_protocol.KEPT_SEEN}"
        run.observed[_protocol.obs_name(subject_id, name, seen_key)] = run.np.array(
            seen.get(rank) or [-1, -1, -1, -1], dtype=run.np.int64)
        keys.append(seen_key)
    return _protocol.CaseRecord("ok", keys=keys)
