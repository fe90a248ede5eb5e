"""Which combinations of axis values the shipped configs reach, and at which stratum
(docs/coverage.md §3).

A config's stratum is the highest rung of the oracle ladder such that every rung up to it checks
the config whenever that oracle runs on the shipped set: named (any config, negative ones too)
→ gate (an emitting config with no known gap) → check-llvm (an `isa` list, which `check-llvm`
compiles and checks on its arch) → numerics at the IR level → numerics at the `ll` level (both
run every emitting config). CI runs all of them before `coverage`, on the same tree, so a green
CI is the proof each rung stands for. A tuple's stratum is the highest stratum of the configs
that contain it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional

from rocke_py.parity.inputs.configs import Config, discover
from rocke_py.parity.judge import known_gaps

from .axes import AXES, AXIS, CORE, Reading, read_config, values_of

STRATA = ("named", "gate", "check-llvm", "numerics-ir", "numerics-ll")
NONE = "none"
RANK = {NONE: -1, **{s: i for i, s in enumerate(STRATA)}}

#: A tuple: ((axis, value), ...) in axis order.
Tuple = tuple[tuple[str, str], ...]


def tuple_key(t: Tuple) -> str:
    return " ".join(f"{a}={v}" for a, v in t)


@dataclass(frozen=True)
class Shipped:
    config: Config
    reading: Optional[Reading]
    values: dict[str, str]
    stratum: str


def config_stratum(cfg: Config, gapped: bool) -> str:
    if not cfg.expect.emits:
        return "named"
    if gapped:
        return "named"
    if not cfg.isa:
        return "gate"
    return "numerics-ll"


def shipped(root: Path, configs: Optional[Iterable[Config]] = None) -> list[Shipped]:
    disc_configs = tuple(configs) if configs is not None else discover(root).configs
    ids = {c.id for c in disc_configs}
    gaps = known_gaps.load(root / "parity_configs" / known_gaps.FILE_NAME, ids)
    gapped = {g.config for g in gaps.gaps}
    out = []
    for cfg in disc_configs:
        try:
            text = cfg.data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        reading = read_config(text)
        values = values_of(reading) if reading is not None else {}
        out.append(Shipped(cfg, reading, values, config_stratum(cfg, cfg.id in gapped)))
    return out


def applies(t: Tuple) -> bool:
    """Whether one family has every axis of the tuple (split_k is not a fwd axis)."""
    fams = set(AXIS["family"].values)
    for a, v in t:
        fams &= {v} if a == "family" else set(AXIS[a].families)
    return bool(fams)


def all_pairs() -> list[Tuple]:
    out = []
    for a, b in itertools.combinations(AXES, 2):
        for va in a.values:
            for vb in b.values:
                t = ((a.name, va), (b.name, vb))
                if applies(t):
                    out.append(t)
    return out


def core_triples() -> list[Tuple]:
    out = []
    for name in CORE:
        for arch in AXIS["arch"].values:
            for fam in AXIS["family"].values:
                for v in AXIS[name].values:
                    t = (("arch", arch), ("family", fam), (name, v))
                    if applies(t):
                        out.append(t)
    return out


def tuples_of(values: dict[str, str], strength: int) -> Iterator[Tuple]:
    if strength == 2:
        names = [a.name for a in AXES if a.name in values]
        for a, b in itertools.combinations(names, 2):
            yield ((a, values[a]), (b, values[b]))
    else:
        for name in CORE:
            if name in values:
                yield (("arch", values["arch"]), ("family", values["family"]), (name, values[name]))


@dataclass(frozen=True)
class Reached:
    stratum: str
    configs: tuple[str, ...]  # the configs at that stratum that contain the tuple


def reach(ships: list[Shipped], strength: int) -> dict[Tuple, Reached]:
    best: dict[Tuple, Reached] = {}
    for s in ships:
        if not s.values:
            continue
        for t in tuples_of(s.values, strength):
            have = best.get(t)
            if have is None or RANK[s.stratum] > RANK[have.stratum]:
                best[t] = Reached(s.stratum, (s.config.id,))
            elif s.stratum == have.stratum:
                best[t] = Reached(have.stratum, have.configs + (s.config.id,))
    return best
