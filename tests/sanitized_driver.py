"""The C engine under AddressSanitizer + UBSan, as a subprocess: rocke_c/tests/emit_driver.c
built into a directory the caller owns (pytest's tmp_path, so xdist workers never share a
binary), run over files, its length-prefixed records parsed back.

Used by tests/test_bad_configs_parity.py and tests/tools/fuzz_parser.py. A sanitizer report
makes the driver exit nonzero (-fno-sanitize-recover=all, halt_on_error) and always writes
to stderr; both count as a failure of the run, never as a rejection."""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from rocke_py.engine import emit
from rocke_py.engine.result import Emitted

ROOT = Path(__file__).resolve().parents[1]
CFLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-g",
          "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
SAN_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1:exitcode=87",
}
BATCH = 400

Record = tuple[str, Optional[str], bytes]   # ("E", None, text) | ("R"|"X", code, message)


class DriverBuildError(RuntimeError):
    """The sanitized driver did not compile (the message is the compiler's output)."""


def compiler() -> Optional[str]:
    return shutil.which("gcc")


def build_driver(out_dir: Path) -> Path:
    """Compiles the sanitized driver into out_dir; DriverBuildError when that fails."""
    cc = compiler()
    if cc is None:
        raise FileNotFoundError("gcc")
    out = Path(out_dir) / "emit_driver"
    sources = sorted(str(p) for p in (ROOT / "rocke_c" / "src").glob("*.c"))
    cmd = [cc, *CFLAGS, f"-I{ROOT / 'rocke_c' / 'include'}", *sources,
           str(ROOT / "rocke_c" / "tests" / "emit_driver.c"), "-o", str(out)]
    run = subprocess.run(cmd, capture_output=True)
    if run.returncode != 0:
        raise DriverBuildError(run.stderr.decode("utf-8", "replace")[-4000:])
    return out


def parse_records(data: bytes) -> list[Record]:
    out: list[Record] = []
    pos = 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        head = data[pos:nl].split(b" ")
        n = int(head[-1])
        body = data[nl + 1:nl + 1 + n]
        pos = nl + 1 + n + 1
        if head[0] == b"E":
            out.append(("E", None, body))
        else:
            out.append((head[0].decode(), head[1].decode(), body))
    return out


def python_record(data: bytes, mode: str = "spec", flavor: str = "llvm22") -> Record:
    out = emit(data, mode, flavor)
    if isinstance(out, Emitted):
        return ("E", None, out.text.encode())
    return ("R", out.code, out.message.encode())


@dataclass
class DriverRun:
    records: list[Record]
    returncode: int
    stderr: bytes


def run_driver(driver: Path, files: Iterable[Path], mode: str = "spec",
               flavor: str = "llvm22", timeout: float = 300) -> DriverRun:
    """One driver process over the files (in order). The caller checks returncode/stderr."""
    env = dict(os.environ, **SAN_ENV)
    run = subprocess.run([str(driver), mode, flavor, *map(str, files)], capture_output=True,
                         env=env, timeout=timeout)
    records = parse_records(run.stdout) if run.returncode == 0 else []
    return DriverRun(records, run.returncode, run.stderr)


def run_batches(driver: Path, files: list[Path], mode: str = "spec",
                flavor: str = "llvm22") -> tuple[list[Optional[Record]], list[tuple[Path, str]]]:
    """Records for every file, in batches; a failing batch is rerun file by file, so a sanitizer
    report or crash names its file. Returns (records, failures) with None for a failed file."""
    records: list[Optional[Record]] = []
    failures: list[tuple[Path, str]] = []
    for start in range(0, len(files), BATCH):
        batch = files[start:start + BATCH]
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
                failures.append((path, f"exit {one.returncode}: "
                                       + one.stderr.decode("utf-8", "replace")[-3000:]))
    return records, failures
