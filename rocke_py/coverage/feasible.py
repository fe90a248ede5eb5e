"""Which tuples some config can have: decided by the engines, never by a table here
(docs/coverage.md §4).

A tuple no shipped emitting config contains is probed: each shipped emitting config (a seed)
is given the tuple's values, by the settings its axes declare, and both engines read the result
in mode `spec`. The first probe both engines accept makes the tuple feasible (the probe is the
completion `--propose` starts from). When every probe is rejected by both engines, the tuple is
infeasible, named by the rules that rejected it. A probe the two engines judge differently is a
parity failure, reported as one: a validator of one engine let through what the other refused."""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from typing import Iterator, Optional

from rocke_py.configtext import TomlLines
from rocke_py.engine.emit import emit as py_emit
from rocke_py.engine.result import Emitted

from .axes import AXIS, Setting, read_config, values_of
from .measure import Shipped, Tuple

#: The axes a probe may also change to make room for the tuple (what an arch or an atom drags in).
REPAIR_AXES = ("atom", "dtype_in", "wave_size", "epilogue", "pipeline", "k_outer", "split_k", "unroll", "async")
#: How many seeds, closest first, the repair stage tries.
REPAIR_SEEDS = 12


@dataclass(frozen=True)
class Probe:
    seed: str  # the config id the probe started from
    settings: tuple[Setting, ...]
    text: str


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    code: str = ""  # the rejection code both engines gave
    disagreement: str = ""  # non-empty when the engines judged the probe differently


@dataclass
class Feasibility:
    status: str  # "covered", "feasible", "infeasible" or "disagree"
    probe: Optional[Probe] = None  # the accepted completion, or the disputed probe
    codes: tuple[str, ...] = ()  # for an infeasible tuple: the rules that rejected it, most frequent first
    note: str = ""
    tried: int = 0


def applies_to(s: Shipped, axis: str) -> bool:
    return s.values["family"] in AXIS[axis].families


@functools.lru_cache(maxsize=256)
def _lines(text: str) -> TomlLines:
    """A seed's lines, split and indexed once for the many probes made from it."""
    return TomlLines(text)


def applied(text: str, settings: tuple[Setting, ...]) -> str:
    """`text` given the settings, one by one, as `configtext.set_value` and `remove_key` do."""
    doc = _lines(text).copy()
    for table, key, value in settings:
        if value is None:
            doc.remove(table, key)
        else:
            doc.set(table, key, value)
    return doc.text()


def c_emit(text: str, mode: str, flavor: str):
    """The C engine, loaded at the first probe: the gate's ratchet imports this module (through
    analyse) and runs no probe, so a gate does not load the engine in its own process."""
    from rocke_py import cbridge

    return cbridge.emit(text, mode, flavor)


def judge(text: str) -> Verdict:
    """Both engines' verdict on `text` in mode spec."""
    py = py_emit(text, "spec", "llvm22")
    c = c_emit(text, "spec", "llvm22")
    if isinstance(py, Emitted) and isinstance(c, Emitted):
        if py.text != c.text:
            return Verdict(False, disagreement="both engines accept it, with different spec texts")
        return Verdict(True)
    if isinstance(py, Emitted) or isinstance(c, Emitted):
        who, other = ("Python", c) if isinstance(py, Emitted) else ("C", py)
        return Verdict(False, disagreement=f"only the {who} engine accepts it (the other: {other.code})")
    if (py.code, py.message) != (c.code, c.message):
        return Verdict(False, disagreement=f"rejected as {py.code} by Python, {c.code} by C")
    return Verdict(False, code=py.code)


@dataclass
class Prober:
    seeds: list[Shipped]
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    readings: dict[str, Optional[dict[str, str]]] = field(default_factory=dict)
    texts: dict[tuple[bytes, tuple[Setting, ...]], str] = field(default_factory=dict)
    probes_run: int = 0

    def __post_init__(self) -> None:
        self.family_of = {s.config.id: s.config.family for s in self.seeds}

    def verdict(self, text: str) -> Verdict:
        got = self.verdicts.get(text)
        if got is None:
            self.probes_run += 1
            got = judge(text)
            self.verdicts[text] = got
        return got

    def values(self, text: str) -> Optional[dict[str, str]]:
        """The axis values of the config `text` (None when it does not read), read once."""
        if text not in self.readings:
            reading = read_config(text)
            self.readings[text] = values_of(reading) if reading is not None else None
        return self.readings[text]

    def closest(self, t: Tuple) -> list[Shipped]:
        """The seeds of a family that has every axis of the tuple, those sharing most of its
        values first."""
        fam = dict(t).get("family")
        seeds = [
            s for s in self.seeds if (fam is None or s.values["family"] == fam) and all(applies_to(s, a) for a, _ in t)
        ]
        return sorted(seeds, key=lambda s: -sum(s.values.get(a) == v for a, v in t))

    def candidates(self, t: Tuple) -> Iterator[Probe]:
        """Every seed given the tuple; then the closest seeds given the tuple and one more value
        of a repair axis (set first, so the tuple's own settings win)."""
        seeds = self.closest(t)
        for s in seeds:
            yield from self.given(s, t, ())
        repairs = [(a, v) for a in REPAIR_AXES if a not in dict(t) for v in AXIS[a].values]
        for s in seeds[:REPAIR_SEEDS]:
            for extra in repairs:
                if s.values.get(extra[0], extra[1]) != extra[1] and applies_to(s, extra[0]):
                    yield from self.given(s, t, (extra,))

    def given(self, s: Shipped, t: Tuple, extra: Tuple) -> Iterator[Probe]:
        todo = [AXIS[a].settings(v) for a, v in extra + t if a != "family" and s.values.get(a) != v]
        for combo in itertools.product(*todo):
            settings = tuple(x for part in combo for x in part)
            yield Probe(s.config.id, settings, self.text(s, settings))

    def text(self, s: Shipped, settings: tuple[Setting, ...]) -> str:
        """The seed given the settings, built once: tuples that share values share probes."""
        key = (s.config.data, settings)
        got = self.texts.get(key)
        if got is None:
            got = self.texts[key] = applied(s.config.data.decode("utf-8"), settings)
        return got

    def decide(self, t: Tuple) -> Feasibility:
        # per family, the rule that rejected the probe with the fewest settings: the rule the
        # tuple itself crosses, not one a far seed's other values cross
        first: dict[str, tuple[int, str]] = {}
        tried = 0
        for probe in self.candidates(t):
            values = self.values(probe.text)
            if values is not None and any(values.get(a) != v for a, v in t):
                continue  # the settings did not give the seed the tuple (another key overrides)
            tried += 1
            v = self.verdict(probe.text)
            if v.disagreement:
                return Feasibility("disagree", probe, note=v.disagreement, tried=tried)
            if v.accepted and values is not None:
                return Feasibility("feasible", probe, tried=tried)
            family = self.family_of[probe.seed]
            if family not in first or len(probe.settings) < first[family][0]:
                first[family] = (len(probe.settings), v.code)
        if not tried:
            return Feasibility("infeasible", note="no seed can be given these values", tried=0)
        codes = tuple(dict.fromkeys(code for _, code in first.values()))
        return Feasibility("infeasible", codes=codes, tried=tried)
