"""Dump, or compare, every trusted observation of the course: the proof that a rewrite of the
checks or pitfalls (the author kit's, for one) changed no verdict.

    python bench/observations.py dump OUT_DIR [SLUG ...]
    python bench/observations.py compare OLD_DIR NEW_DIR

``dump`` runs, for each exercise, the reference, the oracle, every pitfall and every pair of
pitfalls the exercise can combine, in trusted children (as ``grind validate`` and a diagnosis
do), and writes what they observed: the case instances with the inputs a report shows, each
subject's record per instance (ok, error type and message, not data), and every observed array.
``compare`` says where two dumps differ, bit for bit, and exits 1 if they do. Equal dumps mean
equal verdicts: a verdict is a function of these observations and of the learner's own, and the
learner's are made by the same case code on the same inputs.

Run it against two trees with ``PYTHONPATH=TREE`` (the content root is the tree the judge is
imported from); ``GRIND_CACHE_DIR`` should point at a scratch folder.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


def dump(out: Path, slugs: list[str]) -> None:
    from judge.catalog import Catalog
    from judge.trusted import compute_reference, job_for
    from judge.subjects import split_runs
    from judge.worker.sandbox import Limits, run_job

    catalog = Catalog()
    out.mkdir(parents=True, exist_ok=True)
    for slug in slugs or catalog.slugs():
        exercise = catalog.get(slug)
        ref = compute_reference(exercise, with_oracle=True)
        runs = dict(ref.subjects)
        slugs_ = [p.slug for p in ref.pitfalls]
        pairs = [f"{a}+{b}" for a, b in itertools.combinations(slugs_, 2)]
        # Every pair the pitfalls module can build (COMBINE, COMBINATIONS, combine), in one child.
        bundle = {"kind": "pitfalls", "path": str(exercise.pitfalls_path),
                  "source": exercise.pitfalls_path.read_text(encoding="utf-8")}
        outcome = run_job(job_for(exercise, [bundle], combinations=pairs, record_inputs=True),
                          Limits(wall_s=600, memory_mb=max(exercise.memory_mb, 4096)))
        assert outcome.result is not None, outcome.message
        runs.update(split_runs(outcome.result, outcome.observations))
        records: dict[str, Any] = {}
        arrays: dict[str, np.ndarray] = {}
        for sid, run in sorted(runs.items()):
            records[sid] = {
                "load_error": None if run.load_error is None else [run.load_error.type, run.load_error.message],
                "cases": {name: [c.status, c.keys, c.message,
                                 None if c.error is None else [c.error.type, c.error.message]]
                          for name, c in run.cases.items()},
            }
            for instance, obs in run.obs.items():
                for key, array in obs.items():
                    arrays[f"{sid}|{instance}|{key}"] = array
        document = {
            "instances": [[i.name, i.case, i.kind, i.params, i.input, i.shown, getattr(i, "entries", None)]
                          for i in ref.instances],
            "pitfalls": [[p.slug, p.name] for p in ref.pitfalls],
            "subjects": records,
        }
        (out / f"{slug}.json").write_text(json.dumps(document, indent=1, sort_keys=True), encoding="utf-8")
        np.savez(out / f"{slug}.npz", **{f"a{i}": a for i, a in enumerate(arrays.values())})
        (out / f"{slug}.keys.json").write_text(json.dumps(list(arrays)), encoding="utf-8")
        print(f"{slug}: {len(ref.instances)} instances, {len(runs)} subjects, {len(arrays)} arrays", flush=True)


def _arrays(folder: Path, slug: str) -> dict[str, np.ndarray]:
    keys = json.loads((folder / f"{slug}.keys.json").read_text(encoding="utf-8"))
    with np.load(folder / f"{slug}.npz") as data:
        return {k: data[f"a{i}"] for i, k in enumerate(keys)}


def compare(old: Path, new: Path) -> int:
    differences = 0
    for path in sorted(old.glob("*.keys.json")):
        slug = path.name.removesuffix(".keys.json")
        if not (new / path.name).is_file():
            print(f"{slug}: not in {new}")
            differences += 1
            continue
        a = json.loads((old / f"{slug}.json").read_text(encoding="utf-8"))
        b = json.loads((new / f"{slug}.json").read_text(encoding="utf-8"))
        found = []
        for part in ("instances", "pitfalls", "subjects"):
            if a[part] != b[part]:
                found.append(f"{part} differ")
                if part == "subjects":
                    for sid in sorted(set(a[part]) | set(b[part])):
                        if a[part].get(sid) != b[part].get(sid):
                            found.append(f"  record of {sid}")
        xa, xb = _arrays(old, slug), _arrays(new, slug)
        if set(xa) != set(xb):
            found.append(f"observation names differ: {sorted(set(xa) ^ set(xb))[:5]}")
        for key in sorted(set(xa) & set(xb)):
            u, v = xa[key], xb[key]
            if u.dtype != v.dtype or u.shape != v.shape or u.tobytes() != v.tobytes():
                found.append(f"  {key}: {u.dtype}{list(u.shape)} vs {v.dtype}{list(v.shape)}")
        subjects = len(a["subjects"])
        print(f"{slug}: {'identical' if not found else 'DIFFERENT'} ({len(a['instances'])} instances, "
              f"{subjects} subjects, {len(xa)} arrays compared bit for bit)")
        for line in found[:20]:
            print(f"    {line}")
        differences += bool(found)
    return 1 if differences else 0


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    if command == "dump":
        dump(Path(rest[0]), rest[1:])
    elif command == "compare":
        sys.exit(compare(Path(rest[0]), Path(rest[1])))
    else:
        sys.exit(__doc__)
