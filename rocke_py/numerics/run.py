"""`rocke-parity numerics [ID...]`: every selected emitting config checked at each of its check
sizes, in parallel over worker processes, one table row per launch (docs/numerics.md §3).

The workers die with the command (the kernel SIGKILLs them when it dies, as the gate's do), a
SIGTERM or SIGINT (which the command turns into an exception, processes.interrupts_raise) kills
them at once and exits 128 + the signal, and `--json` is checked
before any work and written atomically."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import multiprocessing
import os
import tempfile
import time
from pathlib import Path
from typing import Optional, TextIO

from rocke_py.check.isa import select_configs
from rocke_py.parity.inputs.configs import Config
from rocke_py.parity.run.processes import die_with_parent, start_method
from rocke_py.parity.store.fileio import STDOUT, WriteError, check_destination, write_output

from .check import Outcome, check_all_sizes

HEADER = ("config", "at", "size", "level", "max error", "wrong", "unwritten", "hazards", "seconds")


def select(root: Path, ids: list[str]) -> list[Config]:
    """The emitting configs named by `ids` (all of them when empty); ValueError for an
    unknown id or one that expects a rejection."""
    chosen = select_configs(root, ids)
    if not chosen:
        raise ValueError(f"no config expects emit under {root / 'parity_configs'}: nothing to run")
    for cfg in chosen:
        if not cfg.expect.emits:
            raise ValueError(f"{cfg.id} expects a rejection: it has no kernel to run")
    return chosen


def check_one(
    cfg_id: str, data: bytes, engine: str, small: bool, real: bool, shrink: bool, level: str = "ir"
) -> list[Outcome]:
    return check_all_sizes(cfg_id, data.decode("utf-8"), engine, small, real, shrink=shrink, level=level)


def row(o: Outcome) -> tuple[str, ...]:
    head = (o.config, o.label, o.size, o.level)
    if o.too_large is not None:
        return head + ("SKIPPED", "-", "-", "-", f"{o.seconds:.2f}")
    if o.mismatch:
        return head + ("SPEC MISMATCH", "-", "-", "-", f"{o.seconds:.2f}")
    if o.error is not None:
        return head + ("ERROR", "-", "-", "-", f"{o.seconds:.2f}")
    if o.lockstep is not None:
        return head + ("LOCKSTEP", str(o.wrong), str(o.unwritten), "-", f"{o.seconds:.2f}")
    err = f"{o.max_error:.3g}" if o.max_error else ("0 (bitwise)" if o.bitwise else "0")
    hz = "; ".join(o.hazards) if o.hazards else "0"
    return head + (err, str(o.wrong), str(o.unwritten), hz, f"{o.seconds:.2f}")


def print_table(outcomes: list[Outcome], out: TextIO) -> None:
    rows = [HEADER] + [row(o) for o in outcomes]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER) - 1)]
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r, widths)] + [r[-1]]
        print("  ".join(cells).rstrip(), file=out)
    for o in outcomes:
        where = f"{o.config} ({o.label}, {o.size}, {o.level})"
        if o.too_large is not None:
            print(f"SKIPPED {where}: too large to run: {o.too_large} (--shrink runs it smaller)", file=out)
        for line in o.mismatch:
            print(f"SPEC MISMATCH {where}: {line}", file=out)
        if o.error is not None:
            print(f"ERROR {where}: {o.error}", file=out)
        if o.lockstep is not None:
            print(f"LOCKSTEP {where}: the ll departs from the IR at {o.lockstep}", file=out)


def check_json_destination(dest: Optional[str]) -> None:
    """WriteError, before any work, for a --json destination that cannot be written: the checks
    of fileio.check_destination, and a probe file in the destination's directory."""
    if dest is None or dest == STDOUT:
        return
    check_destination(dest, "--json")
    folder = Path(os.path.realpath(dest)).parent
    if not folder.is_dir():  # a folder the write will create: its nearest existing ancestor decides
        ancestor = next((a for a in folder.parents if a.is_dir()), Path("/"))
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise WriteError(f"cannot write --json {dest}: {ancestor} is not writable")
        return
    try:
        fd, probe = tempfile.mkstemp(prefix=".numerics-probe-", dir=folder)
    except OSError as e:
        raise WriteError(f"cannot write --json {dest}: {e.strerror or e}") from None
    os.close(fd)
    os.unlink(probe)


def run_pool(configs: list[Config], workers: int, args: tuple) -> dict[str, list[Outcome]]:
    """Each config checked in one of `workers` processes that die with this one; a worker that
    dies (a crash, the OOM killer) fails the configs it had."""
    outcomes: dict[str, list[Outcome]] = {}
    ctx = multiprocessing.get_context(start_method())
    pool = concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=ctx, initializer=die_with_parent, initargs=(os.getpid(),)
    )
    try:
        futures = {pool.submit(check_one, c.id, c.data, *args): c.id for c in configs}
        for fut in concurrent.futures.as_completed(futures):
            cfg_id = futures[fut]
            try:
                outcomes[cfg_id] = fut.result()
            except concurrent.futures.process.BrokenProcessPool as e:
                outcomes[cfg_id] = [died(cfg_id, args[0], str(e) or "a worker process died")]
    except BaseException:
        for child in multiprocessing.active_children():
            child.kill()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return outcomes


def died(cfg_id: str, engine: str, why: str) -> Outcome:
    return Outcome(cfg_id, engine, "?", True, 0, 0, 0.0, 0, (), 0.0, 0, error=f"worker died: {why}")


def summary(
    ordered: list[Outcome],
    configs: int,
    engine: str,
    small: bool,
    real: bool,
    wall: float,
    workers: int,
    level: str = "ir",
):
    failed = sorted({o.config for o in ordered if not o.ok and not o.skipped})
    skipped = sum(1 for o in ordered if o.skipped)
    launches = len({(o.config, o.label, o.size) for o in ordered})
    kind = "real inputs, dtype tolerance" if real else "integer inputs, bitwise"
    sizes = "small and edge sizes" if small else "shipped, small and edge sizes"
    levels = {
        "ir": "IR",
        "ll": "ll (every flavor at the small size)",
        "both": "IR and ll (every flavor at the small size) in lockstep",
    }[level]
    verdict = "OK" if not failed else "FAILED"
    text = (
        f"numerics {verdict}: {configs - len(failed)} of {configs} config(s) pass, {launches} launch(es)"
        + (f" ({len(ordered)} runs)" if len(ordered) != launches else "")
        + (f", {skipped} skipped as too large" if skipped else "")
        + f" ({engine} engine, {levels}, {sizes}, {kind}); wall time {wall:.1f} s over {workers} process(es)"
    )
    return failed, text


def run_numerics(
    root: Path,
    ids: list[str],
    engine: str,
    small: bool,
    real: bool,
    jobs: Optional[int],
    json_path: Optional[str],
    out: TextIO,
    shrink: bool = False,
    level: str = "both",
) -> int:
    """Exit 0 when every config passes, 1 otherwise."""
    configs = select(root, ids)
    check_json_destination(json_path)
    start = time.perf_counter()
    workers = max(1, min(jobs or 2, len(configs)))
    args = (engine, small, real, shrink, level)
    if workers == 1:
        outcomes = {c.id: check_one(c.id, c.data, *args) for c in configs}
    else:
        outcomes = run_pool(configs, workers, args)
    ordered = [o for c in configs for o in outcomes[c.id]]
    wall = time.perf_counter() - start
    print_table(ordered, out)
    failed, text = summary(ordered, len(configs), engine, small, real, wall, workers, level)
    print(text, file=out)
    if failed:
        print(f"failing: {' '.join(failed)}", file=out)
    if json_path is not None:
        record = {
            "engine": engine,
            "small": small,
            "real": real,
            "level": level,
            "wall_seconds": wall,
            "passed": not failed,
            "configs": [dataclasses.asdict(o) | {"ok": o.ok} for o in ordered],
        }
        text = json.dumps(record, indent=1) + "\n"
        if json_path == STDOUT:
            print(text, end="", file=out)
        else:
            write_output(json_path, text.encode(), "--json")
    return 0 if not failed else 1
