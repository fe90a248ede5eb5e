"""Seeded faults against `rocke-parity numerics`: the kill rate of each fault class.

    python bench/bench_mutants.py [--classes C,...] [--per-class 6] [--seed 0] [--json FILE]
                                  [--all] [--ll] [-j 2] [ID ...]

For each config and fault class (rocke_py/numerics/mutants.py) up to --per-class mutants are
sampled on the IR of the config's small size, and each is judged at the default sizes of the
mutant run (the small and the edge variant): killed (wrong, unwritten or a hazard), killed by
error (only an executor error), equivalent (explained in mutants.EQUIVALENT) or live. Prints
the table by class and every survivor with its reason; exit 1 when a mutant is live or an
unmutated config fails.

IDs: emitting configs; `ID@key=value` is that config with [spec] key set (e.g.
`wgrad/07-split-k4-fp32@split_k=0`, the runtime split-K kernel). Default: a representative
subset (every family, MFMA and WMMA, split-K fixed and runtime, K-outer, async, cshuffle);
--all: every emitting config. --ll: the lowering's fault classes (rocke_py/numerics/ll_mutants.py),
seeded in the llvm22 `ll` and judged by the IR and `ll` runs in lockstep. The numbers go in
docs, never in a timed test."""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rocke_py.configtext import set_value  # noqa: E402
from rocke_py.numerics import mutants as mu  # noqa: E402
from rocke_py.numerics.check import check_all_sizes, emit_text  # noqa: E402
from rocke_py.numerics.ll_mutants import CLASSES as LL_CLASSES  # noqa: E402
from rocke_py.numerics.run import select  # noqa: E402
from rocke_py.numerics.variants import check_sizes  # noqa: E402

DEFAULT = [
    "fwd/00-baseline",
    "fwd/01-cshuffle",
    "fwd/04-async-c64",
    "fwd/07-wmma-gfx1250",
    "fwd/08-epilogue-bias-scale-relu-clamp",
    "dgrad/06-split-k2-fp32",
    "dgrad/08-wmma-gfx1201",
    "dgrad/11-kouter-cshuffle",
    "dgrad/14-pointwise-stride2-zeros",
    "wgrad/02-split-k4-fp16-cshuffle",
    "wgrad/05-wmma-gfx1151",
    "wgrad/07-split-k4-fp32",
    "wgrad/20-split-k-runtime",
    "wgrad/12-kouter-async-split-k4-fp32",
    "wgrad/14-basic-split-k4-fp32",
    "wgrad/15-gfx1250-kouter-fp32",
]
STATUSES = (mu.KILLED, mu.ERROR, mu.EQUIV, mu.LIVE)


def config_text(cid: str) -> str:
    """The config's text; `ID@key=value` edits [spec] key."""
    base, *edits = cid.split("@")
    cfg = select(ROOT, [base])[0]
    text = cfg.data.decode("utf-8")
    for edit in edits:
        key, value = edit.split("=", 1)
        text = set_value(text, "spec", key, value)
    return text


def run_unit(cid: str, cls: str, per_class: int, seed: int, limit: float) -> list[dict]:
    """One (config, class): its sampled mutants judged."""
    text = config_text(cid)
    small = check_sizes(text, True)[0][1]
    ir = emit_text(small, "ll", "py", mu.LL_FLAVOR[0]) if cls.startswith("ll-") else emit_text(small, "ir", "py")
    out = []
    for m in mu.sample(ir, cls, per_class, seed, salt=cid):
        out.append(dataclasses.asdict(mu.judge(cid, text, m, limit)))
    return out


def baseline(cid: str, ll: bool) -> list[str]:
    """The failures of the unmutated config (none: the kills are the mutations')."""
    level = "both" if ll else "ir"
    outcomes = check_all_sizes(cid, config_text(cid), engine="py", small=True, level=level, flavors=mu.LL_FLAVOR)
    return [mu.failure(o) for o in outcomes if not o.ok]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--classes", help="comma-separated fault classes (default: all)")
    ap.add_argument("--per-class", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json")
    ap.add_argument("--all", action="store_true", help="every emitting config")
    ap.add_argument("--ll", action="store_true", help="the lowering's fault classes, seeded in the ll")
    ap.add_argument("-j", type=int, default=2, help="worker processes")
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per mutant (over: killed by error)")
    args = ap.parse_args()
    known = list(LL_CLASSES) if args.ll else list(mu.CLASSES)
    classes = args.classes.split(",") if args.classes else known
    unknown = [c for c in classes if c not in known]
    if unknown:
        ap.error(f"unknown class(es) {', '.join(unknown)}; known: {', '.join(known)}")
    ids = args.ids or ([c.id for c in select(ROOT, [])] if args.all else DEFAULT)
    start = time.perf_counter()
    ctx = multiprocessing.get_context("spawn")
    verdicts: list[dict] = []
    broken: dict[str, list[str]] = {}
    with concurrent.futures.ProcessPoolExecutor(max(1, args.j), mp_context=ctx) as pool:
        bases = {pool.submit(baseline, cid, args.ll): cid for cid in ids}
        units = {
            pool.submit(run_unit, cid, cls, args.per_class, args.seed, args.time_limit): (cid, cls)
            for cid in ids
            for cls in classes
        }
        for fut in concurrent.futures.as_completed(bases):
            fails = fut.result()
            if fails:
                broken[bases[fut]] = fails
        for fut in concurrent.futures.as_completed(units):
            verdicts.extend(fut.result())
    wall = time.perf_counter() - start
    order = {(cid, cls): i for i, (cid, cls) in enumerate((c, k) for c in ids for k in classes)}
    verdicts = [v for v in verdicts if v["config"] not in broken]
    verdicts.sort(key=lambda v: (order[(v["config"], mu.class_of(v["mutant"]))], v["mutant"]))

    head = f"{'class':28s} {'mutants':>7s} {'killed':>7s} {'by error':>8s} {'equiv':>6s} {'live':>5s} {'kill rate':>9s}"
    print(head)
    totals = dict.fromkeys(STATUSES, 0)
    table = {}
    for cls in classes:
        vs = [v for v in verdicts if mu.class_of(v["mutant"]) == cls]
        counts = {s: sum(1 for v in vs if v["status"] == s) for s in STATUSES}
        for s in STATUSES:
            totals[s] += counts[s]
        table[cls] = counts | {"mutants": len(vs)}
        print(row(cls, len(vs), counts))
    print(row("all", len(verdicts), totals))
    print(
        f"{len(ids)} config(s), {len(classes)} class(es), per class {args.per_class}, seed {args.seed}; "
        f"wall {wall:.0f} s over {args.j} process(es)"
    )
    for cid, fails in broken.items():
        print(f"UNMUTATED FAILS {cid}: {'; '.join(fails)} (its mutants are left out)")
    for v in verdicts:
        if v["status"] in (mu.EQUIV, mu.LIVE):
            print(f"{v['status'].upper():10s} {v['config']} {v['mutant']}: {v['description']} -- {v['detail']}")
    if args.json:
        record = {
            "date": time.strftime("%Y-%m-%d"),
            "configs": ids,
            "classes": classes,
            "per_class": args.per_class,
            "seed": args.seed,
            "wall_seconds": wall,
            "table": table,
            "unmutated_failures": broken,
            "verdicts": verdicts,
        }
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    return 1 if broken or totals[mu.LIVE] else 0


def row(name: str, n: int, counts: dict[str, int]) -> str:
    judged = n - counts[mu.EQUIV]
    rate = f"{100 * (counts[mu.KILLED] + counts[mu.ERROR]) / judged:.0f}%" if judged else "-"
    return (
        f"{name:28s} {n:7d} {counts[mu.KILLED]:7d} {counts[mu.ERROR]:8d} {counts[mu.EQUIV]:6d} "
        f"{counts[mu.LIVE]:5d} {rate:>9s}"
    )


if __name__ == "__main__":
    sys.exit(main())
