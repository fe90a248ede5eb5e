"""Benchmark of `rocke-parity numerics`: seconds per config and size, executor thread-ops per second.

    python bench/bench_numerics.py [--small] [--level both] [--repeat 1] [--wall] [--json FILE] [ID ...]

Each config runs in this one process, one after another, at the sizes `numerics` runs (shipped,
small and edge; `--small`: small and edge), best of --repeat runs; the totals are sums of
per-launch seconds (what one core spends; `rocke-parity numerics -j 2` divides it over two).
`--wall` then times the command itself, `rocke-parity numerics -j 2` (with `--small` when
given), in a subprocess: the number the speed targets are about (docs/numerics.md §3).
`--level` (default both) runs the IR, the `ll`, or both; with both the totals are also given
per level, with the ratio of the `ll` level (all its runs: every flavor at the small size,
llvm22 at the others) to the IR level per config, median and worst. Numbers go in notes, never in
a timed test (the machine is shared and noisy)."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rocke_py.numerics.check import check_all_sizes  # noqa: E402
from rocke_py.numerics.run import select  # noqa: E402


def best_run(cid: str, text: str, small: bool, repeat: int, level: str):
    """The launches of the fastest of `repeat` runs."""
    runs = [check_all_sizes(cid, text, small=small, level=level) for _ in range(max(1, repeat))]
    return min(runs, key=lambda outcomes: sum(o.seconds for o in outcomes))


def wall_time(small: bool, level: str) -> float:
    cmd = [sys.executable, "-m", "rocke_py.parity", "numerics", "-j", "2", "--level", level, "--root", str(ROOT)]
    start = time.perf_counter()
    subprocess.run(cmd + (["--small"] if small else []), cwd=ROOT, check=False, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--small", action="store_true", help="the small and edge sizes only")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--wall", action="store_true", help="also time rocke-parity numerics -j 2")
    ap.add_argument("--level", choices=("ir", "ll", "both"), default="both")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for cfg in select(ROOT, args.ids):
        outcomes = best_run(cfg.id, cfg.data.decode(), args.small, args.repeat, args.level)
        for o in outcomes:
            rate = o.thread_ops / o.seconds if o.seconds else 0.0
            rows.append(
                {
                    "config": cfg.id,
                    "at": o.label,
                    "size": o.size,
                    "level": o.level,
                    "seconds": o.seconds,
                    "ops": o.thread_ops,
                    "ok": o.ok,
                }
            )
            print(
                f"{cfg.id:40s} {o.label:8s} {o.size:30s} {o.level:10s} {o.seconds:8.2f} s "
                f"{rate / 1e6:8.1f} M thread-ops/s",
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
    record = {"small": args.small, "level": args.level, "total_seconds": seconds, "by_size": totals, "launches": rows}
    if args.level == "both":
        record["ratios"] = level_ratios(rows)
    if args.wall:
        record["wall_seconds_j2"] = wall = wall_time(args.small, args.level)
        print(f"rocke-parity numerics -j 2{' --small' if args.small else ''}: {wall:.1f} s wall")
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1))
    return 0 if all(r["ok"] for r in rows) else 1


def level_ratios(rows: list[dict]) -> dict:
    """Seconds per level and, per config, the ll level's (all flavors, and the mean flavor)
    over the IR level's: printed with their median and worst."""
    by_config: dict[str, dict[str, float]] = {}
    for r in rows:
        level = "ir" if r["level"] == "ir" else "ll"
        by_config.setdefault(r["config"], {"ir": 0.0, "ll": 0.0, "flavors": 0.0})[level] += r["seconds"]
    flavors = len({r["level"] for r in rows if r["level"] != "ir"}) or 1
    ratios = {c: t["ll"] / t["ir"] for c, t in by_config.items() if t["ir"] > 0}
    ir_total = sum(t["ir"] for t in by_config.values())
    ll_total = sum(t["ll"] for t in by_config.values())
    values = sorted(ratios.values())
    median = statistics.median(values) if values else 0.0
    worst = max(ratios.items(), key=lambda kv: kv[1]) if ratios else ("-", 0.0)
    print(
        f"IR level {ir_total:.1f} s, ll level {ll_total:.1f} s ({flavors} flavors): ll/IR per config "
        f"median {median:.2f}, worst {worst[1]:.2f} ({worst[0]})"
    )
    return {
        "ir_seconds": ir_total,
        "ll_seconds": ll_total,
        "flavors": flavors,
        "median": median,
        "worst": list(worst),
        "per_config": ratios,
    }


if __name__ == "__main__":
    sys.exit(main())
