"""The porting loop: edit -> verdict, as a developer lives it.

In a scratch copy of this repository (its own C build cache, warmed by one gate first), each
round makes a one-file edit and times the command that gives the new engine's verdict:

- ``c config``: a comment added to ``rocke_c/src/lower_ll.c`` (the largest unit), then
  ``rocke-parity gate --config ID``: the unit compiles again, the engine links, the gate runs;
- ``c full``: the same edit, then the whole ``rocke-parity gate``;
- ``py config``: a comment added to ``rocke_py/engine/lower_ll.py``, then ``gate --config ID``.

The command is the copy's own harness (``python -P -m rocke_py.parity`` with the copy first on
the path, which is what an editable install's console script runs). Medians of --rounds, the
contract's targets beside them (<= 4 s, <= 8 s, <= 2 s on a 2-core machine).

    python bench/bench_loop.py [--rounds 5] [--config wgrad/11-kouter-cshuffle] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))

from repo_copy import copy_repository  # noqa: E402 - the tests' copy of the working tree

TARGETS = {"c config": 4.0, "c full": 8.0, "py config": 2.0}


def gate(root: Path, env: dict[str, str], *args: str) -> float:
    cmd = [sys.executable, "-P", "-m", "rocke_py.parity", "gate", *args]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"gate failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return dt


def touch_comment(path: Path, n: int) -> None:
    """A one-line edit that changes the file's bytes but not what the engine emits."""
    with path.open("a", encoding="utf-8") as f:
        f.write(f"/* edit {n} */\n" if path.suffix in (".c", ".h") else f"# edit {n}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--config", default="wgrad/11-kouter-cshuffle")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-loop-") as tmp:
        root = copy_repository(Path(tmp) / "repo")
        env = dict(os.environ, PYTHONPATH=str(root), ROCKE_PARITY_CACHE=str(Path(tmp) / "cache"))
        env.pop("ROCKE_PARITY_TREE", None)
        cold = gate(root, env)  # the first build of every unit, then the whole gate
        gate(root, env)  # the output cache holds both engines' outputs, as in a used checkout
        times: dict[str, list[float]] = {k: [] for k in TARGETS}
        c_file, py_file = root / "rocke_c/src/lower_ll.c", root / "rocke_py/engine/lower_ll.py"
        for n in range(args.rounds):
            touch_comment(c_file, 2 * n)
            times["c config"].append(gate(root, env, "--config", args.config))
            touch_comment(c_file, 2 * n + 1)
            times["c full"].append(gate(root, env))
            touch_comment(py_file, n)
            times["py config"].append(gate(root, env, "--config", args.config))
    result = {
        "cold_first_gate_seconds": round(cold, 2),
        "rounds": args.rounds,
        "config": args.config,
        "median_seconds": {k: round(statistics.median(v), 2) for k, v in times.items()},
        "all_seconds": {k: [round(x, 2) for x in v] for k, v in times.items()},
        "targets_seconds": TARGETS,
    }
    print(f"first gate in a new copy (every unit compiled): {cold:.2f} s")
    for k, v in times.items():
        med = statistics.median(v)
        print(f"{k:10s} median {med:5.2f} s  (target <= {TARGETS[k]:.0f} s)  runs {', '.join(f'{x:.2f}' for x in v)}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
