"""How promptly each attack gets its verdict: elapsed - limit, per attack and mode, as data.

    python bench/adversarial.py                       # every file in tests/adversarial/, cold and warm
    python bench/adversarial.py -k forge -k fifo      # only files whose name holds one of these
    python bench/adversarial.py --modes warm --limit 1 --json out.json

The adversarial suite only asserts that a verdict comes back within limit + 60 s (a hang
detector, since the machine is shared); this measures how far past the limit it really comes.
Each attack is graded by tests/adversarial_harness.py exactly as the suite does (a process of
its own, a private cache, in cold mode a fresh worker, in warm mode a fresh warm worker whose
start is not counted). "overrun" is elapsed - limit: negative when the attack finished (or was
stopped) before the limit. In cold mode elapsed includes a torch import, which the limit does
not count; "cold - import" subtracts the median `python -c "import torch"` measured here.
Files whose guarantee does not hold at this machine's isolation level are listed as skipped,
exactly as the suite skips them. Nothing here is an assertion: read the worst case.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_adversarial import FILES, _dangerous, _header, _unmet, run_harness  # noqa: E402


def torch_import_s(runs: int = 3) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=False)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def measure(path: Path, mode: str, limit: float, pristine: Path, folder: Path) -> dict:
    folder.mkdir(parents=True)
    workspace, tmp, cache = folder / "workspace", folder / "tmp", folder / "cache"
    workspace.mkdir()
    tmp.mkdir()
    cache.mkdir()
    for entry in pristine.glob("clipping-*"):
        shutil.copytree(entry, cache / entry.name)
    submission = workspace / "clipping.py"
    shutil.copyfile(path, submission)
    try:
        report = run_harness({
            "mode": mode, "attacker": str(submission), "limit_s": limit, "memory_mb": 1536,
            "cache": str(cache), "tmp": str(tmp), "neighbours": str(folder / "others" / "students"),
            "probe": _dangerous(path),
        }, folder)
    except BaseException as exc:  # noqa: BLE001 - pytest.fail from the harness runner: the harness broke
        if isinstance(exc, KeyboardInterrupt):
            raise
        return {"status": "no-report", "elapsed_s": None}
    if report.get("unsafe"):
        return {"status": "unsafe", "elapsed_s": None}
    attacker = next((g for g in report.get("grades", []) if g["role"] == "attacker"), {})
    status = "HUNG" if attacker.get("hung") else ("EXC" if "exception" in attacker else attacker.get("status", "?"))
    return {"status": status, "elapsed_s": attacker.get("elapsed_s")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", action="append", default=[], help="only files whose name contains this")
    parser.add_argument("--modes", nargs="+", default=["cold", "warm"], choices=["cold", "warm"])
    parser.add_argument("--limit", type=float, default=2.0, help="the wall-clock limit given to each run (s)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()

    from judge.cache import cache_root
    from judge.catalog import Catalog
    from judge.trusted import reference_for
    from judge.worker.sandbox import isolation

    files = [p for p in FILES if not args.k or any(k in p.stem for k in args.k)]
    scratch = Path(tempfile.mkdtemp(prefix="grind-bench-adv-"))
    os.environ["GRIND_CACHE_DIR"] = str(scratch / "pristine")
    reference_for(Catalog().get("clipping"))
    pristine = cache_root()
    baseline = torch_import_s() if "cold" in args.modes else 0.0
    print(f"isolation level: {isolation().level}; limit {args.limit:g} s; "
          f"python -c 'import torch': {baseline:.2f} s (median of 3)")
    print(f"{'attack':<40} {'mode':<5} {'verdict':<10} {'elapsed':>8} {'overrun':>8} {'cold - import':>13}")
    rows = []
    try:
        for path in files:
            expected = "|".join(sorted(_header(path)[0]))
            reason = _unmet(path)
            for mode in args.modes:
                if reason:
                    rows.append({"attack": path.stem, "mode": mode, "status": "skipped", "expected": expected})
                    print(f"{path.stem:<40} {mode:<5} {'skipped':<10} {'':>8} {'':>8} {'':>13}")
                    continue
                got = measure(path, mode, args.limit, pristine, scratch / f"{path.stem}-{mode}")
                elapsed = got["elapsed_s"]
                overrun = None if elapsed is None else elapsed - args.limit
                net = None if overrun is None or mode != "cold" else overrun - baseline
                rows.append({"attack": path.stem, "mode": mode, "status": got["status"], "expected": expected,
                             "elapsed_s": elapsed, "overrun_s": overrun, "overrun_less_import_s": net})
                cells = [f"{v:8.2f}" if v is not None else f"{'-':>8}" for v in (elapsed, overrun)]
                cells.append(f"{net:13.2f}" if net is not None else " " * 13)
                print(f"{path.stem:<40} {mode:<5} {got['status']:<10} {' '.join(cells)}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for mode in args.modes:
        measured = [r for r in rows if r["mode"] == mode and r.get("overrun_s") is not None]
        if measured:
            worst = max(measured, key=lambda r: r["overrun_s"])
            print(f"worst overrun, {mode}: {worst['overrun_s']:+.2f} s ({worst['attack']}, {worst['status']})")
    if args.json:
        args.json.write_text(json.dumps({"limit_s": args.limit, "torch_import_s": baseline, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
