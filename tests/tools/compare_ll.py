"""Compare mode `ll` of the two engines, outside the harness: every shipped config, in all three
flavors.

    python3 tests/tools/compare_ll.py [--driver PATH] [--sanitize]
                                      [--flavor llvm20|llvm22|llvm23|all] [FILE...]
    python3 tests/tools/compare_ll.py --time [--repeat N] FILE     (C vs Python, end to end)

The records and both sides are tests/tools/compare_ir.py's (rocke_c/tests/build_driver.c via
rocke_emit; rocke_py.engine.emit.emit); this tool only loops over the flavors. An engine failure
(X) on either side counts as a difference. Exit 1 on any difference."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rocke_py.facts import FLAVORS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
sys.path.insert(0, str(ROOT))

import compare_ir  # noqa: E402


def shipped() -> list[Path]:
    return sorted((ROOT / "parity_configs").glob("*/*.toml"))


def compare(driver: Path, files: list[Path], flavor: str, verbose: int = 10):
    """(identical, differing, outcome counts, C seconds, Python seconds)."""
    return compare_ir.compare(driver, files, "ll", verbose, flavor)


def time_one(driver: Path, path: Path, repeat: int) -> None:
    """End to end (parse, spec, build, lower) for one config, llvm22, best of runs."""
    data = path.read_bytes()
    best_py = float("inf")
    text = b""
    for _ in range(max(1, repeat // 10)):
        t0 = time.perf_counter()
        rec = compare_ir.py_record(data, "ll", "llvm22")
        best_py = min(best_py, time.perf_counter() - t0)
        text = rec[2]
    runs = []
    for n in (1, repeat + 1):
        t0 = time.perf_counter()
        subprocess.run([str(driver), "--repeat", str(n), "ll", "llvm22", str(path)], capture_output=True, check=True)
        runs.append(time.perf_counter() - t0)
    c_each = (runs[1] - runs[0]) / repeat  # the process start-up cancels out
    lines = text.count(b"\n")
    print(
        f"{path.name}: {lines} lines; Python {best_py * 1000:.1f} ms, C {c_each * 1000:.2f} ms "
        f"per emit: C is {best_py / c_each:.0f}x faster"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver")
    ap.add_argument("--sanitize", action="store_true")
    ap.add_argument("--flavor", choices=FLAVORS + ("all",), default="all")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="compare_ll.") as tmp:
        driver = Path(args.driver) if args.driver else compare_ir.build_driver(Path(tmp), args.sanitize)
        files = [Path(f) for f in args.files] or shipped()
        if args.time:
            for f in files:
                time_one(driver, f, args.repeat)
            return 0
        bad = 0
        for flavor in FLAVORS if args.flavor == "all" else (args.flavor,):
            same, differ, counts, t_c, t_py = compare(driver, files, flavor)
            bad += differ
            emitted = counts.get("EMITTED", 0)
            failed = sum(n for k, n in counts.items() if k.startswith("X:"))
            print(
                f"{flavor}: {same} identical, {differ} differ of {len(files)} ({emitted} emitted, "
                f"{len(files) - emitted - failed} rejected, {failed} engine failures); "
                f"C {t_c:.2f} s, Python {t_py:.2f} s"
            )
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
