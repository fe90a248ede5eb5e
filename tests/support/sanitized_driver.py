"""The C engine under AddressSanitizer + UBSan, as a subprocess: rocke_c/tests/emit_driver.c
built into a directory the caller owns (pytest's tmp_path, so xdist workers never share a
binary), run over files, its length-prefixed records parsed back.

Built by tests/conftest.py (the sanitized_emit_driver fixture) and tests/tools/fuzz_parser.py. A sanitizer report
makes the driver exit nonzero (-fno-sanitize-recover=all, halt_on_error) and always writes
to stderr; both count as a failure of the run, never as a rejection."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from cbuild import SAN_ENV, build, parse_records

from rocke_py.engine import emit
from rocke_py.engine.result import Emitted

BATCH = 400

Record = tuple[str, Optional[str], bytes]  # ("E", None, text) | ("R"|"X", code, message)


def build_driver(out_dir: Path) -> Path:
    """Compiles the sanitized driver into out_dir (tests/tools/cbuild.py); BuildError when that fails."""
    return build("rocke_c/tests/emit_driver.c", out_dir, sanitize=True)


def python_record(data: bytes, mode: str = "spec", flavor: str = "llvm22", emit_fn=emit) -> Record:
    """The record the driver would give for the Python engine's result (emit_fn: the engine,
    or tests/support/engine_memo.py's kept results of it)."""
    out = emit_fn(data, mode, flavor)
    if isinstance(out, Emitted):
        return ("E", None, out.text.encode())
    return ("R", out.code, out.message.encode())


@dataclass
class DriverRun:
    records: list[Record]
    returncode: int
    stderr: bytes


def run_driver(
    driver: Path, files: Iterable[Path], mode: str = "spec", flavor: str = "llvm22", timeout: float = 300
) -> DriverRun:
    """One driver process over the files (in order). The caller checks returncode/stderr."""
    env = dict(os.environ, **SAN_ENV)
    run = subprocess.run([str(driver), mode, flavor, *map(str, files)], capture_output=True, env=env, timeout=timeout)
    records = parse_records(run.stdout) if run.returncode == 0 else []
    return DriverRun(records, run.returncode, run.stderr)


def run_batches(
    driver: Path, files: list[Path], mode: str = "spec", flavor: str = "llvm22"
) -> tuple[list[Optional[Record]], list[tuple[Path, str]]]:
    """Records for every file, in batches; a failing batch is rerun file by file, so a sanitizer
    report or crash names its file. Returns (records, failures) with None for a failed file."""
    records: list[Optional[Record]] = []
    failures: list[tuple[Path, str]] = []
    for start in range(0, len(files), BATCH):
        batch = files[start : start + BATCH]
        run = run_driver(driver, batch, mode, flavor)
        if run.returncode == 0 and not run.stderr and len(run.records) == len(batch):
            records.extend(run.records)
            continue
        for path in batch:
            one = run_driver(driver, [path], mode, flavor)
            if one.returncode == 0 and not one.stderr and len(one.records) == 1:
                records.append(one.records[0])
            else:
                records.append(None)
                failures.append((path, f"exit {one.returncode}: " + one.stderr.decode("utf-8", "replace")[-3000:]))
    return records, failures
