"""One coverage analysis of the tree: every tuple of both strengths with its stratum and its
feasibility, and the figures per stratum (docs/coverage.md §3, §4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from rocke_py.parity.inputs.configs import Config

from .feasible import Feasibility, Prober
from .measure import NONE, RANK, STRATA, Reached, Shipped, Tuple, all_pairs, core_triples, reach, shipped

STRENGTHS = {2: "2-way", 3: "3-way core"}


@dataclass(frozen=True)
class Row:
    tuple: Tuple
    strength: int
    stratum: str  # the highest stratum reached ("none" when no config contains it)
    configs: tuple[str, ...]  # the configs at that stratum
    feasibility: Feasibility


@dataclass
class Analysis:
    ships: list[Shipped]
    rows: list[Row] = field(default_factory=list)
    probes_run: int = 0

    def of(self, strength: int) -> list[Row]:
        return [r for r in self.rows if r.strength == strength]

    def feasible(self, strength: int) -> list[Row]:
        return [r for r in self.of(strength) if r.feasibility.status in ("covered", "feasible")]

    def figures(self, strength: int) -> dict[str, object]:
        """NIST CCM style: the share of the feasible tuples reached at each stratum or above."""
        feas = self.feasible(strength)
        rows = self.of(strength)
        out: dict[str, object] = {
            "tuples": len(rows),
            "feasible": len(feas),
            "infeasible": sum(r.feasibility.status == "infeasible" for r in rows),
            "disputed": sum(r.feasibility.status == "disagree" for r in rows),
        }
        for s in STRATA:
            n = sum(RANK[r.stratum] >= RANK[s] for r in feas)
            out[s] = {"count": n, "percent": round(100.0 * n / len(feas), 2) if feas else 100.0}
        return out

    def disagreements(self) -> list[Row]:
        return [r for r in self.rows if r.feasibility.status == "disagree"]

    def uncrossed_rules(self) -> list[str]:
        """Rules that make a tuple infeasible but that no shipped negative config expects."""
        expected = {s.config.expect.reject_code for s in self.ships if not s.config.expect.emits}
        named = {c for r in self.rows if r.feasibility.status == "infeasible" for c in r.feasibility.codes}
        return sorted(named - expected)


def decide_row(t: Tuple, strength: int, reached: dict[Tuple, Reached], prober: Optional[Prober]) -> Row:
    got = reached.get(t)
    stratum = got.stratum if got else NONE
    configs = got.configs if got else ()
    if RANK[stratum] >= RANK["gate"]:
        return Row(t, strength, stratum, configs, Feasibility("covered"))
    if prober is None:
        return Row(t, strength, stratum, configs, Feasibility("unknown"))
    return Row(t, strength, stratum, configs, prober.decide(t))


def analyse(
    root: Path, configs: Optional[list[Config]] = None, probe: bool = True, strengths: tuple[int, ...] = (2, 3)
) -> Analysis:
    """`probe=False` skips the engines (every tuple not reached by an emitting config is then
    "unknown"): what the gate's ratchet needs, in a fraction of a second."""
    ships = shipped(root, configs)
    seeds = [s for s in ships if RANK[s.stratum] >= RANK["gate"] and s.values]
    prober = Prober(seeds) if probe else None
    out = Analysis(ships)
    for strength in strengths:
        reached = reach(ships, strength)
        for t in all_pairs() if strength == 2 else core_triples():
            out.rows.append(decide_row(t, strength, reached, prober))
    out.probes_run = prober.probes_run if prober else 0
    return out
