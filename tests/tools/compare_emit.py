"""Compare the C engine (through rocke_c/tests/emit_driver) with the Python engine on files.

    python3 tests/tools/compare_emit.py DRIVER [--mode spec] [--flavor llvm22] FILE...

Runs the driver once over all files (in batches), runs rocke_py.engine.emit on the same
bytes, and prints every file whose results differ (status, code, message or text bytes),
then a summary. Exit 1 on any difference or engine failure."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cbuild import parse_records  # noqa: E402  (this directory: the script's)

from rocke_py.engine import emit  # noqa: E402
from rocke_py.engine.result import Emitted  # noqa: E402

BATCH = 500


def python_record(data: bytes, mode: str, flavor: str):
    out = emit(data, mode, flavor)
    if isinstance(out, Emitted):
        return ("E", None, out.text.encode())
    return ("R", out.code, out.message.encode())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("driver")
    ap.add_argument("--mode", default="spec")
    ap.add_argument("--flavor", default="llvm22")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    same = differ = 0
    counts: dict[str, int] = {}
    for start in range(0, len(args.files), BATCH):
        batch = args.files[start : start + BATCH]
        run = subprocess.run([args.driver, args.mode, args.flavor, *batch], capture_output=True)
        if run.returncode != 0:
            print(f"driver failed ({run.returncode}): {run.stderr.decode(errors='replace')[-2000:]}")
            return 1
        records = parse_records(run.stdout)
        assert len(records) == len(batch), (len(records), len(batch))
        for path, c in zip(batch, records):
            py = python_record(Path(path).read_bytes(), args.mode, args.flavor)
            key = "EMITTED" if py[0] == "E" else py[1]
            counts[key] = counts.get(key, 0) + 1
            if py == c:
                same += 1
                continue
            differ += 1
            if differ <= 20:
                print(f"DIFFER {path}\n  py: {py[0]} {py[1]} {py[2][:300]!r}\n   c: {c[0]} {c[1]} {c[2][:300]!r}")
    print(f"{same}/{same + differ} identical; outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
