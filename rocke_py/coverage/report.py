"""What `rocke-parity coverage` prints and writes: the per-stratum figures, the per-axis-pair
table, the gaps, JSON for tools and an SVG heatmap for a pull request page (docs/coverage.md §3)."""

from __future__ import annotations

import html
import itertools
from typing import TextIO

from .analyse import STRENGTHS, Analysis, Row
from .axes import AXES
from .measure import STRATA, tuple_key

SCHEMA = "rocke-parity.coverage/v1"
TOP = STRATA[-1]


def figure_lines(an: Analysis) -> list[str]:
    head = f"{'':12} {'feasible':>9} {'infeasible':>10}" + "".join(f" {s:>12}" for s in STRATA)
    out = [head]
    for strength, label in STRENGTHS.items():
        if not an.of(strength):
            continue
        f = an.figures(strength)
        cells = "".join(f" {f[s]['percent']:>11.1f}%" for s in STRATA)  # type: ignore[index]
        out.append(f"{label:12} {f['feasible']:>9} {f['infeasible']:>10}{cells}")
    return out


def pair_table(an: Analysis) -> list[tuple[str, str, int, int]]:
    """(axis, axis, feasible tuples, tuples at the top stratum) for each pair of axes."""
    by_pair: dict[tuple[str, str], list[Row]] = {}
    for r in an.feasible(2):
        by_pair.setdefault((r.tuple[0][0], r.tuple[1][0]), []).append(r)
    out = []
    for a, b in itertools.combinations([x.name for x in AXES], 2):
        rows = by_pair.get((a, b), [])
        if rows:
            out.append((a, b, len(rows), sum(r.stratum == TOP for r in rows)))
    return out


def print_report(an: Analysis, out: TextIO, all_pairs: bool = False, limit: int = 40) -> None:
    p = lambda s="": print(s, file=out)  # noqa: E731
    shipped = [s for s in an.ships if s.values]
    p(f"coverage of {len(shipped)} readable configs over {len(AXES)} axes ({an.probes_run} probe(s) run)")
    p("share of the feasible tuples reached at each stratum or above:")
    for line in figure_lines(an):
        p("  " + line)
    table = pair_table(an)
    gaps = [row for row in table if row[3] < row[2]]
    p(f"axis pairs: {len(table)} with a feasible tuple, {len(gaps)} below {TOP}")
    for a, b, n, top in table if all_pairs else gaps:
        p(f"  {a:>12} × {b:<12} {top:>3}/{n:<3} {100.0 * top / n:6.1f}%")
    for strength, label in STRENGTHS.items():
        missing = [r for r in an.feasible(strength) if r.stratum != TOP]
        if missing:
            p(f"{label} tuples feasible but not at {TOP}: {len(missing)}")
            for r in missing[:limit]:
                seen = f"{r.stratum} ({', '.join(r.configs[:2])})" if r.configs else "no config"
                p(f"  {tuple_key(r.tuple)}: {seen}")
            if len(missing) > limit:
                p(f"  ... and {len(missing) - limit} more (--json has them all)")
    for r in an.disagreements():
        probe = r.feasibility.probe
        p(f"PARITY FAILURE {tuple_key(r.tuple)}: {r.feasibility.note} (probe from {probe.seed if probe else '?'})")
    uncrossed = an.uncrossed_rules()
    if uncrossed:
        p(f"rules that make a tuple infeasible with no negative config expecting them: {', '.join(uncrossed)}")


def row_json(r: Row) -> dict[str, object]:
    f = r.feasibility
    out: dict[str, object] = {
        "tuple": tuple_key(r.tuple),
        "strength": r.strength,
        "stratum": r.stratum,
        "configs": list(r.configs),
        "feasibility": f.status,
    }
    if f.codes:
        out["rules"] = list(f.codes)
    if f.probe is not None:
        out["probe"] = {"seed": f.probe.seed, "settings": [list(s) for s in f.probe.settings]}
    if f.note:
        out["note"] = f.note
    return out


def as_json(an: Analysis) -> dict[str, object]:
    return {
        "schema": SCHEMA,
        "axes": {a.name: {"values": list(a.values), "keys": list(a.keys), "families": list(a.families)} for a in AXES},
        "strata": list(STRATA),
        "figures": {label: an.figures(s) for s, label in STRENGTHS.items() if an.of(s)},
        "pairs": [{"axes": [a, b], "feasible": n, TOP: top} for a, b, n, top in pair_table(an)],
        "tuples": [row_json(r) for r in an.rows],
        "parity_failures": [tuple_key(r.tuple) for r in an.disagreements()],
        "rules_without_negative_config": an.uncrossed_rules(),
    }


def colour(share: float) -> str:
    """Red (0) through yellow to green (1)."""
    red = 220 if share < 0.5 else int(220 * (1 - share) * 2)
    green = int(190 * share * 2) if share < 0.5 else 190
    return f"rgb({red},{green},60)"


def heatmap_svg(an: Analysis) -> str:
    """One cell per pair of axes: the share of its feasible tuples at the top stratum."""
    names = [a.name for a in AXES]
    cells = {(a, b): (n, top) for a, b, n, top in pair_table(an)}
    size, left, top_margin = 18, 110, 110
    width = left + size * len(names) + 10
    height = top_margin + size * len(names) + 40
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        f'font-size="10">',
        f'<text x="4" y="14" font-size="12">2-way tuples at {TOP}, per pair of axes (grey: none feasible)</text>',
    ]
    for i, name in enumerate(names):
        y = top_margin + i * size + 13
        parts.append(f'<text x="{left - 4}" y="{y}" text-anchor="end">{html.escape(name)}</text>')
        x = left + i * size + 12
        turn = f"rotate(-60 {x} {top_margin - 4})"
        parts.append(f'<text x="{x}" y="{top_margin - 4}" transform="{turn}">{html.escape(name)}</text>')
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            n, top = cells.get((a, b)) or cells.get((b, a)) or (0, 0)
            fill = "#ddd" if n == 0 else colour(top / n)
            title = f"{a} × {b}: {top}/{n}" if n else f"{a} × {b}: none feasible"
            parts.append(
                f'<rect x="{left + j * size}" y="{top_margin + i * size}" width="{size - 1}" height="{size - 1}" '
                f'fill="{fill}"><title>{html.escape(title)}</title></rect>'
            )
    lines = figure_lines(an)
    for k, line in enumerate(lines[1:]):
        parts.append(f'<text x="4" y="{height - 24 + 12 * k}">{html.escape(" ".join(line.split()))}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
