"""Benchmark of `rocke-parity numerics`: seconds per config and executor thread-ops per second.

    python bench/bench_numerics.py [--small] [--repeat 1] [--json FILE] [ID ...]

Each config runs in this one process, one after another (no other work of the benchmark in
parallel), best of --repeat runs; the total is the sum of the per-config seconds (what one core
spends; `rocke-parity numerics -j 2` divides it over two). Numbers go in notes, never in a
timed test (the machine is shared and noisy)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rocke_py.numerics.check import check_config  # noqa: E402
from rocke_py.numerics.run import select  # noqa: E402
from rocke_py.numerics.variants import small_variant  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for cfg in select(ROOT, args.ids):
        text = cfg.data.decode()
        text = small_variant(text) if args.small else text
        best = min((check_config(cfg.id, text) for _ in range(max(1, args.repeat))), key=lambda o: o.seconds)
        rate = best.thread_ops / best.seconds if best.seconds else 0.0
        rows.append(
            {"config": cfg.id, "size": best.size, "seconds": best.seconds, "thread_ops_per_s": rate, "ok": best.ok}
        )
        print(f"{cfg.id:40s} {best.size:28s} {best.seconds:8.2f} s {rate / 1e6:8.1f} M thread-ops/s", flush=True)
    total = sum(r["seconds"] for r in rows)
    ops = sum(r["thread_ops_per_s"] * r["seconds"] for r in rows)
    print(f"total {total:.1f} s over {len(rows)} config(s); {ops / max(total, 1e-9) / 1e6:.1f} M thread-ops/s")
    if args.json:
        Path(args.json).write_text(json.dumps({"small": args.small, "total_seconds": total, "configs": rows}, indent=1))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
