"""`coverage --propose`: the fewest new configs that reach the missing feasible tuples
(docs/coverage.md §5).

A covering array seeded with the shipped configs, built greedily as AETG and PICT's seeding do:
each round starts from the accepted probe of the first missing tuple and gives it, one by one,
the values of every other missing tuple, keeping a change when both engines still accept the
config and it reaches more missing tuples than before, then shrinks its problem as far as
numerics' check sizes keep their goals. A candidate is proposed only when both engines emit
identical bytes in every mode and flavor and numerics finds its kernel bitwise exact at both
levels at every check size; it is printed as the `rocke-parity new` command that writes it."""

from __future__ import annotations

import itertools
import shlex
from dataclasses import dataclass
from typing import Callable, Optional

from rocke_py.engine.emit import emit as py_emit
from rocke_py.engine.result import Emitted

from .analyse import Analysis, Row
from .axes import AXIS, Setting, read_config, values_of
from .feasible import Prober, applied, c_emit
from .measure import RANK, Tuple, tuple_key, tuples_of

MODES_FLAVORS = (("spec", "llvm22"), ("ir", "llvm22"), ("ll", "llvm20"), ("ll", "llvm22"), ("ll", "llvm23"))


@dataclass
class Candidate:
    seed: str
    family: str
    settings: dict[tuple[str, str], Optional[str]]  # (table, key) -> TOML value, None = unset
    text: str
    covers: frozenset[Tuple]
    problem: str = ""  # why it is not proposed (engines differ, numerics failed)

    def command(self, slug: str) -> str:
        parts = ["rocke-parity", "new", self.family, "--from", self.seed]
        for (table, key), value in self.settings.items():
            parts += ["--unset", f"{table}.{key}"] if value is None else ["--set", f"{table}.{key}={value}"]
        parts += ["--slug", slug, "--expect", "emit"]
        return " ".join(shlex.quote(p) for p in parts)


def reached_by(text: str, missing: set[Tuple], strengths: tuple[int, ...]) -> Optional[frozenset[Tuple]]:
    reading = read_config(text)
    if reading is None:
        return None
    values = values_of(reading)
    return frozenset(t for s in strengths for t in tuples_of(values, s) if t in missing)


def merged(base: dict[tuple[str, str], Optional[str]], settings: tuple[Setting, ...]) -> dict:
    out = dict(base)
    for table, key, value in settings:
        out[(table, key)] = value
    return out


def grow(prober: Prober, start: Row, missing: set[Tuple], order: list[Tuple], strengths: tuple[int, ...]) -> Candidate:
    probe = start.feasibility.probe
    assert probe is not None
    seed = next(s for s in prober.seeds if s.config.id == probe.seed)
    base_text = seed.config.data.decode("utf-8")
    settings = merged({}, probe.settings)
    covers = reached_by(probe.text, missing, strengths) or frozenset()
    text = probe.text
    for t in order:
        if t in covers:
            continue
        fam = dict(t).get("family")
        if fam is not None and fam != seed.config.family:
            continue
        if any(seed.config.family not in AXIS[a].families for a, _ in t):
            continue
        todo = [AXIS[a].settings(v) for a, v in t if a != "family"]
        for combo in itertools.product(*todo):
            extra = tuple(x for part in combo for x in part)
            trial = merged(settings, extra)
            trial_text = applied(base_text, tuple((tb, k, v) for (tb, k), v in trial.items()))
            got = reached_by(trial_text, missing, strengths)
            if got is None or not covers < got:
                continue
            if prober.verdict(trial_text).accepted:
                settings, covers, text = trial, got, trial_text
                break
    settings, text = shrunk(prober, base_text, settings, covers, missing, strengths)
    # a setting that leaves the seed's text as it was is no change (`new --unset` refuses to
    # remove a key the seed does not set)
    effective = {k: v for k, v in settings.items() if applied(base_text, ((*k, v),)) != base_text}
    return Candidate(seed.config.id, seed.config.family, effective, text, covers)


#: Smaller problems tried in turn on a grown candidate: numerics runs every shipped config at its
#: own size, so a covering config should cost little more than its tuples need.
SHRINK: tuple[tuple[Setting, ...], ...] = (
    (("problem", "N", "1"),),
    (("problem", "Hi", "16"), ("problem", "Wi", "16")),
    (("problem", "groups", "16"), ("problem", "C", "16"), ("problem", "K", "16")),
    (("problem", "Di", "3"),),
)


def shrunk(
    prober: Prober,
    base_text: str,
    settings: dict,
    covers: frozenset[Tuple],
    missing: set[Tuple],
    strengths: tuple[int, ...],
) -> tuple[dict, str]:
    """The candidate with each SHRINK step that keeps it accepted and reaching the same tuples."""
    text = applied(base_text, tuple((tb, k, v) for (tb, k), v in settings.items()))
    for step in SHRINK:
        if any(not problem_has(text, key) for _, key, _ in step[:1]):
            continue
        trial = merged(settings, step)
        trial_text = applied(base_text, tuple((tb, k, v) for (tb, k), v in trial.items()))
        if (
            reached_by(trial_text, missing, strengths) == covers
            and same_values(text, trial_text)
            and sizes_sound(trial_text)
        ):
            if prober.verdict(trial_text).accepted:
                settings, text = trial, trial_text
    return settings, text


def sizes_sound(text: str) -> bool:
    """The config's numerics check sizes keep their goals (docs/numerics.md §2.1): the edge size
    reaches every edge with a batch of two, and every split-K slice holds real K at the small
    and edge sizes. A problem shrunk below that would leave slices of padding unchecked."""
    from rocke_py.numerics.problem import ProblemError, read_problem
    from rocke_py.numerics.variants import check_sizes, edge_goals, m_extents, slices_all_real

    try:
        sizes = dict(check_sizes(text, small=True))
        small, edge = read_problem(sizes["small"]), read_problem(sizes["edge"])
    except (ProblemError, KeyError):
        return False
    avoid = {m % small.tile_m for m in m_extents(small)}
    return all(edge_goals(edge, avoid)) and edge.conv.n >= 2 and slices_all_real(small) and slices_all_real(edge)


def problem_has(text: str, key: str) -> bool:
    """Whether the config's problem sets `key` (groups and Di are shrunk only where present)."""
    reading = read_config(text)
    if reading is None:
        return False
    value = getattr(reading.problem, key)
    return value is not None and (key not in ("groups",) or value > 1)


def same_values(text: str, other: str) -> bool:
    a, b = read_config(text), read_config(other)
    return a is not None and b is not None and values_of(a) == values_of(b)


def engines_agree(text: str) -> str:
    """'' when both engines emit identical bytes for every mode and flavor; else what differs."""
    for mode, flavor in MODES_FLAVORS:
        py, c = py_emit(text, mode, flavor), c_emit(text, mode, flavor)
        if not (isinstance(py, Emitted) and isinstance(c, Emitted)):
            return f"{mode} {flavor}: not emitted by both engines"
        if py.text != c.text:
            return f"{mode} {flavor}: the engines' bytes differ"
    return ""


def numerics_exact(name: str, text: str) -> str:
    """'' when numerics finds the kernel bitwise exact at both levels at the shipped, small and
    edge sizes. A run numerics can only judge within a bound (a 16-bit output summed by many
    atomic slices, under an epilogue whose bound passes the exact range) refuses the candidate:
    a covering config is one the oracle checks exactly."""
    from rocke_py.numerics.check import check_all_sizes

    for got in check_all_sizes(name, text, "py", level="both"):
        if not got.ok and not got.skipped:
            why = got.error or got.lockstep or "; ".join(got.mismatch or got.hazards) or f"{got.wrong} wrong"
            return f"numerics {got.label} {got.level}: {why}"
        if got.ok and not got.bitwise:
            return f"numerics {got.label} {got.level}: exact only within a bound (not bitwise)"
    return ""


def propose(
    analysis: Analysis,
    prober: Prober,
    target: str = "numerics-ll",
    strengths: tuple[int, ...] = (2, 3),
    check_numerics: bool = True,
    limit: int = 100,
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[list[Candidate], list[Candidate], list[Tuple]]:
    """(proposed, refused, left): the candidates, those that failed a check, and the missing
    tuples no candidate reached."""
    rows = [
        r
        for r in analysis.rows
        if r.strength in strengths and r.feasibility.status == "feasible" and RANK[r.stratum] < RANK[target]
    ]
    missing = {r.tuple for r in rows}
    order = [r.tuple for r in rows]
    proposed: list[Candidate] = []
    refused: list[Candidate] = []
    while rows and len(proposed) + len(refused) < limit:
        cand = grow(prober, rows[0], missing, order, strengths)
        cand.problem = engines_agree(cand.text)
        if not cand.problem and check_numerics:
            cand.problem = numerics_exact(f"proposal-{len(proposed) + 1}", cand.text)
        (refused if cand.problem else proposed).append(cand)
        done = cand.covers if not cand.problem else frozenset({rows[0].tuple})
        why = f" refused: {cand.problem}" if cand.problem else ""
        progress(f"{len(cand.covers)} tuple(s) from {cand.seed}{why}")
        missing -= done
        rows = [r for r in rows if r.tuple in missing]
        order = [t for t in order if t in missing]
    return proposed, refused, [r.tuple for r in rows]


def describe(c: Candidate) -> str:
    keys = sorted({tuple_key(t) for t in c.covers})
    return f"{len(keys)} missing tuple(s), e.g. {', '.join(keys[:3])}"
