"""`rocke-parity numerics [ID...]`: every selected emitting config checked, in parallel over
worker processes, one table row per config (docs/numerics.md §3)."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import time
from pathlib import Path
from typing import Optional, TextIO

from rocke_py.check.isa import select_configs
from rocke_py.parity.configs import Config

from .check import Outcome, check_config
from .variants import small_variant

HEADER = ("config", "size", "max error", "wrong", "unwritten", "hazards", "seconds")


def select(root: Path, ids: list[str]) -> list[Config]:
    """The emitting configs named by `ids` (all of them when empty); ValueError for an
    unknown id or one that expects a rejection."""
    chosen = select_configs(root, ids)
    for cfg in chosen:
        if not cfg.expect.emits:
            raise ValueError(f"{cfg.id} expects a rejection: it has no kernel to run")
    return chosen


def check_one(cfg_id: str, data: bytes, engine: str, small: bool, real: bool) -> Outcome:
    text = data.decode("utf-8")
    return check_config(cfg_id, small_variant(text) if small else text, engine, real)


def row(o: Outcome) -> tuple[str, ...]:
    if o.error is not None:
        return (o.config, o.size, "ERROR", "-", "-", "-", f"{o.seconds:.2f}")
    err = f"{o.max_error:.3g}" if o.max_error else ("0 (bitwise)" if o.bitwise else "0")
    hz = "; ".join(o.hazards) if o.hazards else "0"
    return (o.config, o.size, err, str(o.wrong), str(o.unwritten), hz, f"{o.seconds:.2f}")


def print_table(outcomes: list[Outcome], out: TextIO) -> None:
    rows = [HEADER] + [row(o) for o in outcomes]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER) - 1)]
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r, widths)] + [r[-1]]
        print("  ".join(cells).rstrip(), file=out)
    for o in outcomes:
        if o.error is not None:
            print(f"ERROR {o.config}: {o.error}", file=out)


def run_numerics(
    root: Path,
    ids: list[str],
    engine: str,
    small: bool,
    real: bool,
    jobs: Optional[int],
    json_path: Optional[str],
    out: TextIO,
) -> int:
    """Exit 0 when every config passes, 1 otherwise."""
    configs = select(root, ids)
    start = time.perf_counter()
    workers = max(1, min(jobs or 2, len(configs)))
    outcomes: dict[str, Outcome] = {}
    if workers == 1:
        for c in configs:
            outcomes[c.id] = check_one(c.id, c.data, engine, small, real)
    else:
        with concurrent.futures.ProcessPoolExecutor(workers) as pool:
            futures = {pool.submit(check_one, c.id, c.data, engine, small, real): c.id for c in configs}
            for fut in concurrent.futures.as_completed(futures):
                outcomes[futures[fut]] = fut.result()
    ordered = [outcomes[c.id] for c in configs]
    wall = time.perf_counter() - start
    print_table(ordered, out)
    failed = [o.config for o in ordered if not o.ok]
    kind = "real inputs, dtype tolerance" if real else "integer inputs, bitwise"
    print(
        f"numerics {'OK' if not failed else 'FAILED'}: {len(ordered) - len(failed)} of {len(ordered)} config(s) pass "
        f"({engine} engine, {'--small' if small else 'shipped sizes'}, {kind}); "
        f"wall time {wall:.1f} s over {workers} process(es)",
        file=out,
    )
    if failed:
        print(f"failing: {' '.join(failed)}", file=out)
    if json_path is not None:
        record = {
            "engine": engine,
            "small": small,
            "real": real,
            "wall_seconds": wall,
            "passed": not failed,
            "configs": [dataclasses.asdict(o) | {"ok": o.ok} for o in ordered],
        }
        text = json.dumps(record, indent=1) + "\n"
        if json_path == "-":
            print(text, end="", file=out)
        else:
            Path(json_path).write_text(text)
    return 0 if not failed else 1
