"""Benchmark of `rocke-parity numerics`: seconds per config and size, executor thread-ops per second.

    python bench/bench_numerics.py [--small] [--repeat 1] [--wall] [--json FILE] [ID ...]

Each config runs in this one process, one after another, at the sizes `numerics` runs (shipped,
small and edge; `--small`: small and edge), best of --repeat runs; the totals are sums of
per-launch seconds (what one core spends; `rocke-parity numerics -j 2` divides it over two).
`--wall` then times the command itself, `rocke-parity numerics -j 2` (with `--small` when
given), in a subprocess: the number the speed targets are about (docs/numerics.md §3). Numbers
go in notes, never in a timed test (the machine is shared and noisy)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rocke_py.numerics.check import check_all_sizes  # noqa: E402
from rocke_py.numerics.run import select  # noqa: E402


def best_run(cid: str, text: str, small: bool, repeat: int):
    """The launches of the fastest of `repeat` runs."""
    runs = [check_all_sizes(cid, text, small=small) for _ in range(max(1, repeat))]
    return min(runs, key=lambda outcomes: sum(o.seconds for o in outcomes))


def wall_time(small: bool) -> float:
    cmd = [sys.executable, "-m", "rocke_py.parity", "numerics", "-j", "2", "--root", str(ROOT)]
    start = time.perf_counter()
    subprocess.run(cmd + (["--small"] if small else []), cwd=ROOT, check=False, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--small", action="store_true", help="the small and edge sizes only")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--wall", action="store_true", help="also time rocke-parity numerics -j 2")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for cfg in select(ROOT, args.ids):
        outcomes = best_run(cfg.id, cfg.data.decode(), args.small, args.repeat)
        for o in outcomes:
            rate = o.thread_ops / o.seconds if o.seconds else 0.0
            rows.append(
                {"config": cfg.id, "at": o.label, "size": o.size, "seconds": o.seconds, "ops": o.thread_ops, "ok": o.ok}
            )
            print(
                f"{cfg.id:40s} {o.label:8s} {o.size:30s} {o.seconds:8.2f} s {rate / 1e6:8.1f} M thread-ops/s",
                flush=True,
            )
    totals = {}
    for label in ("shipped", "small", "edge"):
        chosen = [r for r in rows if r["at"] == label]
        if chosen:
            totals[label] = sum(r["seconds"] for r in chosen)
    ops = sum(r["ops"] for r in rows)
    seconds = sum(r["seconds"] for r in rows)
    configs = len({r["config"] for r in rows})
    parts = ", ".join(f"{label} {t:.1f} s" for label, t in totals.items())
    print(
        f"total {seconds:.1f} s over {configs} config(s), {len(rows)} launch(es) ({parts}); "
        f"{ops / max(seconds, 1e-9) / 1e6:.1f} M thread-ops/s"
    )
    record = {"small": args.small, "total_seconds": seconds, "by_size": totals, "launches": rows}
    if args.wall:
        record["wall_seconds_j2"] = wall = wall_time(args.small)
        print(f"rocke-parity numerics -j 2{' --small' if args.small else ''}: {wall:.1f} s wall")
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
