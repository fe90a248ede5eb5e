"""The options of ``rocke-parity fuzz`` and the command itself (cli.py only wires them in).

Exit status: 0 when no case failed, 1 when one did (each reduced and saved under ``--report``)
or when no case ran at all, 2 on a usage error (raised as :class:`rocke_py.parity.judge.jobs.UsageError`,
or argparse's for a seconds option that is not a finite number in range; ``--add-configs``
without ``--report``, refused before the run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rocke_py.facts import MODES
from rocke_py.parity.run.engines import EngineSpec

# the driver and the gate are imported when the command runs: the parser (and so every other
# command's start, and the gate's early workers) stays light
if TYPE_CHECKING:
    from rocke_py.fuzz.driver import Settings


def add_options(p: argparse.ArgumentParser) -> None:
    # imported here: cli.py imports this module before it defines its seconds type
    from rocke_py.parity.cli import MIN_BUDGET, seconds

    p.add_argument("--seed", type=int, required=True, metavar="S", help="the seed: the same seed draws the same cases")
    p.add_argument(
        "--budget",
        type=seconds(MIN_BUDGET),
        required=True,
        metavar="SECONDS",
        help=f"time to spend drawing cases (at least {MIN_BUDGET:g})",
    )
    p.add_argument("--family", action="append", default=[], metavar="F", help="only this family (repeatable, or F,G)")
    p.add_argument("--modes", metavar="spec,ir,ll", help="modes to run (default: every mode both engines implement)")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="worker processes (default: the CPUs)")
    p.add_argument(
        "--report", metavar="DIR", help="write the table and each failure (original, reduced, log, parity config) here"
    )
    p.add_argument("--timeout", type=seconds(), default=30.0, metavar="S", help="per-job limit in seconds (default 30)")
    p.add_argument("--cases", type=int, default=None, metavar="N", help="stop after N cases (also bounded by --budget)")
    p.add_argument(
        "--reduce-seconds", type=seconds(), default=120.0, metavar="S", help="time for each reduction (default 120)"
    )
    p.add_argument("--max-reductions", type=int, default=5, metavar="N", help="failure signatures reduced (default 5)")
    p.add_argument(
        "--add-configs",
        action="store_true",
        help="also write each reduced failure's config (see --report, which it needs) into parity_configs/",
    )
    p.add_argument("--numerics", action="store_true", help="check emitted kernels with the executor (rocke_py/exec)")


def settings(args: argparse.Namespace) -> Settings:
    from rocke_py.fuzz.driver import Settings
    from rocke_py.fuzz.generate import FAMILIES
    from rocke_py.parity.commands.common import csv_items
    from rocke_py.parity.judge.jobs import UsageError

    fams = tuple(f for item in args.family for f in csv_items(item)) or FAMILIES
    bad = [f for f in fams if f not in FAMILIES]
    if bad:
        raise UsageError(f"unknown family {bad[0]!r} (families: {', '.join(FAMILIES)})")
    modes = tuple(csv_items(args.modes)) if args.modes else None
    if modes is not None and (not modes or any(m not in MODES for m in modes)):
        raise UsageError(f"--modes takes a list of {', '.join(MODES)}")
    if (args.jobs is not None and args.jobs < 1) or (args.cases is not None and args.cases < 1):
        raise UsageError("-j and --cases need a positive number")
    if args.add_configs and not args.report:
        # the config it adds is the report folder's, whose original, log and outcome its review reads
        raise UsageError(
            "--add-configs needs --report DIR: each config it adds is written there first, beside the failure "
            "it reproduces, for review"
        )
    return Settings(
        seed=args.seed,
        budget=args.budget,
        families=tuple(dict.fromkeys(fams)),
        modes=modes,
        jobs=args.jobs,
        timeout=args.timeout,
        report=Path(args.report) if args.report else None,
        cases=args.cases,
        reduce_seconds=args.reduce_seconds,
        max_reductions=max(0, args.max_reductions),
        add_configs=args.add_configs,
    )


def run(args: argparse.Namespace, root: Path, engines: EngineSpec, out: TextIO) -> int:
    from rocke_py.fuzz.driver import run_fuzz
    from rocke_py.fuzz.oracles import load_numerics

    s = settings(args)
    numerics = load_numerics() if args.numerics else None
    result = run_fuzz(root, s, engines, out, numerics)
    print("\n".join(result.table), file=out)
    if s.report is not None:
        print(f"report: {s.report}", file=out)
    if not result.tally.cases:  # the budget went on starting the workers: nothing was checked
        print(
            f"rocke-parity fuzz: no case ran in --budget {s.budget:g} s (the run took {result.seconds:.1f} s, "
            "the workers' start included): nothing was checked; give a larger --budget",
            file=sys.stderr,
        )
        return 1
    return 0 if result.passed else 1
