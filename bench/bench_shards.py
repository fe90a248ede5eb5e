"""Benchmark: the slowest of N shards against the full gate, and gate --paths after a change.

    python bench/bench_shards.py [--shards 2] [--runs 3] [-j 2] [--json FILE]

Each round runs, one after the other on this machine, the full gate, each shard (``gate
--shard I/N``, as one CI machine of the matrix would), ``gate --paths`` for a one-config change
and ``gate --paths`` for a C-engine change (every config, the Python outputs from the cache that
the full gate just recorded: what a rebuilt C engine costs); the order of the commands rotates
from round to round. Figures are medians over the rounds of each command's wall time (the
process, interpreter start included); the shard figure is the median of each round's slowest
shard over the full gate (the target: at most 0.6 for 2 shards, docs/performance.md). Numbers go in notes,
never in a timed test (the machine is shared and noisy)."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONE_CONFIG = "parity_configs/wgrad/00-baseline.toml"
C_ENGINE_FILE = "rocke_c/src/emit.c"


def timed(args: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rocke_py.parity", *args], cwd=ROOT, capture_output=True)
    return time.perf_counter() - t0, done.returncode


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--json")
    a = ap.parse_args()
    j = ["-j", str(a.jobs)]
    commands = {"full": ["gate", *j]}
    for i in range(1, a.shards + 1):
        commands[f"shard {i}/{a.shards}"] = ["gate", "--shard", f"{i}/{a.shards}", *j]
    commands["--paths one config"] = ["gate", "--paths", ONE_CONFIG, *j]
    commands["--paths C engine"] = ["gate", "--paths", C_ENGINE_FILE, *j]
    times: dict[str, list[float]] = {k: [] for k in commands}
    ratios: list[float] = []
    names = list(commands)
    timed(commands["full"])  # warm the page cache and record the costs and the output cache
    for r in range(a.runs):
        order = names[r % len(names) :] + names[: r % len(names)]
        got = {}
        for name in order:
            got[name], rc = timed(commands[name])
            if rc not in (0, 1):
                print(f"{name}: exit {rc}", file=sys.stderr)
                return 2
            times[name].append(got[name])
        ratios.append(max(got[n] for n in names if n.startswith("shard")) / got["full"])
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k:22} {v:6.2f} s  (runs: {', '.join(f'{x:.2f}' for x in times[k])})")
    ratio = statistics.median(ratios)
    print(f"slowest of {a.shards} shards / full gate: {ratio:.2f} (median of per-round ratios; target <= 0.6)")
    if len(ratios) >= 4:  # the spread: how far a noisy machine moves one round's figure
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        within = sum(r <= 0.6 for r in ratios)
        print(
            f"  per round: {min(ratios):.3f} .. {max(ratios):.3f}, quartiles {q1:.3f} / {q3:.3f}; "
            f"{within} of {len(ratios)} rounds at most 0.6"
        )
    print(f"--paths one config / full: {med['--paths one config'] / med['full']:.2f}")
    print(f"--paths C engine / full:   {med['--paths C engine'] / med['full']:.2f}")
    if a.json:
        doc = {"seconds": times, "medians": med, "shard_ratio": ratio, "round_ratios": ratios}
        Path(a.json).write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
