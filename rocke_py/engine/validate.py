"""The rule tables of the reference (docs/reference/conv-semantics.md §4, §11): spec layer,
then arch layer, then build layer, each in table order; the first failing rule gives the reason
code and message. The reference rules that no config can reach (an earlier check always fires
first) are left out; parity_configs/UNREACHABLE.md gives each one's argument.

Twin of rocke_c/src/validate.c: the same rules, in the same order, with the same messages.
Each check returns the message when the rule fires."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Container, Optional

from . import limits
from .arch import LDS_K_OUTER_ARCH_WAVE, Target, has_mma
from .problem import ConvProblem
from .result import Rejected
from .spec import (
    MAX_UNROLLED_K_ITERS,
    SIXTEEN_BIT,
    AsyncTile,
    ConvSpec,
    async_tiles,
    echo_word,
    lds_budget,
    tile_dwords,
    unrolled_k_iters,
    vec_c_cap,
    vec_c_run,
    vector_cap,
)


@dataclass(frozen=True)
class Ctx:
    spec: ConvSpec
    problem: ConvProblem
    target: Target


Check = Callable[[Ctx], Optional[str]]


# ---- shared checks (one function per rule meaning; the family prefixes the code) ----


def fixed(on: bool, text: str) -> Optional[str]:
    """The rules whose message is a fixed text: it, when `on`."""
    return text if on else None


def unknown_option(c: Ctx) -> Optional[str]:
    s = c.spec
    pipelines = PIPELINES[s.family]
    if s.pipeline not in pipelines:
        what = f"pipeline '{s.pipeline}'" if echo_word(s.pipeline) else "pipeline"
        return f"{what} is not one of {', '.join(pipelines)}"
    if s.epilogue not in EPILOGUES:
        what = f"epilogue '{s.epilogue}'" if echo_word(s.epilogue) else "epilogue"
        return f"{what} is not one of default, cshuffle"
    return None


#: The pipelines each family's spec may name (fwd shares wgrad's rule).
PIPELINES = {
    "fwd": ("mem", "compv3", "compv4", "basic"),
    "wgrad": ("mem", "compv3", "compv4", "basic"),
    "dgrad": ("mem", "compv3", "compv4", "wavelet"),
}
EPILOGUES = ("default", "cshuffle")


def tile_divisibility(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.tile_m % (s.warp_m * s.warp_tile_m) != 0:
        return f"tile_m = {s.tile_m} is not a multiple of warp_m*warp_tile_m = {s.warp_m}*{s.warp_tile_m}"
    if s.tile_n % (s.warp_n * s.warp_tile_n) != 0:
        return f"tile_n = {s.tile_n} is not a multiple of warp_n*warp_tile_n = {s.warp_n}*{s.warp_tile_n}"
    if s.tile_k % s.warp_tile_k != 0:
        return f"tile_k = {s.tile_k} is not a multiple of warp_tile_k = {s.warp_tile_k}"
    return None


def block_size_spec(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.block_size > 1024:
        return (
            f"block_size = warp_m*warp_n*wave_size = {s.warp_m}*{s.warp_n}*{s.wave_size} = {s.block_size} exceeds 1024"
        )
    return None


def vec_c_default_epilogue(c: Ctx, also: bool = False) -> Optional[str]:
    """`also`: dgrad's other case, with split-K or a stride (DGRAD_VEC_C_SCALAR_STORE)."""
    s, p = c.spec, c.problem
    if s.vector_size_c is not None and s.vector_size_c > 1 and s.epilogue == "default":
        why = f", also with split_k = {s.split_k}, sH = {p.sH}, sW = {p.sW}" if also else ""
        return (
            f"vector_size_c = {s.vector_size_c} needs epilogue cshuffle "
            f"(the default epilogue stores one element per lane{why})"
        )
    return None


def wave_size_mismatch(c: Ctx) -> Optional[str]:
    s, t = c.spec, c.target
    if s.wave_size != t.wave_size:
        return f"wave_size = {s.wave_size} is not the wave size of {t.arch} ({t.wave_size})"
    return None


def packed_atomics(c: Ctx, atomic: bool, ok: bool, needs: str) -> Optional[str]:
    """What atomic split-K with a 16-bit dtype_d (packed pairs of atomics) needs."""
    s = c.spec
    if atomic and s.dtype_d in SIXTEEN_BIT and not ok:
        return f"split_k = {s.split_k} with dtype_d = {s.dtype_d} needs {needs}"
    return None


def split_k_odd_cpg(c: Ctx, atomic: bool) -> Optional[str]:
    cpg = c.problem.cpg
    return packed_atomics(
        c, atomic, cpg % 2 == 0, f"an even cpg, not {cpg} (packed pairs must not cross a channel run)"
    )


#: The operands whose LDS tile lds_k_outer lays out for the transposed read, by family (§7.5):
#: A and B in wgrad, B alone in dgrad (fwd has no lds_k_outer). An operand's MMA edge: A's M, B's N.
KOUTER_OPERANDS = {"wgrad": ("a", "b"), "dgrad": ("b",)}
EDGE = {"a": "m", "b": "n"}


def kouter_needs(c: Ctx, keys: list[str], allowed: Container, needs: str) -> Optional[str]:
    """What lds_k_outer needs of the spec: each of `keys` in `allowed`."""
    s = c.spec
    values = [getattr(s, key) for key in keys]
    if s.lds_k_outer and any(value not in allowed for value in values):
        return f"lds_k_outer needs {needs}, not {' and '.join(map(str, values))}"
    return None


def kouter_dtype(c: Ctx) -> Optional[str]:
    keys = [f"dtype_{x}" for x in KOUTER_OPERANDS[c.spec.family]]
    article = "" if len(keys) > 1 else "a "
    return kouter_needs(c, keys, SIXTEEN_BIT, f"{article}16-bit {' and '.join(keys)} (the transpose read is 16-bit)")


def kouter_atom_edge(c: Ctx) -> Optional[str]:
    keys = [f"warp_tile_{EDGE[x]}" for x in KOUTER_OPERANDS[c.spec.family]]
    return kouter_needs(c, keys, (16, 32), f"{' and '.join(keys)} in {{16, 32}}")


def kouter_wave(c: Ctx) -> Optional[str]:
    return kouter_needs(c, ["wave_size"], (64, 32), "wave_size 64 or 32")


def atom(s: ConvSpec) -> str:
    return f"{s.warp_tile_m}x{s.warp_tile_n}x{s.warp_tile_k}"


def wgrad_kouter_wave32_atom(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and s.wave_size == 32 and (s.warp_tile_m, s.warp_tile_n, s.warp_tile_k) != (16, 16, 32):
        return f"lds_k_outer on wave32 needs the 16x16x32 atom, not {atom(s)}"
    return None


def dgrad_kouter_wave32_atom(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and s.wave_size == 32 and (s.warp_tile_n, s.warp_tile_k) != (16, 32):
        return (
            f"lds_k_outer on wave32 needs warp_tile_n = 16 and warp_tile_k = 32, "
            f"not {s.warp_tile_n} and {s.warp_tile_k}"
        )
    return None


def kouter_arch(c: Ctx) -> Optional[str]:
    return kouter_needs(c, ["arch"], LDS_K_OUTER_ARCH_WAVE, "gfx950 or gfx1250 (a transpose read)")


def kouter_explicit_layout(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and s.has_lds_layout:
        tiles = " and ".join(x.upper() for x in KOUTER_OPERANDS[s.family])
        return f"lds_k_outer fixes the {tiles} tile layout; lds_layout_pad and lds_layout_xor must be unset"
    return None


def lds_layout(s: ConvSpec) -> str:
    """The explicit LDS layout, as the messages name it."""
    return f"lds_layout_pad = {s.lds_layout_pad}, lds_layout_xor = {s.lds_layout_xor}"


def async_layout(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.async_dma and s.has_lds_layout and (s.lds_layout_pad != 0 or s.lds_layout_xor != 0):
        return f"async_dma needs a packed, unswizzled LDS layout, not {lds_layout(s)}"
    return None


def async_pad(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.async_dma and s.lds_k_pad is not None and s.lds_k_pad != 0:
        return f"async_dma writes a packed tile; lds_k_pad = {s.lds_k_pad} must be unset or 0"
    return None


def async_explicit_vector(c: Ctx) -> Optional[str]:
    s = c.spec
    return fixed(
        s.async_dma and (s.vector_size_a is not None or s.vector_size_b is not None),
        "async_dma derives its own load width; vector_size_a and vector_size_b must be unset",
    )


def vector_range(c: Ctx) -> Optional[str]:
    s = c.spec
    cap = vector_cap(s)
    for key, value in (("vector_size_a", s.vector_size_a), ("vector_size_b", s.vector_size_b)):
        if value is not None and not 1 <= value <= cap:
            return f"{key} = {value} is outside 1..{cap}"
    return None


def vector_divisibility(c: Ctx) -> Optional[str]:
    """The run vector_size_a must divide is kpg in dgrad and wgrad, cpg in fwd."""
    s, p = c.spec, c.problem
    a_key, a_run = ("cpg", p.cpg) if s.family == "fwd" else ("kpg", p.kpg)
    if s.vector_size_a is not None and a_run % s.vector_size_a != 0:
        return f"vector_size_a = {s.vector_size_a} does not divide {a_key} = {a_run}"
    if s.vector_size_b is not None and p.cpg % s.vector_size_b != 0:
        return f"vector_size_b = {s.vector_size_b} does not divide cpg = {p.cpg}"
    return None


def vec_c_range(c: Ctx) -> Optional[str]:
    s = c.spec
    cap = vec_c_cap(s)
    if s.vector_size_c is not None and not 1 <= s.vector_size_c <= cap:
        return f"vector_size_c = {s.vector_size_c} is outside 1..{cap}"
    return None


def vec_c_divisibility(c: Ctx) -> Optional[str]:
    s = c.spec
    key, run = vec_c_run(s, c.problem)
    if s.vector_size_c is not None and run % s.vector_size_c != 0:
        return f"vector_size_c = {s.vector_size_c} does not divide {key} = {run}"
    return None


def vector_pow2(c: Ctx) -> Optional[str]:
    s = c.spec
    for key, value in (
        ("vector_size_a", s.vector_size_a),
        ("vector_size_b", s.vector_size_b),
        ("vector_size_c", s.vector_size_c),
    ):
        if value is not None and value & (value - 1) != 0:
            return f"{key} = {value} is not a power of two (a buffer load or store moves 2, 4, 8 or 16 bytes)"
    return None


def basic_async(c: Ctx) -> Optional[str]:
    return fixed(c.spec.pipeline == "basic" and c.spec.async_dma, "pipeline basic and async_dma both own the K loop")


def unroll_exclusive(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.unroll_k and (s.pipeline == "basic" or s.async_dma):
        owner = "pipeline basic" if s.pipeline == "basic" else "async_dma"
        return f"unroll_k and {owner} both own the K loop"
    return None


def unroll_cap(c: Ctx) -> Optional[str]:
    """Every fully unrolled K loop (unroll_k included: engine-contract §8.1)."""
    s = c.spec
    if s.unroll_k or s.pipeline == "basic" or s.async_dma:
        iters = unrolled_k_iters(s, c.problem)
        if iters > MAX_UNROLLED_K_ITERS:
            return f"the unrolled K loop would run {iters} iterations, more than {MAX_UNROLLED_K_ITERS}"
    return None


def mma_shape(c: Ctx) -> Optional[str]:
    s, t = c.spec, c.target
    if not has_mma(t, s.dtype_a, s.dtype_b, s.warp_tile_m, s.warp_tile_n, s.warp_tile_k):
        return f"{t.arch} has no {s.dtype_a} x {s.dtype_b} MMA atom {atom(s)}"
    return None


def grouped_pointwise(c: Ctx) -> Optional[str]:
    p = c.problem
    if p.groups > 1 and p.is_pointwise:
        return f"a grouped (groups = {p.groups}) pointwise problem is not supported"
    return None


def lds_budget_check(c: Ctx) -> Optional[str]:
    total, t = lds_budget(c.spec), c.target
    if total > t.lds_capacity:
        return f"the LDS budget of {total} bytes exceeds the {t.lds_capacity} bytes of {t.arch}"
    return None


def wmma_atom(c: Ctx) -> Optional[str]:
    s = c.spec
    if (s.warp_tile_m, s.warp_tile_n, s.warp_tile_k) not in ((16, 16, 16), (16, 16, 32)):
        return f"WMMA on {s.arch} supports the atoms 16x16x16 and 16x16x32, not {atom(s)}"
    if s.pipeline != "mem":
        return f"WMMA on {s.arch} supports pipeline mem only, not {s.pipeline}"
    return None


def fwd_wgrad_wmma_subset(c: Ctx) -> Optional[str]:
    s = c.spec
    if c.target.is_mfma:
        return None
    first = wmma_atom(c)
    if first:
        return first
    for key, bad in (
        ("epilogue cshuffle", s.epilogue != "default"),
        ("async_dma", s.async_dma),
        ("unroll_k", s.unroll_k),
        ("chiplet_swizzle", s.chiplet_swizzle),
    ):
        if bad:
            return f"WMMA on {s.arch} does not support {key}"
    return None


def dgrad_wmma_subset(c: Ctx) -> Optional[str]:
    return None if c.target.is_mfma else wmma_atom(c)


def acc_clamp_order(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.clamp_min is not None and s.clamp_max is not None and s.clamp_min > s.clamp_max:
        return f"clamp_min = {s.clamp_min} is greater than clamp_max = {s.clamp_max}"
    return None


def lds_xor_unsupported(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.has_lds_layout and s.lds_layout_xor != 0:
        return (
            f"lds_layout_xor = {s.lds_layout_xor} is not supported "
            "(the builders have no XOR-swizzled LDS tile; only 0, no swizzle)"
        )
    return None


def field_unused(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.has_lds_layout and s.lds_k_pad is not None:
        return f"lds_k_pad = {s.lds_k_pad} has no effect with an explicit LDS layout ({lds_layout(s)} beats it)"
    if s.chiplet_swizzle:
        return None
    for key, value, default in (
        ("chiplet_wgm", s.chiplet_wgm, 8),
        ("chiplet_num_xcds", s.chiplet_num_xcds, 8),
        ("chiplet_chunk_size", s.chiplet_chunk_size, 64),
    ):
        if value != default:
            return f"{key} = {value} has no effect without chiplet_swizzle"
    return None


def dgrad_field_unused(c: Ctx) -> Optional[str]:
    s = c.spec
    first = field_unused(c)
    if first:
        return first
    if s.num_load_waves != 4:
        return (
            f"num_load_waves = {s.num_load_waves} has no effect "
            "(only pipeline wavelet, which is not supported, has load waves)"
        )
    if s.cshuffle_no_alias and s.epilogue != "cshuffle":
        return "cshuffle_no_alias has no effect without epilogue cshuffle"
    return None


def async_dwords(c: Ctx) -> list[tuple[AsyncTile, Optional[int]]]:
    """With async_dma, each tile it loads and the dwords per lane that move it (None: none fits)."""
    s = c.spec
    return [(tile, tile_dwords(s, tile)) for tile in async_tiles(s, c.problem)] if s.async_dma else []


def tile_facts(s: ConvSpec, tile: AsyncTile) -> str:
    return (
        f"(rows = {tile.rows}, cols = {tile.cols}, block_size = {s.block_size}, "
        f"elem_bytes = {tile.elem_bytes}, contig_cols = {tile.contig_cols})"
    )


def async_no_dwords(c: Ctx) -> Optional[str]:
    for tile, dwords in async_dwords(c):
        if dwords is None:
            return f"no dwords in 4, 3, 1 fits the {tile.operand} tile {tile_facts(c.spec, tile)}"
    return None


def async_arch_dwords(c: Ctx) -> Optional[str]:
    t = c.target
    for tile, dwords in async_dwords(c):
        if dwords is not None and dwords > t.async_lds_dwords:
            return (
                f"async_dma on {t.arch} loads at most {4 * t.async_lds_dwords} bytes per lane to LDS, but the "
                f"{tile.operand} tile would move {4 * dwords} {tile_facts(c.spec, tile)}"
            )
    return None


def int32_range(c: Ctx) -> Optional[str]:
    return limits.int32_range(c.spec, c.problem)


def kernel_size(c: Ctx) -> Optional[str]:
    return limits.kernel_size(c.spec, c.problem, c.target)


# ---- wgrad (conv-semantics §4.3) ----


def wgrad_split_k_range(c: Ctx) -> Optional[str]:
    if c.spec.split_k < -1:
        return f"split_k = {c.spec.split_k} is below -1 (allowed: -1 auto, 0 runtime, 1, > 1)"
    return None


def wgrad_two_stage(c: Ctx) -> Optional[str]:
    s = c.spec
    if not s.two_stage:
        return None
    if s.force_deterministic and s.split_k > 1:
        return (
            f"force_deterministic with split_k = {s.split_k} needs the two-stage "
            "workspace reduction, which is not supported"
        )
    return "two_stage (the workspace reduction) is not supported"


def wgrad_split_k_odd_cpg(c: Ctx) -> Optional[str]:
    return split_k_odd_cpg(c, c.spec.atomic_split_k)


def wgrad_group_merge(c: Ctx) -> Optional[str]:
    if c.spec.group_merge != 1:
        return f"group_merge = {c.spec.group_merge} is not supported (only 1)"
    return None


def wgrad_split_k_needs_cshuffle(c: Ctx) -> Optional[str]:
    s = c.spec
    return packed_atomics(c, s.atomic_split_k, s.epilogue != "default", "epilogue cshuffle (packed 16-bit atomics)")


def wgrad_async_requires_kouter(c: Ctx) -> Optional[str]:
    return fixed(
        c.spec.async_dma and not c.spec.lds_k_outer,
        "async_dma needs lds_k_outer (on the M-outer tile a chunk would run along K)",
    )


def wgrad_split_k_runtime_loop(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.split_k == 0:
        for key, on in (
            ("async_dma", s.async_dma),
            ("unroll_k", s.unroll_k),
            ("pipeline basic", s.pipeline == "basic"),
        ):
            if on:
                return f"split_k = 0 (runtime) cannot be combined with {key}, which needs a compile-time trip count"
    return None


def wgrad_kouter_explicit_pad(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and s.lds_k_pad is not None:
        return f"lds_k_outer fixes the LDS stride; lds_k_pad = {s.lds_k_pad} must be unset"
    return None


def dgrad_split_k_range(c: Ctx) -> Optional[str]:
    if c.spec.split_k < -1 or c.spec.split_k == 0:
        return f"split_k = {c.spec.split_k} is not allowed (allowed: -1 auto, 1, > 1)"
    return None


def dgrad_split_k_odd_cpg(c: Ctx) -> Optional[str]:
    return split_k_odd_cpg(c, c.spec.split_k > 1)


def dgrad_3d(c: Ctx) -> Optional[str]:
    return fixed(c.problem.is_3d, "dgrad does not support 3-D problems")


def dgrad_kouter_async(c: Ctx) -> Optional[str]:
    return fixed(c.spec.lds_k_outer and c.spec.async_dma, "lds_k_outer cannot be combined with async_dma")


def dgrad_kouter_wavelet(c: Ctx) -> Optional[str]:
    return fixed(
        c.spec.lds_k_outer and c.spec.pipeline == "wavelet", "lds_k_outer cannot be combined with pipeline wavelet"
    )


def dgrad_async_unsupported(c: Ctx) -> Optional[str]:
    return fixed(c.spec.async_dma, "dgrad has no direct global-to-LDS path (async_dma)")


def dgrad_unroll_unsupported(c: Ctx) -> Optional[str]:
    return fixed(c.spec.unroll_k, "dgrad does not support unroll_k")


def dgrad_chiplet_unsupported(c: Ctx) -> Optional[str]:
    return fixed(c.spec.chiplet_swizzle, "dgrad does not support chiplet_swizzle")


def dgrad_wavelet_unsupported(c: Ctx) -> Optional[str]:
    return fixed(c.spec.pipeline == "wavelet", "pipeline wavelet is not supported")


def dgrad_split_k_cdna_only(c: Ctx) -> Optional[str]:
    if c.spec.split_k > 1 and not c.target.is_mfma:
        return f"split_k = {c.spec.split_k} needs an MFMA target, not {c.target.arch}"
    return None


def dgrad_depthwise(c: Ctx) -> Optional[str]:
    p = c.problem
    if p.groups > 1 and p.cpg == 1:
        return f"depthwise dgrad (groups = {p.groups}, cpg = 1) is not supported"
    return None


def dgrad_vec_c_default_epilogue(c: Ctx) -> Optional[str]:
    s, p = c.spec, c.problem
    if s.split_k <= 1 and p.sH == 1 and p.sW == 1:
        return vec_c_default_epilogue(c)
    return None


def dgrad_vec_c_scalar_store(c: Ctx) -> Optional[str]:
    s, p = c.spec, c.problem
    if s.split_k <= 1 and p.sH == 1 and p.sW == 1:
        return None  # DGRAD_VEC_C_DEFAULT_EPILOGUE's case
    return vec_c_default_epilogue(c, also=True)


def dgrad_split_k_vector_a(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.split_k > 1 and s.vector_size_a is not None and s.vector_size_a > 1:
        return (
            f"vector_size_a = {s.vector_size_a} has no effect with split_k = {s.split_k} "
            "(split-K loads dY one element at a time); it must be unset or 1"
        )
    return None


# ---- the table: (family, code, layer, check), each family's rows in its table order ----

SPEC, ARCH, BUILD = "spec", "arch", "build"
WGRAD, DGRAD, FWD = "wgrad", "dgrad", "fwd"

RULE_ROWS: tuple[tuple[str, str, str, Check], ...] = (
    (WGRAD, "WGRAD_UNKNOWN_OPTION", SPEC, unknown_option),
    (WGRAD, "WGRAD_TILE_DIVISIBILITY", SPEC, tile_divisibility),
    (WGRAD, "WGRAD_BLOCK_SIZE", SPEC, block_size_spec),
    (WGRAD, "WGRAD_VEC_C_DEFAULT_EPILOGUE", ARCH, vec_c_default_epilogue),
    (WGRAD, "WGRAD_WAVE_SIZE_MISMATCH", ARCH, wave_size_mismatch),
    (WGRAD, "WGRAD_SPLIT_K_RANGE", SPEC, wgrad_split_k_range),
    (WGRAD, "WGRAD_TWO_STAGE_UNSUPPORTED", SPEC, wgrad_two_stage),
    (WGRAD, "WGRAD_GROUP_MERGE_UNSUPPORTED", SPEC, wgrad_group_merge),
    (WGRAD, "WGRAD_SPLIT_K_ODD_CPG", SPEC, wgrad_split_k_odd_cpg),
    (WGRAD, "WGRAD_SPLIT_K_NEEDS_CSHUFFLE", SPEC, wgrad_split_k_needs_cshuffle),
    (WGRAD, "WGRAD_ASYNC_REQUIRES_KOUTER", SPEC, wgrad_async_requires_kouter),
    (WGRAD, "WGRAD_SPLIT_K_RUNTIME_LOOP", SPEC, wgrad_split_k_runtime_loop),
    (WGRAD, "WGRAD_KOUTER_DTYPE", SPEC, kouter_dtype),
    (WGRAD, "WGRAD_KOUTER_ATOM_EDGE", SPEC, kouter_atom_edge),
    (WGRAD, "WGRAD_KOUTER_WAVE", SPEC, kouter_wave),
    (WGRAD, "WGRAD_KOUTER_WAVE32_ATOM", SPEC, wgrad_kouter_wave32_atom),
    (WGRAD, "WGRAD_KOUTER_EXPLICIT_PAD", SPEC, wgrad_kouter_explicit_pad),
    (WGRAD, "WGRAD_KOUTER_ARCH", ARCH, kouter_arch),
    (WGRAD, "WGRAD_ASYNC_LAYOUT", SPEC, async_layout),
    (WGRAD, "WGRAD_ASYNC_EXPLICIT_VECTOR", ARCH, async_explicit_vector),
    (WGRAD, "WGRAD_VECTOR_RANGE", ARCH, vector_range),
    (WGRAD, "WGRAD_VECTOR_DIVISIBILITY", ARCH, vector_divisibility),
    (WGRAD, "WGRAD_VEC_C_RANGE", ARCH, vec_c_range),
    (WGRAD, "WGRAD_VEC_C_DIVISIBILITY", ARCH, vec_c_divisibility),
    (WGRAD, "WGRAD_VECTOR_POW2", ARCH, vector_pow2),
    (WGRAD, "WGRAD_BASIC_ASYNC", SPEC, basic_async),
    (WGRAD, "WGRAD_UNROLL_EXCLUSIVE", SPEC, unroll_exclusive),
    (WGRAD, "WGRAD_UNROLL_CAP", SPEC, unroll_cap),
    (WGRAD, "WGRAD_MMA_SHAPE", ARCH, mma_shape),
    (WGRAD, "WGRAD_GROUPED_POINTWISE", ARCH, grouped_pointwise),
    (WGRAD, "WGRAD_LDS_BUDGET", ARCH, lds_budget_check),
    (WGRAD, "WGRAD_WMMA_SUBSET", ARCH, fwd_wgrad_wmma_subset),
    (WGRAD, "WGRAD_ACC_CLAMP_ORDER", SPEC, acc_clamp_order),
    (WGRAD, "WGRAD_LDS_XOR_UNSUPPORTED", SPEC, lds_xor_unsupported),
    (WGRAD, "WGRAD_KOUTER_EXPLICIT_LAYOUT", SPEC, kouter_explicit_layout),
    (WGRAD, "WGRAD_FIELD_UNUSED", SPEC, field_unused),
    (WGRAD, "CONV_INT32_RANGE", SPEC, int32_range),
    (WGRAD, "CONV_ASYNC_NO_DWORDS", BUILD, async_no_dwords),
    (WGRAD, "CONV_KERNEL_SIZE", BUILD, kernel_size),
    (DGRAD, "DGRAD_UNKNOWN_OPTION", SPEC, unknown_option),
    (DGRAD, "DGRAD_TILE_DIVISIBILITY", SPEC, tile_divisibility),
    (DGRAD, "DGRAD_BLOCK_SIZE", SPEC, block_size_spec),
    (DGRAD, "DGRAD_ACC_CLAMP_ORDER", SPEC, acc_clamp_order),
    (DGRAD, "DGRAD_SPLIT_K_RANGE", SPEC, dgrad_split_k_range),
    (DGRAD, "DGRAD_SPLIT_K_ODD_CPG", SPEC, dgrad_split_k_odd_cpg),
    (DGRAD, "DGRAD_3D_UNSUPPORTED", SPEC, dgrad_3d),
    (DGRAD, "DGRAD_KOUTER_DTYPE", SPEC, kouter_dtype),
    (DGRAD, "DGRAD_KOUTER_ATOM_EDGE", SPEC, kouter_atom_edge),
    (DGRAD, "DGRAD_KOUTER_WAVE", SPEC, kouter_wave),
    (DGRAD, "DGRAD_KOUTER_WAVE32_ATOM", SPEC, dgrad_kouter_wave32_atom),
    (DGRAD, "DGRAD_KOUTER_EXPLICIT_LAYOUT", SPEC, kouter_explicit_layout),
    (DGRAD, "DGRAD_KOUTER_ASYNC", SPEC, dgrad_kouter_async),
    (DGRAD, "DGRAD_KOUTER_WAVELET", SPEC, dgrad_kouter_wavelet),
    (DGRAD, "DGRAD_ASYNC_LAYOUT", SPEC, async_layout),
    (DGRAD, "DGRAD_ASYNC_PAD", SPEC, async_pad),
    (DGRAD, "DGRAD_ASYNC_UNSUPPORTED", SPEC, dgrad_async_unsupported),
    (DGRAD, "DGRAD_UNROLL_UNSUPPORTED", SPEC, dgrad_unroll_unsupported),
    (DGRAD, "DGRAD_CHIPLET_UNSUPPORTED", SPEC, dgrad_chiplet_unsupported),
    (DGRAD, "DGRAD_WAVELET_UNSUPPORTED", SPEC, dgrad_wavelet_unsupported),
    (DGRAD, "DGRAD_SPLIT_K_CDNA_ONLY", ARCH, dgrad_split_k_cdna_only),
    (DGRAD, "DGRAD_DEPTHWISE_UNSUPPORTED", ARCH, dgrad_depthwise),
    (DGRAD, "DGRAD_VEC_C_DEFAULT_EPILOGUE", ARCH, dgrad_vec_c_default_epilogue),
    (DGRAD, "DGRAD_VEC_C_SCALAR_STORE", ARCH, dgrad_vec_c_scalar_store),
    (DGRAD, "DGRAD_WAVE_SIZE_MISMATCH", ARCH, wave_size_mismatch),
    (DGRAD, "DGRAD_MMA_SHAPE", ARCH, mma_shape),
    (DGRAD, "DGRAD_KOUTER_ARCH", ARCH, kouter_arch),
    (DGRAD, "DGRAD_VECTOR_RANGE", ARCH, vector_range),
    (DGRAD, "DGRAD_VECTOR_DIVISIBILITY", ARCH, vector_divisibility),
    (DGRAD, "DGRAD_VEC_C_RANGE", ARCH, vec_c_range),
    (DGRAD, "DGRAD_VEC_C_DIVISIBILITY", ARCH, vec_c_divisibility),
    (DGRAD, "DGRAD_VECTOR_POW2", ARCH, vector_pow2),
    (DGRAD, "DGRAD_SPLIT_K_VECTOR_A", ARCH, dgrad_split_k_vector_a),
    (DGRAD, "DGRAD_LDS_BUDGET", ARCH, lds_budget_check),
    (DGRAD, "DGRAD_WMMA_SUBSET", ARCH, dgrad_wmma_subset),
    (DGRAD, "DGRAD_LDS_XOR_UNSUPPORTED", SPEC, lds_xor_unsupported),
    (DGRAD, "DGRAD_FIELD_UNUSED", SPEC, dgrad_field_unused),
    (DGRAD, "CONV_INT32_RANGE", SPEC, int32_range),
    (DGRAD, "CONV_KERNEL_SIZE", BUILD, kernel_size),
    (FWD, "FWD_UNKNOWN_OPTION", SPEC, unknown_option),
    (FWD, "FWD_TILE_DIVISIBILITY", SPEC, tile_divisibility),
    (FWD, "FWD_BLOCK_SIZE", SPEC, block_size_spec),
    (FWD, "FWD_VEC_C_DEFAULT_EPILOGUE", ARCH, vec_c_default_epilogue),
    (FWD, "FWD_WAVE_SIZE_MISMATCH", ARCH, wave_size_mismatch),
    (FWD, "FWD_ASYNC_LAYOUT", SPEC, async_layout),
    (FWD, "FWD_ASYNC_PAD", SPEC, async_pad),
    (FWD, "FWD_ASYNC_EXPLICIT_VECTOR", ARCH, async_explicit_vector),
    (FWD, "FWD_VECTOR_RANGE", ARCH, vector_range),
    (FWD, "FWD_VECTOR_DIVISIBILITY", ARCH, vector_divisibility),
    (FWD, "FWD_VEC_C_RANGE", ARCH, vec_c_range),
    (FWD, "FWD_VEC_C_DIVISIBILITY", ARCH, vec_c_divisibility),
    (FWD, "FWD_VECTOR_POW2", ARCH, vector_pow2),
    (FWD, "FWD_BASIC_ASYNC", SPEC, basic_async),
    (FWD, "FWD_UNROLL_EXCLUSIVE", SPEC, unroll_exclusive),
    (FWD, "FWD_UNROLL_CAP", SPEC, unroll_cap),
    (FWD, "FWD_MMA_SHAPE", ARCH, mma_shape),
    (FWD, "FWD_LDS_BUDGET", ARCH, lds_budget_check),
    (FWD, "FWD_WMMA_SUBSET", ARCH, fwd_wgrad_wmma_subset),
    (FWD, "FWD_ACC_CLAMP_ORDER", SPEC, acc_clamp_order),
    (FWD, "FWD_LDS_XOR_UNSUPPORTED", SPEC, lds_xor_unsupported),
    (FWD, "FWD_FIELD_UNUSED", SPEC, field_unused),
    (FWD, "CONV_INT32_RANGE", SPEC, int32_range),
    (FWD, "CONV_ASYNC_NO_DWORDS", BUILD, async_no_dwords),
    (FWD, "CONV_ASYNC_ARCH_DWORDS", BUILD, async_arch_dwords),
    (FWD, "CONV_KERNEL_SIZE", BUILD, kernel_size),
)

#: Each family's rows, (code, layer, check) in table order.
RULES = {family: tuple(row[1:] for row in RULE_ROWS if row[0] == family) for family in (WGRAD, DGRAD, FWD)}


def validate(spec: ConvSpec, problem: ConvProblem, target: Target) -> Optional[Rejected]:
    ctx = Ctx(spec, problem, target)
    rules = RULES[spec.family]
    for layer in (SPEC, ARCH, BUILD):
        for code, rule_layer, check in rules:
            if rule_layer != layer:
                continue
            message = check(ctx)
            if message is not None:
                return Rejected(code, message)
    return None
