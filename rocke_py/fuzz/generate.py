"""Whole configs drawn over the spec space of every family and arch.

Most draws are meant to be valid and emit: a draw picks a family, one or two deep paths of it
(K-outer, async, basic, split-K, WMMA, cshuffle, 3-D, groups, strided dgrad, ...), an arch the
paths allow, an MMA atom of that arch's table (engine-contract §6), tiles that the atom and the
warps divide, and a small problem. The rest (``CROSS_WEIGHT``) take such a draw and cross
exactly one validation rule (:data:`CROSSINGS`, each named by the rule it aims at). Everything
comes from the ``random.Random`` the caller passes, so a seed gives the same draws.

The tables below restate what the engine contract says about the space; the engines are not
imported (they run in the pool's workers), and a draw that misses its aim is still a case: the
final table shows how many emitted.
"""

from __future__ import annotations

import random
from typing import Callable

from rocke_py.configtext import render_tables

FAMILIES = ("fwd", "wgrad", "dgrad")
ARCH_WAVE = {"gfx942": 64, "gfx950": 64, "gfx1151": 32, "gfx1201": 32, "gfx1250": 32}
MFMA = ("gfx942", "gfx950")
WMMA = ("gfx1151", "gfx1201", "gfx1250")
KOUTER = ("gfx950", "gfx1250")
_HALF = ((16, 16, 16), (32, 32, 8))
_HALF_950 = ((16, 16, 16), (16, 16, 32), (32, 32, 8), (32, 32, 16))
#: The atoms a valid draw uses, by arch and dtype (the WMMA fp32 atom fails WMMA_SUBSET: left out).
ATOMS: dict[str, dict[str, tuple[tuple[int, int, int], ...]]] = {
    "gfx942": {"fp16": _HALF, "bf16": _HALF, "fp32": ((16, 16, 4), (32, 32, 2))},
    "gfx950": {"fp16": _HALF_950, "bf16": _HALF_950, "fp32": ((16, 16, 4), (32, 32, 2))},
    "gfx1151": {"fp16": ((16, 16, 16),), "bf16": ((16, 16, 16),)},
    "gfx1201": {"fp16": ((16, 16, 16),), "bf16": ((16, 16, 16),)},
    "gfx1250": {"fp16": ((16, 16, 32),), "bf16": ((16, 16, 32),)},
}
#: The deep paths of each family: name -> weight.
PATHS: dict[str, dict[str, int]] = {
    "fwd": {"plain": 3, "async": 3, "basic": 2, "unroll": 2, "cshuffle": 3, "wmma": 3, "3d": 2, "groups": 2},
    "wgrad": {
        "plain": 2,
        "kouter": 4,
        "kouter-async": 3,
        "basic": 2,
        "split-k": 4,
        "unroll": 1,
        "cshuffle": 2,
        "wmma": 3,
        "3d": 2,
        "groups": 2,
    },
    "dgrad": {"plain": 2, "kouter": 3, "strided": 4, "split-k": 3, "cshuffle": 2, "wmma": 3, "groups": 2},
}
CROSS_WEIGHT = 0.3  # share of draws that cross one rule

Tables = dict[str, dict[str, object]]


def _weighted(rng: random.Random, weights: dict[str, int]) -> str:
    names = sorted(weights)
    return rng.choices(names, [weights[n] for n in names])[0]


def _pow2_dividing(rng: random.Random, run: int, cap: int) -> int:
    options = [v for v in (1, 2, 4, 8, 16) if v <= cap and run % v == 0]
    return rng.choice(options)


class Draft:
    """A config being drawn: the three engine tables plus what the paths decided."""

    def __init__(self, rng: random.Random, family: str, paths: tuple[str, ...]) -> None:
        self.rng = rng
        self.family = family
        self.paths = paths
        self.target: dict[str, object] = {}
        self.problem: dict[str, object] = {}
        self.spec: dict[str, object] = {"family": family}

    def has(self, path: str) -> bool:
        return path in self.paths

    @property
    def arch(self) -> str:
        return str(self.target["arch"])

    def get(self, key: str, default: object) -> object:
        return self.spec.get(key, default)

    def tables(self) -> Tables:
        spec = dict(self.spec)
        if self.rng.random() < 0.2:  # the file order of [spec] matters to the first-error rules
            keys = list(spec)
            self.rng.shuffle(keys)
            spec = {k: spec[k] for k in keys}
        return {"target": self.target, "problem": self.problem, "spec": spec}


# ----------------------------------------------------------------------------- valid draws


def _arch(d: Draft) -> str:
    rng = d.rng
    if d.has("wmma"):
        return rng.choice(WMMA)
    if d.has("kouter") or d.has("kouter-async"):
        return "gfx950" if d.has("kouter-async") else rng.choice(KOUTER)
    if d.has("async"):
        return rng.choice(("gfx950", "gfx950", "gfx942"))
    if any(d.has(p) for p in ("basic", "unroll", "cshuffle", "split-k")):
        return rng.choice(("gfx942", "gfx950", "gfx950"))  # the WMMA subset has none of these
    return rng.choice(("gfx942", "gfx950", "gfx950", "gfx1151", "gfx1201", "gfx1250"))


def _dtypes(d: Draft) -> tuple[str, str]:
    rng = d.rng
    choices = [t for t in ATOMS[d.arch] if not (t == "fp32" and (d.has("kouter") or d.has("kouter-async")))]
    ab = rng.choice(sorted(choices, key=lambda t: t != "fp16") + ["fp16"] * 2)
    dd = rng.choice((ab, ab, "fp32", "bf16", "fp16"))
    return ab, dd


def _set(d: Draft, key: str, value: object, default: object) -> None:
    """Set a spec key, leaving it out when it is the default (now and then spelled out)."""
    if value != default or d.rng.random() < 0.1:
        d.spec[key] = value


def _atom_and_tiles(d: Draft, ab: str) -> None:
    rng = d.rng
    m, n, k = rng.choice(ATOMS[d.arch][ab])
    if d.family != "fwd" and d.arch == "gfx1250" and d.get("lds_k_outer", False) is not False:
        m, n, k = 16, 16, 32
    wave = ARCH_WAVE[d.arch]
    _set(d, "wave_size", wave, 64)
    _set(d, "warp_tile_m", m, 32)
    _set(d, "warp_tile_n", n, 32)
    _set(d, "warp_tile_k", k, 16)
    wm, wn = rng.choice((1, 2, 2, 4)), rng.choice((1, 2, 2, 4))
    _set(d, "warp_m", wm, 2)
    _set(d, "warp_n", wn, 2)
    tm = wm * m * rng.choice((1, 1, 2))
    tn = wn * n * rng.choice((1, 1, 2))
    small = max(tm, tn) >= 128
    tk = k * rng.choice((1, 2, 4) if small else (1, 2, 4, 8))
    tk = min(tk, 128) if k <= 128 else k
    default_tk = 128 if d.family == "fwd" else 64
    _set(d, "tile_m", tm, 64)
    _set(d, "tile_n", tn, 64)
    _set(d, "tile_k", tk, default_tk)


def _problem(d: Draft, small: bool) -> None:
    rng = d.rng
    p = d.problem
    groups = rng.choice((2, 4)) if d.has("groups") else 1
    per = (8, 16, 16, 32, 32, 64, 64, 128) if not small else (8, 16, 32)
    cpg, kpg = rng.choice(per), rng.choice(per)
    if rng.random() < 0.1:
        cpg = rng.choice((3, 6, 12, 24))
    if rng.random() < 0.1:
        kpg = rng.choice((3, 6, 12, 24))
    y = rng.choice((1, 3, 3, 2, 5)) if not small else rng.choice((1, 3))
    x = y if rng.random() < 0.8 else rng.choice((1, 2, 3))
    if d.has("groups") and d.family == "wgrad" and y == 1 and x == 1:
        y = x = 3  # grouped pointwise wgrad is a rule of its own
    strided = d.has("strided")
    s_h = rng.choice((2, 2, 3)) if strided else rng.choice((1, 1, 1, 1, 2))
    s_w = (s_h if rng.random() < 0.7 else rng.choice((1, 2, 3))) if strided else rng.choice((1, 1, 1, 2))
    hi = rng.randint(max(y, 2), 9 if small else 30)
    wi = hi if rng.random() < 0.6 else rng.randint(max(x, 2), 9 if small else 30)
    p["N"] = rng.choice((1, 1, 2) if small else (1, 2, 4, 8))
    p["Hi"], p["Wi"] = hi, wi
    p["C"], p["K"] = cpg * groups, kpg * groups
    p["Y"], p["X"] = y, x
    if s_h != 1 or rng.random() < 0.1:
        p["sH"] = s_h
    if s_w != 1 or rng.random() < 0.1:
        p["sW"] = s_w
    for key, edge in (("pH", y), ("pW", x)):
        pad = rng.randint(0, edge // 2) if rng.random() < 0.6 else 0
        if pad or rng.random() < 0.1:
            p[key] = pad
    if rng.random() < 0.15:
        p["dH"] = rng.choice((1, 2))
    if rng.random() < 0.1:
        p["dW"] = rng.choice((1, 2))
    if groups > 1 or rng.random() < 0.05:
        p["groups"] = groups
    if d.has("3d"):
        p["Di"] = rng.randint(2, 4 if small else 8)
        p["Z"] = rng.choice((1, 2, 3))
        p["sD"] = rng.choice((1, 1, 2))
        p["pD"] = rng.choice((0, 1))
        p["dD"] = 1


def _path_keys(d: Draft, ab: str, dd: str) -> None:
    """The keys each path sets beyond the atom, the tiles and the problem."""
    rng = d.rng
    fam = d.family
    wmma = d.arch in WMMA
    if d.has("async"):
        d.spec["async_dma"] = True
        if rng.random() < 0.3:
            d.spec["lds_layout_pad"] = 0
    if d.has("kouter-async"):
        d.spec["async_dma"] = True
        if dd != "fp32" and rng.random() < 0.5:
            d.spec["split_k"] = rng.choice((2, 4))
            d.spec["dtype_d"] = "fp32"
    if d.has("basic"):
        d.spec["pipeline"] = "basic"
    elif d.has("unroll"):
        d.spec["unroll_k"] = True
        if rng.random() < 0.4:
            d.spec["pipeline"] = "compv4"
    elif not wmma and not d.has("async") and not d.has("kouter-async") and rng.random() < 0.3:
        d.spec["pipeline"] = rng.choice(("mem", "compv3", "compv4"))
    if d.has("split-k"):
        if fam == "wgrad":
            sk = rng.choice((2, 4, 8, -1, 0))
            d.spec["split_k"] = sk
            if dd != "fp32":
                d.spec["epilogue"] = "cshuffle"
        else:
            d.spec["split_k"] = rng.choice((2, 3, 4, -1))
    if d.has("cshuffle") or ((not wmma or fam == "dgrad") and rng.random() < 0.25):
        d.spec["epilogue"] = "cshuffle"
    if d.spec.get("epilogue") == "cshuffle" and rng.random() < 0.5:
        cap = 4 if dd == "fp32" else 8
        if fam != "wgrad":
            cap = min(4 if ab == "fp32" else 8, 16 // (4 if dd == "fp32" else 2))
        run = int(d.problem["K"]) // int(d.problem.get("groups", 1)) if fam == "fwd" else _cpg(d)
        d.spec["vector_size_c"] = _pow2_dividing(rng, run, cap)
        if fam == "dgrad" and rng.random() < 0.3:
            d.spec["cshuffle_no_alias"] = True
    if not d.has("async") and not d.has("kouter-async") and rng.random() < 0.25:
        cap = 4 if ab == "fp32" else 8
        a_run = _cpg(d) if fam == "fwd" else _kpg(d)
        if not (fam == "dgrad" and int(d.get("split_k", 1)) > 1):
            d.spec["vector_size_a"] = _pow2_dividing(rng, a_run, cap)
        d.spec["vector_size_b"] = _pow2_dividing(rng, _cpg(d), cap)
    kouter = d.has("kouter") or d.has("kouter-async")
    if not kouter and not d.has("async") and not d.has("kouter-async") and rng.random() < 0.2:
        if rng.random() < 0.5:
            d.spec["lds_k_pad"] = rng.choice((0, 4, 8, 16))
        else:
            d.spec["lds_layout_pad"] = rng.choice((0, 4, 8))
    chiplet_ok = fam != "dgrad" and d.arch in MFMA
    if chiplet_ok and rng.random() < 0.15:
        d.spec["chiplet_swizzle"] = True
        for key, values in (
            ("chiplet_wgm", (1, 2, 4, 8)),
            ("chiplet_num_xcds", (1, 2, 8)),
            ("chiplet_chunk_size", (1, 4, 64)),
        ):
            if rng.random() < 0.4:
                d.spec[key] = rng.choice(values)
    if rng.random() < 0.25:
        _epilogue_math(d)
    if rng.random() < 0.1:
        d.spec["waves_per_eu"] = rng.choice((1, 2, 4))
    if rng.random() < 0.1:
        d.spec["name"] = rng.choice(("k", "my/kernel_v2", "Conv_" + str(rng.randint(0, 999)), "A" * 64, "9x"))
    if fam == "wgrad" and rng.random() < 0.05:
        d.spec["force_deterministic"] = int(d.get("split_k", 1)) <= 1


def _epilogue_math(d: Draft) -> None:
    rng = d.rng
    if rng.random() < 0.6:
        d.spec["bias"] = rng.choice((1, -3, 7, 1000000, -2147483648))
    if rng.random() < 0.5:
        d.spec["scale"] = rng.choice((2, -1, 0, 3, 123456789))
    if rng.random() < 0.5:
        d.spec["relu"] = True
    lo = rng.choice((None, 0, -5, 1))
    hi = rng.choice((None, 6, 100, 2147483647))
    if lo is not None:
        d.spec["clamp_min"] = lo
    if hi is not None:
        d.spec["clamp_max"] = hi


def _cpg(d: Draft) -> int:
    return int(d.problem["C"]) // int(d.problem.get("groups", 1))


def _kpg(d: Draft) -> int:
    return int(d.problem["K"]) // int(d.problem.get("groups", 1))


def _paths(rng: random.Random, family: str) -> tuple[str, ...]:
    first = _weighted(rng, PATHS[family])
    if rng.random() < 0.35:
        second = _weighted(rng, PATHS[family])
        if second != first and {first, second} <= _COMPATIBLE[family]:
            return (first, second)
    return (first,)


# paths that combine freely with each other (the others stand alone)
_COMPATIBLE = {
    "fwd": {"plain", "cshuffle", "3d", "groups", "unroll", "async"},
    "wgrad": {"plain", "cshuffle", "3d", "groups", "split-k", "kouter"},
    "dgrad": {"plain", "cshuffle", "groups", "strided", "split-k", "kouter"},
}


def valid_draw(rng: random.Random, family: str) -> tuple[str, Tables]:
    """(the paths' name, the tables) of a draw meant to emit."""
    paths = _paths(rng, family)
    d = Draft(rng, family, paths)
    d.target["arch"] = _arch(d)
    if d.has("wmma") and d.has("split-k") and family == "dgrad":
        d.target["arch"] = "gfx950"
    ab, dd = _dtypes(d)
    if ab != "fp16" or rng.random() < 0.1:
        d.spec["dtype_a"] = ab
        d.spec["dtype_b"] = ab
    if dd != "fp16" or rng.random() < 0.1:
        d.spec["dtype_d"] = "f16" if dd == "fp16" and rng.random() < 0.5 else dd
    if d.has("kouter") or d.has("kouter-async"):
        d.spec["lds_k_outer"] = True if d.has("kouter-async") else rng.choice((True, True, "auto"))
    small = d.has("basic") or d.has("unroll") or d.has("async") or d.has("kouter-async")
    _problem(d, small)
    _atom_and_tiles(d, ab)
    _path_keys(d, ab, dd)
    return "+".join(paths), d.tables()


# ----------------------------------------------------------------------------- one rule crossed


def _spec(key: str, value: object) -> Callable[[Tables, random.Random], None]:
    def cross(t: Tables, rng: random.Random) -> None:
        t["spec"][key] = value

    return cross


def _tile_k_off(t: Tables, rng: random.Random) -> None:
    t["spec"]["tile_k"] = int(t["spec"].get("warp_tile_k", 16)) * 2 + 1


def _block_size(t: Tables, rng: random.Random) -> None:
    s = t["spec"]
    s["warp_m"], s["warp_n"] = 8, 8
    s["tile_m"] = 8 * int(s.get("warp_tile_m", 32))
    s["tile_n"] = 8 * int(s.get("warp_tile_n", 32))


def _wave_mismatch(t: Tables, rng: random.Random) -> None:
    t["spec"]["wave_size"] = 96 - ARCH_WAVE[str(t["target"]["arch"])]


def _groups_invalid(t: Tables, rng: random.Random) -> None:
    t["problem"]["groups"] = rng.choice((0, -1, 7))


def _partial_3d(t: Tables, rng: random.Random) -> None:
    for key in ("Di", "Z", "sD", "pD", "dD"):
        t["problem"].pop(key, None)
    t["problem"][rng.choice(("Di", "Z", "sD", "pD", "dD"))] = 1


def _output_size(t: Tables, rng: random.Random) -> None:
    t["problem"].update({"Hi": 2, "Y": 5, "pH": 0})


def _int32(t: Tables, rng: random.Random) -> None:
    t["problem"].update({"N": 65536, "Hi": 128, "Wi": 128})


def _kernel_size(t: Tables, rng: random.Random) -> None:
    t["spec"].update({"unroll_k": True, "tile_m": 256, "tile_n": 256, "tile_k": t["spec"].get("warp_tile_k", 16)})
    t["spec"].pop("async_dma", None)
    t["spec"].pop("pipeline", None)


def _vector_pow2(t: Tables, rng: random.Random) -> None:
    t["problem"]["C"] = int(t["problem"]["C"]) * 3  # 3 divides cpg: the divisibility rule comes first
    t["spec"]["vector_size_b"] = 3


def _vec_c_divisibility(t: Tables, rng: random.Random) -> None:
    """vector_size_c = 4 over a D run of 6 (fwd kpg, else cpg); the A and B caps left unset."""
    s, p = t["spec"], t["problem"]
    groups = int(p.get("groups", 1))
    p["K" if s["family"] == "fwd" else "C"] = 6 * groups
    for key in ("vector_size_a", "vector_size_b"):
        s.pop(key, None)
    s.update({"epilogue": "cshuffle", "vector_size_c": 4})


def _mma_shape(t: Tables, rng: random.Random) -> None:
    t["spec"]["dtype_b"] = "bf16" if t["spec"].get("dtype_a", "fp16") != "bf16" else "fp16"


def _unroll_cap(t: Tables, rng: random.Random) -> None:
    for key in ("async_dma", "pipeline"):
        t["spec"].pop(key, None)
    t["spec"]["unroll_k"] = True
    t["problem"]["N"] = 64


def _clamp_order(t: Tables, rng: random.Random) -> None:
    t["spec"].update({"clamp_min": 7, "clamp_max": 6})


def _lds_budget(t: Tables, rng: random.Random) -> None:
    t["spec"].update({"tile_m": 1024, "tile_n": 1024, "tile_k": 256})


def _another_family_key(t: Tables, rng: random.Random) -> None:
    fam = t["spec"]["family"]
    t["spec"]["num_load_waves" if fam != "dgrad" else "two_stage"] = 4 if fam != "dgrad" else True


def _missing(t: Tables, rng: random.Random) -> None:
    table = rng.choice(("problem", "target", "spec"))
    keys = {"problem": ("N", "Hi", "Wi", "C", "K", "Y", "X"), "target": ("arch",), "spec": ("family",)}[table]
    t[table].pop(rng.choice(keys), None)


#: (rule aimed at, the change that crosses it). Family-prefixed rules are written without the
#: prefix; the crossing applies to every family that has the rule.
CROSSINGS: dict[str, tuple[tuple[str, ...], Callable[[Tables, random.Random], None]]] = {
    "UNKNOWN_OPTION": (FAMILIES, _spec("pipeline", "wavefront")),
    "UNKNOWN_OPTION/epilogue": (FAMILIES, _spec("epilogue", "fancy")),
    "TILE_DIVISIBILITY": (FAMILIES, _tile_k_off),
    "BLOCK_SIZE": (FAMILIES, _block_size),
    "WAVE_SIZE_MISMATCH": (FAMILIES, _wave_mismatch),
    "VEC_C_DEFAULT_EPILOGUE": (FAMILIES, lambda t, r: t["spec"].update({"vector_size_c": 2, "epilogue": "default"})),
    "VECTOR_POW2": (FAMILIES, _vector_pow2),
    "VECTOR_RANGE": (FAMILIES, _spec("vector_size_a", 16)),
    "VEC_C_RANGE": (FAMILIES, lambda t, r: t["spec"].update({"vector_size_c": 32, "epilogue": "cshuffle"})),
    "VEC_C_DIVISIBILITY": (FAMILIES, _vec_c_divisibility),
    "ACC_CLAMP_ORDER": (FAMILIES, _clamp_order),
    "LDS_XOR_UNSUPPORTED": (FAMILIES, _spec("lds_layout_xor", 4)),
    "FIELD_UNUSED": (FAMILIES, _spec("chiplet_wgm", 16)),
    "LDS_BUDGET": (FAMILIES, _lds_budget),
    "MMA_SHAPE": (FAMILIES, _mma_shape),
    "UNROLL_CAP": (("fwd", "wgrad"), _unroll_cap),
    "BASIC_ASYNC": (("fwd", "wgrad"), lambda t, r: t["spec"].update({"pipeline": "basic", "async_dma": True})),
    "ASYNC_PAD": (("fwd", "dgrad"), lambda t, r: t["spec"].update({"async_dma": True, "lds_k_pad": 8})),
    "ASYNC_EXPLICIT_VECTOR": (("fwd", "wgrad"), lambda t, r: t["spec"].update({"async_dma": True, "vector_size_a": 2})),
    "SPLIT_K_RANGE": (("wgrad", "dgrad"), _spec("split_k", -2)),
    "SPLIT_K_NEEDS_CSHUFFLE": (("wgrad",), lambda t, r: t["spec"].update({"split_k": 4, "epilogue": "default"})),
    "TWO_STAGE_UNSUPPORTED": (("wgrad",), _spec("two_stage", True)),
    "GROUP_MERGE_UNSUPPORTED": (("wgrad",), _spec("group_merge", 2)),
    "KOUTER_ARCH": (
        ("wgrad", "dgrad"),
        lambda t, r: (t["spec"].update({"lds_k_outer": True}), t["target"].update({"arch": "gfx942"})),
    ),
    "KOUTER_DTYPE": (("wgrad", "dgrad"), lambda t, r: t["spec"].update({"lds_k_outer": True, "dtype_b": "fp32"})),
    "ASYNC_UNSUPPORTED": (("dgrad",), _spec("async_dma", True)),
    "UNROLL_UNSUPPORTED": (("dgrad",), _spec("unroll_k", True)),
    "CHIPLET_UNSUPPORTED": (("dgrad",), _spec("chiplet_swizzle", True)),
    "WAVELET_UNSUPPORTED": (("dgrad",), _spec("pipeline", "wavelet")),
    "3D_UNSUPPORTED": (("dgrad",), lambda t, r: t["problem"].update({"Di": 4, "Z": 1, "sD": 1, "pD": 0, "dD": 1})),
    "CONV_GROUPS_INVALID": (FAMILIES, _groups_invalid),
    "CONV_3D_FIELDS_PARTIAL": (FAMILIES, _partial_3d),
    "CONV_DTYPE_UNSUPPORTED": (FAMILIES, _spec("dtype_a", "int8")),
    "CONV_INT32_RANGE": (FAMILIES, _int32),
    "CONV_KERNEL_SIZE": (("fwd", "wgrad"), _kernel_size),
    "E_RANGE/output": (FAMILIES, _output_size),
    "E_RANGE/tile": (FAMILIES, _spec("tile_m", 0)),
    "E_TYPE": (FAMILIES, _spec("relu", 1)),
    "E_UNKNOWN_KEY": (FAMILIES, _another_family_key),
    "E_MISSING": (FAMILIES, _missing),
}


def crossing_draw(rng: random.Random, family: str) -> tuple[str, Tables]:
    """(the rule aimed at, the tables) of a valid draw with exactly one rule crossed."""
    _, tables = valid_draw(rng, family)
    rules = sorted(name for name, (fams, _) in CROSSINGS.items() if family in fams)
    rule = rng.choice(rules)
    CROSSINGS[rule][1](tables, rng)
    return rule, tables


def draw(rng: random.Random, family: str) -> tuple[str, str]:
    """(origin, config text) of one generated case of ``family``."""
    if rng.random() < CROSS_WEIGHT:
        rule, tables = crossing_draw(rng, family)
        return f"cross:{rule}", render_tables(tables)
    paths, tables = valid_draw(rng, family)
    return f"gen:{paths}", render_tables(tables)
