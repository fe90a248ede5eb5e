"""The coverage ratchet (docs/coverage.md §6): golden.json records the stratum of every tuple
the shipped configs reach; a full gate fails when a change lowers one (a deleted config, a
narrowed axis, an `isa` list dropped) and names the tuples lost. What rises is recorded by
`rocke-parity golden --update`, reviewed like any golden change."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from rocke_py.parity.inputs.configs import Config

from .analyse import analyse
from .measure import NONE, RANK, tuple_key

#: How many lost tuples a failure line names before it counts the rest.
SHOWN = 8


def reached(root: Path, configs: Iterable[Config]) -> dict[str, str]:
    """tuple key -> stratum, for every tuple of both strengths some shipped config reaches."""
    an = analyse(root, list(configs), probe=False)
    return {tuple_key(r.tuple): r.stratum for r in an.rows if r.stratum != NONE}


def lost(pinned: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The pinned tuples now at a lower stratum, as "tuple (was -> now)"."""
    return [
        f"{key} ({was} -> {now.get(key, NONE)})"
        for key, was in pinned.items()
        if RANK[now.get(key, NONE)] < RANK.get(was, RANK[NONE])
    ]


def risen(pinned: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    return [key for key, s in now.items() if RANK[s] > RANK.get(pinned.get(key, NONE), RANK[NONE])]


def lost_line(gone: list[str]) -> str:
    shown = "; ".join(gone[:SHOWN]) + (f"; and {len(gone) - SHOWN} more" if len(gone) > SHOWN else "")
    return (
        f"coverage: {len(gone)} tuple(s) fell below the stratum golden.json records: {shown} "
        "(restore the config or its isa list, or record the loss with rocke-parity golden --update "
        "and say why in the commit)"
    )
