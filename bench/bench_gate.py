"""Benchmark: every speed and memory figure of the project from one run.

    python bench/bench_gate.py [--repeat 7] [--gate-runs 3] [--baseline REV]
                               [--corpus 1250,2500,5000] [--json FILE]

Numbers go in notes, never in a timed test (the machine is shared and noisy): medians over
repeats. It prints and, with --json, writes:

- per emitting job, each engine's median over --repeat calls, isolated (one engine's calls back
  to back) and interleaved (each C call after a Python call, as a gate worker calls them); the
  C:Python ratio, median over jobs, overall and per mode;
- with --baseline REV: REV installed into a temporary folder, its Python engine timed in the
  same run, per mode, and whether it emits the same bytes;
- the gate's wall time on the shipped configs against the engines' summed emission time divided
  by the cores (from the isolated medians, and from the engine seconds the gate's own workers
  recorded); the same on generated corpora of the given sizes, with a least-squares line of
  wall time against jobs;
- peak memory: the C engine (rocke-emit, built here) on the largest accepted kernel, and the
  largest process of a gate run."""

from __future__ import annotations

import argparse
import contextlib
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
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "tools"))

from rocke_py import cbridge  # noqa: E402
from rocke_py import engine as py_engine  # noqa: E402
from rocke_py.facts import FLAVORLESS_MODES, FLAVORS  # noqa: E402
from rocke_py.parity.inputs.configs import discover  # noqa: E402

CORES = os.cpu_count() or 1


def job_list(configs, modes: tuple[str, ...]) -> list[dict]:
    out = []
    for cfg in configs:
        for mode in modes:
            for flavor in ("llvm22",) if mode in FLAVORLESS_MODES else FLAVORS:
                out.append({"config": cfg.id, "path": str(cfg.path), "mode": mode, "flavor": flavor})
    return out


def engine_times(jobs: list[dict], repeat: int, pythonpath: Path, engines: str, interleaved: bool) -> list[dict]:
    """bench/engine_times.py in a child whose rocke_py comes from ``pythonpath``."""
    with tempfile.TemporaryDirectory(prefix="rocke-bench-") as tmp:
        jf, of = Path(tmp) / "jobs.json", Path(tmp) / "out.json"
        jf.write_text(json.dumps(jobs))
        cmd = [sys.executable, str(BENCH / "engine_times.py"), str(jf), str(of), "--repeat", str(repeat)]
        cmd += ["--engines", engines] + (["--interleaved"] if interleaved else [])
        env = dict(os.environ, PYTHONPATH=str(pythonpath))
        subprocess.run(cmd, check=True, env=env, cwd=tmp)
        return json.loads(of.read_text())


def median(values) -> float:
    values = list(values)
    return statistics.median(values) if values else 0.0


def ratio_table(rows: list[dict], modes: tuple[str, ...]) -> dict:
    emitting = [r for r in rows if r["kind"] == "emitted"]
    table = {"all": {}}
    for mode in ("all", *modes):
        sel = [r for r in emitting if mode == "all" or r["mode"] == mode]
        table[mode] = {
            "jobs": len(sel),
            "py_median_s": median(r["py_s"] for r in sel),
            "c_median_s": median(r["c_s"] for r in sel),
            "ratio_isolated": median(r["py_s"] / r["c_s"] for r in sel),
            "ratio_interleaved": median(r["py_s"] / r["c_interleaved_s"] for r in sel),
        }
    return table


def install_baseline(rev: str, into: Path) -> Path:
    """REV's tree, built and installed (with its C extension) into ``into/site``."""
    src = into / "src"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    site = into / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps"]
    subprocess.run([*pip, "--target", str(site), str(src)], check=True)
    compile_bytecode(site / "rocke_py")
    return site


def compile_bytecode(package: Path) -> None:
    """Bytecode for every module of ``package``, as a used installation has it: with
    PYTHONDONTWRITEBYTECODE set (it is on some machines) each gate worker and each timed
    interpreter would compile the sources again and the figures would measure the compiler."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True, stdout=subprocess.DEVNULL)


def baseline_table(current: list[dict], base: list[dict], modes: tuple[str, ...]) -> dict:
    table: dict = {"same_bytes": sum(a["py_digest"] == b["py_digest"] for a, b in zip(current, base))}
    table["jobs"] = len(current)
    for mode in modes:
        pairs = [(a, b) for a, b in zip(current, base) if a["mode"] == mode and a["kind"] == "emitted"]
        table[mode] = {
            "jobs": len(pairs),
            "baseline_py_median_s": median(b["py_s"] for _, b in pairs),
            "py_median_s": median(a["py_s"] for a, _ in pairs),
            "speedup": median(b["py_s"] / a["py_s"] for a, b in pairs),
        }
    return table


def run_measured(cmd: list[str], cwd: Path) -> tuple[float, int, int]:
    """Wall seconds, exit status and the peak RSS (KiB) of the largest process of the command's tree."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, proc.returncode, usage.ru_maxrss


def in_gate_engine_seconds(root: Path) -> tuple[float, int]:
    """The engines' seconds in the last run as its workers measured them (last-run.json's
    ``run_seconds``: its ``seconds`` average the recent runs), and the job count."""
    doc = json.loads((root / ".rocke-parity" / "last-run.json").read_text())
    secs = [j.get("run_seconds", 0.0) for e in doc["configs"].values() for j in e["jobs"].values()]
    return sum(secs), len(secs)


def gate_once(root: Path) -> tuple[float, float, int, int]:
    """One gate on ``root``: wall seconds, its engines' seconds (as its workers recorded them),
    its jobs, and the peak RSS (KiB) of its largest process."""
    exe = str(Path(sys.executable).with_name("rocke-parity"))
    wall, rc, rss = run_measured([exe, "gate", "--root", str(root)], root)
    if rc != 0:
        raise SystemExit(f"gate failed on {root} (exit {rc})")
    engine_s, jobs = in_gate_engine_seconds(root)
    return wall, engine_s, jobs, rss


def gate_figures(runs: list[tuple[float, float, int, int]]) -> dict:
    """The medians of some gates on one tree: wall time, and each run's ratio of its wall time to
    its own engines' seconds over the cores (a run and the engine seconds it is divided by come
    from the same moment of a shared machine)."""
    return {
        "jobs": runs[-1][2],
        "wall_s": median(r[0] for r in runs),
        "walls_s": [r[0] for r in runs],
        "in_gate_engine_s": median(r[1] for r in runs),
        "ratio_in_gate": median(r[0] / (r[1] / CORES) for r in runs),
        "peak_rss_kib": max(r[3] for r in runs),
    }


def time_gate(root: Path, runs: int) -> dict:
    """Median wall time of ``runs`` gates on ``root`` (:func:`gate_figures`)."""
    return gate_figures([gate_once(root) for _ in range(runs)])


def fit(points: list[tuple[int, float]]) -> dict:
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if n < 2 or sxx == 0:
        return {}
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    icpt = my - slope * mx
    ss_res = sum((y - (icpt + slope * x)) ** 2 for x, y in points)
    ss_tot = sum((y - my) ** 2 for _, y in points)
    return {"intercept_s": icpt, "s_per_job": slope, "r2": 1 - ss_res / ss_tot if ss_tot else 1.0}


def corpus_figures(sizes: list[int], runs: int) -> dict:
    """The gate on a corpus of each size, ``runs`` rounds, every size once per round (in an order
    that rotates): a machine that slows down or speeds up during the benchmark then weighs on
    every size alike, instead of bending the line of wall time against jobs."""
    from corpus import write_corpus

    exe = str(Path(sys.executable).with_name("rocke-parity"))
    out: dict = {"sizes": [], "rounds": runs}
    with contextlib.ExitStack() as stack:
        roots, counts = [], []
        for n in sizes:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"rocke-corpus-{n}-")))
            counts.append(write_corpus(root, n))
            _, rc, _ = run_measured([exe, "golden", "--update", "--root", str(root)], root)
            if rc != 0:
                raise SystemExit(f"golden --update failed on the corpus of {n} (exit {rc})")
            roots.append(root)
        measured: list[list[tuple[float, float, int, int]]] = [[] for _ in sizes]
        for r in range(runs):
            for k in range(len(sizes)):
                i = (k + r) % len(sizes)
                measured[i].append(gate_once(roots[i]))
    for n, c, m in zip(sizes, counts, measured):
        out["sizes"].append({"configs": n, **c, **gate_figures(m)})
    out["fit"] = fit([(s["jobs"], s["wall_s"]) for s in out["sizes"]])
    return out


#: the search for the largest accepted kernel: wgrad/14 (pipeline basic: every K step unrolled)
#: over split-K, tiles and batch, so the unrolled loop runs up to the cap of 128 iterations
LARGEST_FROM = "wgrad/14-basic-split-k4-fp32"
LARGEST_GRID = {"split_k": (1, 2, 4, 8), "tile_m": (64, 128, 256), "tile_n": (64, 128, 256), "tile_k": (32, 64, 128)}
LARGEST_N = (2, 4, 8, 16)


def largest_accepted() -> tuple[str, str, int, int]:
    """(name, config text, ll bytes, configs tried) of the accepted variant with the largest ll
    output (the C engine emits each: a fraction of a second for the grid)."""
    import itertools
    import re

    base = (ROOT / "parity_configs" / f"{LARGEST_FROM}.toml").read_text()
    best: tuple[int, str, str] = (0, "", "")
    tried = 0
    for values in itertools.product(*LARGEST_GRID.values(), LARGEST_N):
        spec = dict(zip(LARGEST_GRID, values[:-1]))
        text = re.sub(r"(?m)^N = \d+$", f"N = {values[-1]}", base)
        text = re.sub(r"(?m)^split_k = \d+$", "\n".join(f"{k} = {v}" for k, v in spec.items()), text)
        out = cbridge.emit(text, "ll", "llvm22")
        tried += 1
        size = len(getattr(out, "text", "").encode())
        if size > best[0]:
            name = f"{LARGEST_FROM} with N = {values[-1]}, " + ", ".join(f"{k} = {v}" for k, v in spec.items())
            best = (size, name, text)
    return best[1], best[2], best[0], tried


def own_peak_rss(cmd: list[str]) -> tuple[int, int]:
    """Exit status and peak RSS (KiB) of a program, measured by GNU time: a child started from
    this process carries this process's high-water mark across its exec (Linux keeps the larger
    of the two), so ``run_measured`` would report the benchmark's own memory for a small program.
    GNU time's own pre-exec size (about 2 MiB) is the error left. (-1, -1) without GNU time."""
    gnu_time = shutil.which("time") or "/usr/bin/time"
    if not Path(gnu_time).exists():
        return -1, -1
    done = subprocess.run([gnu_time, "-f", "%M", *cmd], capture_output=True, text=True)
    return done.returncode, int(done.stderr.strip().splitlines()[-1])


def memory_figures(configs, modes: tuple[str, ...]) -> dict:
    """The C engine's peak RSS on the largest accepted kernel found (``largest_accepted``) and on
    the shipped config with the largest ll output."""
    import cbuild

    golden = json.loads((ROOT / "parity_configs" / "golden.json").read_text())["entries"]
    size, cfg_id = max(
        (e["bytes"], cid)
        for cid, outs in golden.items()
        for key, e in outs.items()
        if key.startswith("ll") and e.get("verdict") == "emit"
    )
    name, text, big, tried = largest_accepted()
    with tempfile.TemporaryDirectory(prefix="rocke-bench-") as tmp:
        exe = cbuild.build("rocke_c/cli/rocke-emit.c", Path(tmp), opt="-O2", name="rocke-emit")
        path = ROOT / "parity_configs" / f"{cfg_id}.toml"
        rc, rss = own_peak_rss([str(exe), str(path), "--mode", "ll", "-o", os.devnull])
        big_path = Path(tmp) / "largest.toml"
        big_path.write_text(text)
        big_rc, big_rss = own_peak_rss([str(exe), str(big_path), "--mode", "ll", "-o", os.devnull])
    return {
        "largest_config": cfg_id,
        "ll_bytes": size,
        "c_engine_peak_rss_kib": rss,
        "exit": rc,
        "largest_accepted": name,
        "largest_accepted_ll_bytes": big,
        "largest_accepted_tried": tried,
        "largest_accepted_peak_rss_kib": big_rss,
        "largest_accepted_exit": big_rc,
    }


def print_report(fig: dict, modes: tuple[str, ...]) -> None:
    print(f"\n== engines (medians of {fig['repeat']} calls per job, emitting jobs)")
    print(f"{'mode':5} {'jobs':>5} {'py':>10} {'c':>10} {'isolated':>9} {'interleaved':>12}")
    for mode in ("all", *modes):
        r = fig["engines"][mode]
        print(
            f"{mode:5} {r['jobs']:5d} {r['py_median_s'] * 1e3:8.3f}ms {r['c_median_s'] * 1e3:8.3f}ms "
            f"{r['ratio_isolated']:8.1f}x {r['ratio_interleaved']:11.1f}x"
        )
    if "baseline" in fig:
        b = fig["baseline"]
        same = f"same bytes: {b['same_bytes']}/{b['jobs']} jobs"
        print(f"\n== Python engine against --baseline {fig['baseline_rev']} ({same})")
        for mode in modes:
            r = b[mode]
            print(
                f"{mode:5} {r['jobs']:5d} jobs: {r['baseline_py_median_s'] * 1e3:8.3f}ms -> "
                f"{r['py_median_s'] * 1e3:8.3f}ms, {r['speedup']:.2f}x faster"
            )
    g = fig["gate"]
    print(
        f"\n== gate on the shipped configs ({g['jobs']} jobs, median of {fig['gate_runs']}): wall {g['wall_s']:.2f} s; "
        f"engines / {CORES} cores: {g['engine_over_cores_s']:.2f} s (isolated medians, ratio {g['ratio']:.2f}x), "
        f"{g['in_gate_engine_s'] / CORES:.2f} s (as the workers measured, ratio {g['ratio_in_gate']:.2f}x)"
    )
    if "corpus" in fig:
        print("\n== gate on generated corpora")
        for s in fig["corpus"]["sizes"]:
            print(
                f"{s['configs']:6d} configs ({s['emitting']} emit, {s['rejected']} reject), {s['jobs']} jobs: "
                f"wall {s['wall_s']:.2f} s, engines / {CORES} cores {s['in_gate_engine_s'] / CORES:.2f} s, "
                f"ratio {s['ratio_in_gate']:.3f}x"
            )
        f = fig["corpus"]["fit"]
        if f:
            print(f"fit: wall = {f['intercept_s']:.2f} s + {f['s_per_job'] * 1e3:.3f} ms/job (r^2 = {f['r2']:.4f})")
    m = fig["memory"]
    print(
        f"\n== memory: C engine peak RSS on {m['largest_config']} (ll, {m['ll_bytes']} bytes): "
        f"{m['c_engine_peak_rss_kib'] / 1024:.1f} MiB; largest gate process: {g['peak_rss_kib'] / 1024:.1f} MiB"
    )
    print(
        f"   on the largest accepted kernel of {m['largest_accepted_tried']} tried ({m['largest_accepted']}; "
        f"ll {m['largest_accepted_ll_bytes']} bytes): {m['largest_accepted_peak_rss_kib'] / 1024:.1f} MiB "
        f"(exit {m['largest_accepted_exit']})"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--gate-runs", type=int, default=3)
    ap.add_argument("--baseline", metavar="REV", help="time this revision's Python engine in the same run")
    ap.add_argument("--corpus", default="1250,2500,5000", help="corpus sizes (configs), or 0 for none")
    ap.add_argument("--json")
    args = ap.parse_args()
    modes = tuple(m for m in py_engine.implemented_modes() if m in cbridge.implemented_modes())
    configs = discover(ROOT).configs
    jobs = job_list(configs, modes)
    fig: dict = {"repeat": args.repeat, "gate_runs": args.gate_runs, "cores": CORES, "modes": modes}
    compile_bytecode(ROOT / "rocke_py")

    rows = engine_times(jobs, args.repeat, ROOT, "py,c", interleaved=True)
    fig["engines"] = ratio_table(rows, modes)
    if args.baseline:
        with tempfile.TemporaryDirectory(prefix="rocke-baseline-") as tmp:
            site = install_baseline(args.baseline, Path(tmp))
            # alternate (current, baseline, current, baseline) and keep each job's best median of
            # each side: a load that comes and goes on a shared machine then favours neither
            base = engine_times(jobs, args.repeat, site, "py", interleaved=False)
            again = engine_times(jobs, args.repeat, ROOT, "py", interleaved=False)
            base_again = engine_times(jobs, args.repeat, site, "py", interleaved=False)
        for row, later in zip(rows, again):
            row["py_s"] = min(row["py_s"], later["py_s"])
        for row, later in zip(base, base_again):
            row["py_s"] = min(row["py_s"], later["py_s"])
        fig["baseline_rev"] = args.baseline
        fig["baseline"] = baseline_table(rows, base, modes)

    gate = time_gate(ROOT, args.gate_runs)
    engine_s = 2 * sum(r["py_s"] + r["c_s"] for r in rows)  # the gate runs every job twice per engine
    gate["engine_over_cores_s"] = engine_s / CORES
    gate["ratio"] = gate["wall_s"] / gate["engine_over_cores_s"]
    fig["gate"] = gate

    sizes = [int(s) for s in args.corpus.split(",") if int(s) > 0]
    if sizes:
        fig["corpus"] = corpus_figures(sizes, max(1, args.gate_runs - 1))
    fig["memory"] = memory_figures(configs, modes)
    print_report(fig, modes)
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
