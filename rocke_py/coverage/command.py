"""`rocke-parity coverage`: which combinations of the spec the shipped configs reach, at which
stratum, and (with --propose) the configs that would close the gaps (docs/coverage.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from rocke_py.parity.store.fileio import check_destination, write_output

from .analyse import analyse
from .feasible import Prober
from .measure import RANK, STRATA
from .propose import describe, propose
from .report import as_json, heatmap_svg, print_report

EXIT_OK, EXIT_FAIL = 0, 1


def run_coverage(
    root: Path,
    out: TextIO,
    json_path: str | None = None,
    svg_path: str | None = None,
    do_propose: bool = False,
    check_numerics: bool = True,
    all_pairs: bool = False,
    target: str = STRATA[-1],
) -> int:
    """Exit 1 when the engines' validators disagree on a probe (a parity failure) or a proposed
    candidate fails its checks; 0 otherwise."""
    for path, what in ((json_path, "--json"), (svg_path, "--svg")):
        if path is not None:
            check_destination(path, what)
    an = analyse(root)
    if "-" in (json_path, svg_path):
        out = sys.stderr  # standard output carries the file: the report goes beside it
    print_report(an, out, all_pairs=all_pairs)
    if json_path is not None:
        write_output(json_path, (json.dumps(as_json(an), indent=1) + "\n").encode(), "--json")
    if svg_path is not None:
        write_output(svg_path, heatmap_svg(an).encode(), "--svg")
    failed = bool(an.disagreements())
    if do_propose:
        seeds = [s for s in an.ships if RANK[s.stratum] >= RANK["gate"] and s.values]
        prober = Prober(seeds)
        progress = lambda s: print(f"  candidate: {s}", file=out, flush=True)  # noqa: E731
        proposed, refused, left = propose(an, prober, target=target, check_numerics=check_numerics, progress=progress)
        print(f"proposed: {len(proposed)} config(s) for the missing feasible tuples", file=out)
        for i, c in enumerate(proposed, 1):
            print(f"# {describe(c)}", file=out)
            print(c.command(f"cover-{i:02d}"), file=out)
        for c in refused:
            print(f"REFUSED (a candidate failed a check): {c.problem}", file=out)
            print(f"# {c.command('refused')}", file=out)
        if left:
            print(f"{len(left)} missing tuple(s) no candidate reached", file=out)
        failed = failed or bool(refused)
    return EXIT_FAIL if failed else EXIT_OK
