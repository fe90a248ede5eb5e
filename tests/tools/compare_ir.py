"""Compare mode `ir` (or ll) of the two engines, outside the harness, with a sanitizer at hand.

    python3 tests/tools/compare_ir.py [--driver PATH] [--sanitize] [--mode ir] [FILE...]
                                      (default: every shipped config)
    python3 tests/tools/compare_ir.py --fuzz N [--seed S] [--keep DIR] ...

C side: rocke_c/tests/build_driver.c (rocke_emit), built with gcc into a temporary directory
unless --driver names one (--sanitize: ASan + UBSan). Python side: rocke_py.engine.emit.emit,
with EngineFailure caught. A record is ("E", None, text) | ("R", code, message) |
("X", code, message) for an engine failure.

--fuzz N mutates the shipped emitting configs' [target]/[problem]/[spec] keys (seeded) within
the reference's values, keeps the first N that both engines accept in mode spec (with the
same text), and compares their ir. Exit 1 on any difference or engine failure."""

from __future__ import annotations

import argparse
import importlib
import os
import random
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import cbuild  # noqa: E402  (this directory: the script's, or on the tests' path)
from cbuild import SAN_ENV  # noqa: E402

from rocke_py.configtext import config_scalar  # noqa: E402
from rocke_py.engine.result import EngineFailure, Rejected  # noqa: E402
from rocke_py.facts import ARCHS  # noqa: E402

emit_module = importlib.import_module("rocke_py.engine.emit")

Record = tuple[str, Optional[str], bytes]

BATCH = 200


# ---- the C side ----


def build_driver(out_dir: Path, sanitize: bool = False) -> Path:
    """Compiles rocke_c/tests/build_driver.c with the engine into out_dir (-O2, or sanitized)."""
    return cbuild.build(
        "rocke_c/tests/build_driver.c",
        out_dir,
        sanitize=sanitize,
        opt="-O2",
        name="build_driver_san" if sanitize else "build_driver",
    )


parse_records = cbuild.parse_records


def c_records(driver: Path, files: list[Path], mode: str = "ir", flavor: str = "llvm22") -> list[Record]:
    """The driver's records for files, in batches; RuntimeError when a run fails (a crash or a
    sanitizer report: the driver exits nonzero or writes to stderr)."""
    env = dict(os.environ, **SAN_ENV)
    records: list[Record] = []
    for start in range(0, len(files), BATCH):
        batch = [str(f) for f in files[start : start + BATCH]]
        args = [str(driver), mode, flavor, *batch]
        run = subprocess.run(args, capture_output=True, env=env, timeout=900)
        if run.returncode != 0 or run.stderr:
            raise RuntimeError(
                f"driver exit {run.returncode} on a batch from {batch[0]}: "
                + run.stderr.decode("utf-8", "replace")[-3000:]
            )
        got = parse_records(run.stdout)
        if len(got) != len(batch):
            raise RuntimeError(f"driver gave {len(got)} records for {len(batch)} files")
        records.extend(got)
    return records


# ---- the Python side ----


def py_record(data: bytes, mode: str = "ir", flavor: str = "llvm22") -> Record:
    """emit(), an EngineFailure as the record C gives for ROCKE_ERROR."""
    try:
        out = emit_module.emit(data, mode, flavor)
    except EngineFailure as exc:
        return ("X", "E_INTERNAL", str(exc).encode())
    if isinstance(out, Rejected):
        return ("R", out.code, out.message.encode())
    return ("E", None, out.text.encode())


def first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.split(b"\n"), b.split(b"\n")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}:\n    py: {x[:200]!r}\n     c: {y[:200]!r}"
    return f"line {min(len(la), len(lb)) + 1}: one side ends ({len(la)} vs {len(lb)} lines)"


def describe(path: str, py: Record, c: Record) -> str:
    if py[0] == c[0] == "E":
        return f"DIFFER {path}: {first_difference(py[2], c[2])}"
    return f"DIFFER {path}\n    py: {py[0]} {py[1]} {py[2][:300]!r}\n     c: {c[0]} {c[1]} {c[2][:300]!r}"


def compare(
    driver: Path, files: list[Path], mode: str, verbose: int = 20, flavor: str = "llvm22"
) -> tuple[int, int, dict[str, int], float, float]:
    """(identical, differing, outcome counts, C seconds, Python seconds) over files; an engine
    failure (X) on either side counts as a difference. compare_ll.py runs it per flavor."""
    t0 = time.perf_counter()
    crec = c_records(driver, files, mode, flavor)
    t_c = time.perf_counter() - t0
    same = differ = 0
    counts: dict[str, int] = {}
    t_py = 0.0
    for path, c in zip(files, crec):
        t0 = time.perf_counter()
        py = py_record(Path(path).read_bytes(), mode, flavor)
        t_py += time.perf_counter() - t0
        key = "EMITTED" if py[0] == "E" else f"{py[0]}:{py[1]}"
        counts[key] = counts.get(key, 0) + 1
        if py == c and py[0] != "X":
            same += 1
            continue
        differ += 1
        if differ <= verbose:
            print(describe(str(path), py, c))
    return same, differ, counts, t_c, t_py


# ---- fuzzing: mutated shipped configs ----

PROBLEM_VALUES = {
    "N": [1, 2, 3, 4, 8, 16],
    "Hi": [1, 3, 7, 9, 14, 17, 28, 56],
    "Wi": [1, 3, 7, 9, 14, 17, 28, 56],
    "C": [1, 2, 3, 4, 8, 12, 16, 24, 32, 48, 63, 64, 128, 256],
    "K": [1, 2, 3, 4, 8, 12, 16, 24, 32, 48, 63, 64, 128, 256],
    "Y": [1, 2, 3, 5],
    "X": [1, 2, 3, 5],
    "sH": [1, 2, 3],
    "sW": [1, 2, 3],
    "pH": [0, 1, 2],
    "pW": [0, 1, 2],
    "dH": [1, 2, 3],
    "dW": [1, 2],
    "groups": [1, 2, 4],
}
PROBLEM_3D = {"Di": [2, 4, 8], "Z": [1, 3], "sD": [1, 2], "pD": [0, 1], "dD": [1, 2]}
SPEC_VALUES = {
    "dtype_a": ["fp16", "bf16", "fp32"],
    "dtype_b": ["fp16", "bf16", "fp32"],
    "dtype_d": ["fp16", "bf16", "fp32"],
    "tile_m": [16, 32, 64, 128, 256],
    "tile_n": [16, 32, 64, 128, 256],
    "tile_k": [8, 16, 32, 64, 128],
    "warp_m": [1, 2, 4],
    "warp_n": [1, 2, 4],
    "warp_tile_m": [16, 32],
    "warp_tile_n": [16, 32],
    "warp_tile_k": [2, 4, 8, 16, 32],
    "wave_size": [64, 32],
    "pipeline": ["mem", "compv3", "compv4", "basic"],
    "epilogue": ["default", "cshuffle"],
    "async_dma": [True, False],
    "unroll_k": [True, False],
    "lds_k_pad": [0, 4, 8, 16],
    "lds_layout_pad": [0, 8],
    "lds_layout_xor": [0, 1, 4],
    "vector_size_a": [1, 2, 4, 8],
    "vector_size_b": [1, 2, 4, 8],
    "vector_size_c": [1, 2, 4, 8],
    "chiplet_swizzle": [True, False],
    "chiplet_wgm": [1, 2, 4, 8],
    "chiplet_num_xcds": [1, 2, 8],
    "chiplet_chunk_size": [1, 4, 32, 64],
    "waves_per_eu": [1, 2, 4],
    "bias": [0, 1, -3, 7],
    "scale": [1, 2, -1, 3],
    "relu": [True, False],
    "clamp_min": [0, -5, 1],
    "clamp_max": [0, 6, 100],
    "lds_k_outer": [True, False, "auto"],
    "split_k": [-1, 0, 1, 2, 3, 4, 8],
    "cshuffle_no_alias": [True, False],
}
FAMILY_SKIP = {
    "fwd": {"lds_k_outer", "split_k", "cshuffle_no_alias"},
    "wgrad": {"cshuffle_no_alias"},
    "dgrad": set(),
}
# Coherent multi-key changes (an atom, a dtype pair, a wave32 target) that one-key
# mutations almost never reach: ("spec" | "target", fields).
COMBOS = [
    {"dtype_a": "bf16", "dtype_b": "bf16"},
    {"dtype_a": "fp32", "dtype_b": "fp32", "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 4},
    {"dtype_a": "fp32", "dtype_b": "fp32", "warp_tile_m": 32, "warp_tile_n": 32, "warp_tile_k": 2},
    {"dtype_a": "fp32", "dtype_b": "fp32", "dtype_d": "fp32", "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 4},
    {"warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 16},
    {"warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 32},
    {"warp_tile_m": 32, "warp_tile_n": 32, "warp_tile_k": 8},
    {"split_k": 0, "dtype_d": "fp32"},
    {"split_k": 0, "dtype_d": "fp32", "epilogue": "cshuffle"},
    {"split_k": 2, "epilogue": "cshuffle"},
    {"unroll_k": True},
    {"unroll_k": True, "pipeline": "compv4"},
    {"pipeline": "compv3"},
    {"pipeline": "basic", "tile_k": 16},
    {"chiplet_swizzle": True, "chiplet_num_xcds": 2, "chiplet_chunk_size": 1},
    {"chiplet_swizzle": True, "chiplet_wgm": 2, "chiplet_num_xcds": 1, "chiplet_chunk_size": 4},
    {"bias": 3, "scale": 2, "relu": True, "clamp_min": 0, "clamp_max": 6},
    {"arch": "gfx1201", "wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 16},
    {"arch": "gfx1151", "wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 16},
    {"arch": "gfx1250", "wave_size": 32, "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 32},
    {"arch": "gfx942", "warp_tile_m": 16, "warp_tile_n": 16, "warp_tile_k": 16},
]


def config_text(doc: dict) -> str:
    lines = []
    for table in ("target", "problem", "spec"):
        lines.append(f"[{table}]")
        lines += [f"{k} = {config_scalar(v)}" for k, v in doc.get(table, {}).items()]
        lines.append("")
    return "\n".join(lines)


def seeds() -> list[dict]:
    """The shipped configs expected to emit, as TOML documents."""
    out = []
    for path in sorted(ROOT.glob("parity_configs/*/*.toml")):
        doc = tomllib.loads(path.read_text())
        if doc.get("parity", {}).get("expect") == "emit":
            out.append({t: dict(doc.get(t, {})) for t in ("target", "problem", "spec")})
    return out


def mutate(rng: random.Random, doc: dict) -> dict:
    new = {t: dict(v) for t, v in doc.items()}
    family = new["spec"]["family"]
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.25:
            for key, value in rng.choice(COMBOS).items():
                table = "target" if key == "arch" else "spec"
                if table == "spec" and key in FAMILY_SKIP[family]:
                    continue
                new[table][key] = value
        elif roll < 0.31:
            new["target"]["arch"] = rng.choice(ARCHS)
        elif roll < 0.55:
            key = rng.choice(sorted(PROBLEM_VALUES))
            new["problem"][key] = rng.choice(PROBLEM_VALUES[key])
        elif roll < 0.59:
            if "Di" in new["problem"]:
                for key in PROBLEM_3D:
                    new["problem"].pop(key, None)
            else:
                for key, values in PROBLEM_3D.items():
                    new["problem"][key] = rng.choice(values)
        else:
            keys = sorted(set(SPEC_VALUES) - FAMILY_SKIP[family])
            key = rng.choice(keys)
            if rng.random() < 0.15 and key in new["spec"]:
                del new["spec"][key]
            else:
                new["spec"][key] = rng.choice(SPEC_VALUES[key])
    return new


def fuzz_files(driver: Path, count: int, seed: int, out_dir: Path, max_tries: int = 0) -> list[Path]:
    """The first `count` mutated configs both engines accept in mode spec (same text)."""
    rng = random.Random(seed)
    base = seeds()
    kept: list[Path] = []
    tries = 0
    max_tries = max_tries or count * 60
    seen: set[str] = set()
    while len(kept) < count and tries < max_tries:
        batch = []
        while len(batch) < 400 and tries < max_tries:
            tries += 1
            text = config_text(mutate(rng, rng.choice(base)))
            if text in seen:
                continue
            seen.add(text)
            py = py_record(text.encode(), "spec")
            if py[0] != "E":
                continue
            path = out_dir / f"fuzz-{tries:07d}.toml"
            path.write_text(text)
            batch.append(path)
        if not batch:
            continue
        crec = c_records(driver, batch, "spec")
        for path, c in zip(batch, crec):
            if c == py_record(path.read_bytes(), "spec") and len(kept) < count:
                kept.append(path)
            elif c[0] != "E":
                print(f"SPEC MISMATCH {path}: c {c[0]} {c[1]} {c[2][:200]!r}")
    return kept


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", type=Path)
    ap.add_argument("--sanitize", action="store_true")
    ap.add_argument("--mode", default="ir")
    ap.add_argument("--fuzz", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="write the fuzzed configs here (else a temp dir)")
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="compare_ir_") as tmp:
        driver = args.driver.resolve() if args.driver else build_driver(Path(tmp), args.sanitize)
        if args.fuzz:
            out_dir = args.keep or Path(tmp)
            out_dir.mkdir(parents=True, exist_ok=True)
            files = fuzz_files(driver, args.fuzz, args.seed, out_dir)
            print(f"fuzz: {len(files)} configs accepted in mode spec by both engines")
        else:
            files = args.files or sorted(ROOT.glob("parity_configs/*/*.toml"))
        same, differ, counts, t_c, t_py = compare(driver, files, args.mode)
        rejected = sum(v for k, v in counts.items() if k.startswith("R:"))
        print(
            f"{same}/{same + differ} identical (C {t_c:.2f}s incl. process, Python {t_py:.2f}s); "
            f"emitted {counts.get('EMITTED', 0)}, rejected {rejected}"
            + "".join(f", {k} {v}" for k, v in sorted(counts.items()) if k.startswith("X:"))
        )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
