"""Configs that reach builder and lowering branches no shipped config reaches: a coverage-guided
search over the knobs the coverage axes leave out (docs/coverage.md §7).

    python scripts/branch_search.py [--seconds S] [--seed N]

Each draw gives a shipped emitting config one to three knob values (tile and wave shape, vector
caps, LDS layout, chiplet parameters, split-K reductions, problem sizes). A draw both engines
accept in mode `spec` is emitted by the Python engine (`ir`, and `ll` in every flavor) under
coverage.py; it is kept when it reaches an arc of the build and lowering files that nothing
before it reached. A kept draw is proposed only when both engines emit identical bytes in every
mode and flavor and numerics finds its kernel bitwise exact at both levels; it is printed as the
`rocke-parity new` command that writes it. The C engine's twins follow the same branches, which
engine_coverage.py then measures."""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from rocke_py.facts import FLAVORS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import coverage  # noqa: E402

FILES = ("build.py", "build_common.py", "build_dgrad.py", "build_fwd.py", "build_wgrad.py", "lower_ll.py")
POW2 = ("1", "2", "4", "8")
KNOBS = (
    ("spec", "tile_m", ("16", "32", "128", "256")),
    ("spec", "tile_n", ("16", "32", "128", "256")),
    ("spec", "tile_k", ("16", "32", "128")),
    ("spec", "warp_m", ("1", "2", "4")),
    ("spec", "warp_n", ("1", "2", "4")),
    ("spec", "vector_size_a", POW2),
    ("spec", "vector_size_b", POW2),
    ("spec", "vector_size_c", POW2),
    ("spec", "lds_k_pad", ("0", "8")),
    ("spec", "lds_layout_pad", ("0", "8")),
    ("spec", "lds_layout_xor", ("0", "1")),
    ("spec", "chiplet_swizzle", ("true",)),
    ("spec", "chiplet_num_xcds", ("1", "2", "8")),
    ("spec", "chiplet_chunk_size", ("1", "4", "64")),
    ("spec", "chiplet_wgm", ("1", "4")),
    ("spec", "two_stage", ("true",)),
    ("spec", "force_deterministic", ("true",)),
    ("spec", "group_merge", ("1", "2")),
    ("spec", "cshuffle_no_alias", ("true",)),
    ("spec", "epilogue", ('"cshuffle"',)),
    ("problem", "N", ("1", "2", "3")),
    ("problem", "C", ("8", "24", "40", "72")),
    ("problem", "K", ("8", "24", "40", "72")),
    ("problem", "Hi", ("5", "9", "17")),
    ("problem", "Wi", ("5", "9", "17")),
    ("problem", "Y", ("1", "5")),
    ("problem", "X", ("1", "5")),
)


def arcs_of(text: str, engine_dir: str) -> set[tuple[str, int, int]]:
    from rocke_py.engine.emit import emit

    cov = coverage.Coverage(branch=True, data_file=None, include=[f"{engine_dir}/{f}" for f in FILES])
    cov.start()
    try:
        emit(text, "ir", "llvm22")
        for flavor in FLAVORS:
            emit(text, "ll", flavor)
    finally:
        cov.stop()
    data = cov.get_data()
    return {(Path(f).name, a, b) for f in data.measured_files() for a, b in data.arcs(f) or ()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=300.0, help="search time (default 300)")
    ap.add_argument("--seed", type=int, default=20261207)
    args = ap.parse_args(argv)

    from rocke_py.coverage.feasible import applied, judge
    from rocke_py.coverage.measure import shipped
    from rocke_py.coverage.propose import Candidate, engines_agree, numerics_exact

    engine_dir = str(ROOT / "rocke_py" / "engine")
    ships = [s for s in shipped(ROOT) if s.config.expect.emits and s.values]
    covered: set = set()
    for s in ships:
        covered |= arcs_of(s.config.data.decode("utf-8"), engine_dir)
    print(f"baseline: {len(covered)} arc(s) of the build and lowering files from {len(ships)} config(s)", flush=True)
    rng = random.Random(args.seed)
    kept: list[tuple[Candidate, int]] = []
    draws = accepted = 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        draws += 1
        seed = rng.choice(ships)
        knobs = rng.sample(KNOBS, rng.randint(1, 3))
        settings = tuple((t, k, rng.choice(values)) for t, k, values in knobs)
        base = seed.config.data.decode("utf-8")
        text = applied(base, settings)
        if text == base or not judge(text).accepted:
            continue
        accepted += 1
        new = arcs_of(text, engine_dir) - covered
        if not new:
            continue
        cand = Candidate(seed.config.id, seed.config.family, {(t, k): v for t, k, v in settings}, text, frozenset())
        cand.problem = engines_agree(text) or numerics_exact(f"search-{len(kept)}", text)
        if cand.problem:
            print(f"# refused ({cand.problem}): {cand.command('x')}", flush=True)
            continue
        covered |= new
        kept.append((cand, len(new)))
        print(f"# {len(new)} new arc(s)\n{cand.command(f'branch-{len(kept):02d}')}", flush=True)
    print(f"{draws} draw(s), {accepted} accepted by both engines, {len(kept)} kept; {len(covered)} arc(s) now")
    return 0


if __name__ == "__main__":
    sys.exit(main())
