"""Per-job engine times, run as a child of bench_gate.py so that one measurement code serves the
tree under test and a baseline installed elsewhere (``PYTHONPATH`` says which ``rocke_py``).

    python bench/engine_times.py JOBS.json OUT.json --repeat N [--engines py,c] [--interleaved]

JOBS.json: a list of {"config": id, "path": file, "mode": m, "flavor": f}. OUT.json: per job the
median seconds of each engine over N calls (isolated: one engine's calls back to back; with
--interleaved also the C engine's median when each C call follows a Python call, the way a gate
worker calls them), the kind of result and the sha256 of the output (to prove a baseline emits
the same bytes)."""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path


def timed(fn, data: bytes, mode: str, flavor: str) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn(data, mode, flavor)
    return time.perf_counter() - t0, out


def median_of(fn, data: bytes, mode: str, flavor: str, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t, out = timed(fn, data, mode, flavor)
        times.append(t)
    return statistics.median(times), out


def digest(out: object) -> tuple[str, str]:
    text = getattr(out, "text", None)
    if text is not None:
        return "emitted", hashlib.sha256(text.encode()).hexdigest()
    return "rejected", f"{getattr(out, 'code', '?')}: {getattr(out, 'message', '')}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("jobs")
    ap.add_argument("out")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--engines", default="py,c")
    ap.add_argument("--interleaved", action="store_true")
    args = ap.parse_args()
    engines = args.engines.split(",")
    from rocke_py import engine as py_engine

    emit = {"py": py_engine.emit}
    if "c" in engines:
        from rocke_py import cbridge

        emit["c"] = cbridge.emit
    rows = []
    for job in json.loads(Path(args.jobs).read_text()):
        data = Path(job["path"]).read_bytes()
        row = dict(job)
        for side in engines:
            t, out = median_of(emit[side], data, job["mode"], job["flavor"], args.repeat)
            row[f"{side}_s"] = t
            row["kind"], row[f"{side}_digest"] = digest(out)
            row["lines"] = getattr(out, "text", "").count("\n")
        if args.interleaved and "c" in engines:
            c_times = []
            for _ in range(args.repeat):
                timed(emit["py"], data, job["mode"], job["flavor"])
                c_times.append(timed(emit["c"], data, job["mode"], job["flavor"])[0])
            row["c_interleaved_s"] = statistics.median(c_times)
        rows.append(row)
    Path(args.out).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
