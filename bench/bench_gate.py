"""Benchmark: per-engine emission times, the C:Python ratio, and the gate's wall time.

    python bench/bench_gate.py [--repeat 7] [--gate-runs 3] [--json FILE]

Numbers go in notes, never in a timed test (the machine is shared and noisy): medians over
repeats, per family and mode. The gate target (README.md, "Performance") compares the gate's
wall time with the engines' own summed emission time divided by the cores."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rocke_py import cbridge  # noqa: E402
from rocke_py import engine as py_engine  # noqa: E402
from rocke_py.engine.result import Emitted  # noqa: E402
from rocke_py.parity.configs import discover  # noqa: E402
from rocke_py.parity.engines import FLAVORLESS_MODES, FLAVORS  # noqa: E402


def median_time(fn, data: bytes, mode: str, flavor: str, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(data, mode, flavor)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def jobs(modes: tuple[str, ...]) -> list[tuple[str, str]]:
    out = []
    for mode in modes:
        out += [(mode, "llvm22")] if mode in FLAVORLESS_MODES else [(mode, f) for f in FLAVORS]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--gate-runs", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    modes = tuple(m for m in py_engine.implemented_modes() if m in cbridge.implemented_modes())
    configs = discover(ROOT).configs
    rows = []
    total_py = total_c = 0.0
    largest = (0, "")
    for cfg in configs:
        for mode, flavor in jobs(modes):
            tp, out = median_time(py_engine.emit, cfg.data, mode, flavor, args.repeat)
            tc, _ = median_time(cbridge.emit, cfg.data, mode, flavor, args.repeat)
            total_py += tp
            total_c += tc
            if isinstance(out, Emitted):
                lines = out.text.count("\n")
                largest = max(largest, (lines, f"{cfg.id} {mode} {flavor}"))
                rows.append(
                    {
                        "config": cfg.id,
                        "family": cfg.family,
                        "mode": mode,
                        "flavor": flavor,
                        "py_s": tp,
                        "c_s": tc,
                        "lines": lines,
                    }
                )
    print(f"modes {','.join(modes)}; {len(configs)} configs; medians of {args.repeat} runs per job (emitting jobs)\n")
    print(f"{'family':8} {'mode':5} {'jobs':>5} {'py median':>11} {'c median':>11} {'py/c':>8}")
    summary = []
    for family in sorted({r["family"] for r in rows}):
        for mode in modes:
            sel = [r for r in rows if r["family"] == family and r["mode"] == mode]
            if not sel:
                continue
            py = statistics.median(r["py_s"] for r in sel)
            c = statistics.median(r["c_s"] for r in sel)
            ratio = statistics.median(r["py_s"] / r["c_s"] for r in sel)
            summary.append(
                {
                    "family": family,
                    "mode": mode,
                    "jobs": len(sel),
                    "py_median_s": py,
                    "c_median_s": c,
                    "ratio_median": ratio,
                }
            )
            print(f"{family:8} {mode:5} {len(sel):5d} {py * 1e3:9.3f}ms {c * 1e3:9.3f}ms {ratio:7.1f}x")
    overall = statistics.median(r["py_s"] / r["c_s"] for r in rows) if rows else 0.0
    print(f"\nC:Python speed ratio, median over emitting jobs: {overall:.1f}x")
    print(f"largest emitted output: {largest[0]} lines ({largest[1]})")
    cores = os.cpu_count() or 1
    # The gate runs every job twice per engine (the nondeterminism check).
    engine_time = 2 * (total_py + total_c)
    gate_times = []
    exe = Path(sys.executable).with_name("rocke-parity")
    for _ in range(args.gate_runs):
        t0 = time.perf_counter()
        done = subprocess.run([str(exe), "gate"], cwd=ROOT, capture_output=True, text=True)
        gate_times.append(time.perf_counter() - t0)
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-2000:])
            print("gate failed")
            return 1
    gate = statistics.median(gate_times)
    bound = engine_time / cores
    print(
        f"gate wall time (median of {args.gate_runs}, process start included): {gate:.2f} s; "
        f"engines' summed emission time / {cores} cores: {bound:.2f} s; ratio {gate / bound if bound else 0:.1f}x"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "summary": summary,
                    "ratio_median": overall,
                    "gate_s": gate,
                    "engine_over_cores_s": bound,
                    "largest": largest,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
