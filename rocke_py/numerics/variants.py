"""The sizes a config is checked at (docs/numerics.md §2.1): as shipped, its `--small` variant
(the same kernel knobs on a problem small enough for the unit tests) and its `edge` variant,
chosen so that one run reaches what the others may miss: a batch of at least 2, GEMM extents
that leave a partial tile and a partial wave tile at another residue than the small size, a
partial last K tile, every split-K slice holding real K. Each variant edits [problem]'s N, Hi,
Wi and Di lines only; everything else stays byte for byte. The choice reads the config with
problem.py, never an engine."""

from __future__ import annotations

import functools
from typing import Optional

from rocke_py.configtext import set_value
from rocke_py.parity.store._toml import tomllib

from .inputs import slice_width
from .problem import Problem, ProblemError, ceil_div, dgrad_records, read_problem

#: --small: batch, input height and width, depth at most these (every other field as shipped).
SMALL_LIMITS = {"N": 2, "Hi": 9, "Wi": 9, "Di": 4}
#: the edge search: batches and the span of input extents above the smallest useful one
EDGE_BATCHES = (2, 3, 4)
EDGE_SPAN = 14
#: a wgrad split-K small variant grows its batch up to this for every slice to hold real K
MAX_SMALL_BATCH = 8


def resize(text: str, values: dict[str, int]) -> str:
    """The config text with [problem]'s keys in `values` set (one line edited per key)."""
    problem = tomllib.loads(text).get("problem", {})
    for key, value in values.items():
        if key in problem and problem[key] != value:
            text = set_value(text, "problem", key, str(value))
    return text


def slices_all_real(p: Problem) -> bool:
    """Every one of wgrad's fixed split-K slices starts below wg_K (holds some real K)."""
    if p.family != "wgrad" or p.split_k <= 1:
        return True
    width = slice_width(p, p.split_k)
    return p.out_pixels > (p.split_k - 1) * width


def small_variant(text: str, limits: dict[str, int] | None = None) -> str:
    """The config text with its [problem] shrunk to `limits` (default SMALL_LIMITS); a wgrad
    split-K config then grows its batch until every slice holds real K (MAX_SMALL_BATCH)."""
    problem = tomllib.loads(text).get("problem", {})
    caps = limits or SMALL_LIMITS
    shrunk = {k: cap for k, cap in caps.items() if isinstance(problem.get(k), int) and problem[k] > cap}
    text = resize(text, shrunk)
    if limits is not None:
        return text
    try:
        p = read_problem(text)
    except ProblemError:
        return text
    batch = p.conv.n
    while not slices_all_real(p) and batch < min(MAX_SMALL_BATCH, problem.get("N", 1)):
        batch += 1
        text = resize(text, {"N": batch})
        p = read_problem(text)
    return text


def residue_goals(extent: int, tile: int, wave_tile: int, avoid: set[int]) -> list[bool]:
    """Whole tiles, then a partial tile whose first wave tile is full and whose next is
    partial, at a residue not in `avoid`."""
    r = extent % tile
    partial_wave = wave_tile < tile and r > wave_tile and r % wave_tile != 0
    return [extent > tile, r != 0, partial_wave or (wave_tile >= tile and r != 0), r not in avoid]


def m_extents(p: Problem) -> list[int]:
    """The GEMM M extents the size decides: fwd N·Ho·Wo, dgrad each record's gemm_m; wgrad's
    M is kpg, which no size changes."""
    if p.family == "fwd":
        return [p.out_pixels]
    if p.family == "dgrad" and len(p.conv.filt) == 2:
        return [int(m) for m in dgrad_records(p)[:, 3]]
    return []


def edge_goals(p: Problem, avoid: set[int]) -> list[bool]:
    """What the edge size should reach, one bool per goal (docs/numerics.md §2.1)."""
    goals = [p.conv.n >= 2, len(set(p.conv.size_out[-2:])) == 2]
    for m in m_extents(p):
        goals += residue_goals(m, p.tile_m, p.tile_m // max(1, p.warp_m), avoid)
    if p.family == "wgrad":
        tiles = ceil_div(p.out_pixels, p.tile_k)
        goals.append(p.out_pixels % p.tile_k != 0 and p.out_pixels > 2 * p.tile_k)
        goals.append(slices_all_real(p))
        if p.split_k > 1:  # the K loop of each slice runs more than once (a barrier, a step, a wait)
            goals.append(slice_width(p, p.split_k) >= 2 * p.tile_k)
        if p.split_k == 0:  # a composite tile count gives several degrees
            goals.append(sum(1 for d in range(2, tiles) if tiles % d == 0) >= 1)
    return goals


def edge_candidates(p: Problem) -> list[tuple[int, int, int]]:
    """(N, Hi, Wi) to try, cheapest first: inputs from the smallest that gives 2 output rows."""
    c = p.conv
    lows = []
    for size, f, s, pad, d in list(zip(c.size_in, c.filt, c.stride, c.pad, c.dil))[-2:]:
        lows.append(max(1, d * (f - 1) + 1 + s - 2 * pad))
    cands = [
        (n, h, w)
        for n in EDGE_BATCHES
        for h in range(lows[0], lows[0] + EDGE_SPAN)
        for w in range(lows[1], lows[1] + EDGE_SPAN)
    ]
    return sorted(cands, key=lambda t: (t[0] * t[1] * t[2], t))


@functools.lru_cache(maxsize=256)
def edge_variant(text: str, small: Optional[str] = None) -> str:
    """The config text at the edge size: the cheapest candidate that meets every goal, else
    the one that meets most (the small variant's M residues avoided). Memoised: a pure
    function of its texts, and its search reads hundreds of candidate configs."""
    p = read_problem(text)
    avoid = {m % p.tile_m for m in m_extents(read_problem(small or small_variant(text)))}
    depth = {"Di": min(p.conv.size_in[0], SMALL_LIMITS["Di"])} if len(p.conv.filt) == 3 else {}
    best: Optional[tuple[int, str]] = None
    for n, h, w in edge_candidates(p):
        candidate = resize(text, {"N": n, "Hi": h, "Wi": w} | depth)
        try:
            goals = edge_goals(read_problem(candidate), avoid)
        except ProblemError:
            continue
        if all(goals):
            return candidate
        if best is None or sum(goals) > best[0]:
            best = (sum(goals), candidate)
    return best[1] if best else text


def check_sizes(text: str, small: bool) -> list[tuple[str, str]]:
    """(label, config text) of every size a config is checked at: shipped (unless `small`),
    small and edge."""
    little = small_variant(text)
    sizes = [] if small else [("shipped", text)]
    sizes.append(("small", little))
    try:
        sizes.append(("edge", edge_variant(text, little)))
    except ProblemError:
        pass
    return sizes
