"""The rule tables of the reference (docs/reference/conv-semantics.md §4, §11): spec layer,
then arch layer, then build layer, each in table order; the first failing rule gives the reason
code and message. The reference rules that no config can reach (an earlier check always fires
first) are left out; parity_configs/UNREACHABLE.md gives each one's argument.

Twin of rocke_c/src/validate.c: the same rules, in the same order, with the same messages.
Each check returns the message when the rule fires."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from . import limits
from .arch import LDS_K_OUTER_ARCH_WAVE, Target, has_mma
from .problem import ConvProblem
from .result import Rejected
from .spec import (
    MAX_UNROLLED_K_ITERS,
    SIXTEEN_BIT,
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


def unknown_option(c: Ctx, pipelines: tuple[str, ...]) -> Optional[str]:
    s = c.spec
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


def fwd_wgrad_unknown_option(c: Ctx) -> Optional[str]:
    return unknown_option(c, PIPELINES["wgrad"])


def dgrad_unknown_option(c: Ctx) -> Optional[str]:
    return unknown_option(c, PIPELINES["dgrad"])


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


def vec_c_default_epilogue(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.vector_size_c is not None and s.vector_size_c > 1 and s.epilogue == "default":
        return (
            f"vector_size_c = {s.vector_size_c} needs epilogue cshuffle "
            "(the default epilogue stores one element per lane)"
        )
    return None


def wave_size_mismatch(c: Ctx) -> Optional[str]:
    s, t = c.spec, c.target
    if s.wave_size != t.wave_size:
        return f"wave_size = {s.wave_size} is not the wave size of {t.arch} ({t.wave_size})"
    return None


def split_k_odd_cpg(c: Ctx, atomic: bool) -> Optional[str]:
    s = c.spec
    if atomic and s.dtype_d in SIXTEEN_BIT and c.problem.cpg % 2 != 0:
        return (
            f"split_k = {s.split_k} with dtype_d = {s.dtype_d} needs an even cpg, "
            f"not {c.problem.cpg} (packed pairs must not cross a channel run)"
        )
    return None


def kouter_dtype_ab(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and (s.dtype_a not in SIXTEEN_BIT or s.dtype_b not in SIXTEEN_BIT):
        return (
            f"lds_k_outer needs 16-bit dtype_a and dtype_b (the transpose read is 16-bit), "
            f"not {s.dtype_a} and {s.dtype_b}"
        )
    return None


def kouter_dtype_b(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and s.dtype_b not in SIXTEEN_BIT:
        return f"lds_k_outer needs a 16-bit dtype_b (the transpose read is 16-bit), not {s.dtype_b}"
    return None


def kouter_atom_edge_mn(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and (s.warp_tile_m not in (16, 32) or s.warp_tile_n not in (16, 32)):
        return f"lds_k_outer needs warp_tile_m and warp_tile_n in {{16, 32}}, not {s.warp_tile_m} and {s.warp_tile_n}"
    return None


def kouter_atom_edge_n(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and s.warp_tile_n not in (16, 32):
        return f"lds_k_outer needs warp_tile_n in {{16, 32}}, not {s.warp_tile_n}"
    return None


def kouter_wave(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and s.wave_size not in (64, 32):
        return f"lds_k_outer needs wave_size 64 or 32, not {s.wave_size}"
    return None


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
    s = c.spec
    if s.lds_k_outer and s.arch not in LDS_K_OUTER_ARCH_WAVE:
        return f"lds_k_outer needs gfx950 or gfx1250 (a transpose read), not {s.arch}"
    return None


def async_layout(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.async_dma and s.has_lds_layout and (s.lds_layout_pad != 0 or s.lds_layout_xor != 0):
        return (
            f"async_dma needs a packed, unswizzled LDS layout, not lds_layout_pad = "
            f"{s.lds_layout_pad}, lds_layout_xor = {s.lds_layout_xor}"
        )
    return None


def async_pad(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.async_dma and s.lds_k_pad is not None and s.lds_k_pad != 0:
        return f"async_dma writes a packed tile; lds_k_pad = {s.lds_k_pad} must be unset or 0"
    return None


def async_explicit_vector(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.async_dma and (s.vector_size_a is not None or s.vector_size_b is not None):
        return "async_dma derives its own load width; vector_size_a and vector_size_b must be unset"
    return None


def vector_range(c: Ctx) -> Optional[str]:
    s = c.spec
    cap = vector_cap(s)
    for key, value in (("vector_size_a", s.vector_size_a), ("vector_size_b", s.vector_size_b)):
        if value is not None and not 1 <= value <= cap:
            return f"{key} = {value} is outside 1..{cap}"
    return None


def grad_vector_divisibility(c: Ctx) -> Optional[str]:
    s, p = c.spec, c.problem
    if s.vector_size_a is not None and p.kpg % s.vector_size_a != 0:
        return f"vector_size_a = {s.vector_size_a} does not divide kpg = {p.kpg}"
    if s.vector_size_b is not None and p.cpg % s.vector_size_b != 0:
        return f"vector_size_b = {s.vector_size_b} does not divide cpg = {p.cpg}"
    return None


def fwd_vector_divisibility(c: Ctx) -> Optional[str]:
    s, p = c.spec, c.problem
    if s.vector_size_a is not None and p.cpg % s.vector_size_a != 0:
        return f"vector_size_a = {s.vector_size_a} does not divide cpg = {p.cpg}"
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
    if c.spec.pipeline == "basic" and c.spec.async_dma:
        return "pipeline basic and async_dma both own the K loop"
    return None


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
        return (
            f"lds_k_pad = {s.lds_k_pad} has no effect with an explicit LDS layout "
            f"(lds_layout_pad = {s.lds_layout_pad}, lds_layout_xor = {s.lds_layout_xor} beats it)"
        )
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


def async_no_dwords(c: Ctx) -> Optional[str]:
    s = c.spec
    if not s.async_dma:
        return None
    for tile in async_tiles(s, c.problem):
        if tile_dwords(s, tile) is None:
            return (
                f"no dwords in 4, 3, 1 fits the {tile.operand} tile (rows = {tile.rows}, "
                f"cols = {tile.cols}, block_size = {s.block_size}, elem_bytes = "
                f"{tile.elem_bytes}, contig_cols = {tile.contig_cols})"
            )
    return None


def async_arch_dwords(c: Ctx) -> Optional[str]:
    s, t = c.spec, c.target
    if not s.async_dma:
        return None
    for tile in async_tiles(s, c.problem):
        dwords = tile_dwords(s, tile)
        if dwords is not None and dwords > t.async_lds_dwords:
            return (
                f"async_dma on {t.arch} loads at most {4 * t.async_lds_dwords} bytes per lane to LDS, but "
                f"the {tile.operand} tile would move {4 * dwords} (rows = {tile.rows}, cols = {tile.cols}, "
                f"block_size = {s.block_size}, elem_bytes = {tile.elem_bytes}, contig_cols = {tile.contig_cols})"
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
    if s.atomic_split_k and s.dtype_d in SIXTEEN_BIT and s.epilogue == "default":
        return f"split_k = {s.split_k} with dtype_d = {s.dtype_d} needs epilogue cshuffle (packed 16-bit atomics)"
    return None


def wgrad_async_requires_kouter(c: Ctx) -> Optional[str]:
    if c.spec.async_dma and not c.spec.lds_k_outer:
        return "async_dma needs lds_k_outer (on the M-outer tile a chunk would run along K)"
    return None


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


def wgrad_kouter_explicit_layout(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and s.has_lds_layout:
        return "lds_k_outer fixes the A and B tile layout; lds_layout_pad and lds_layout_xor must be unset"
    return None


def dgrad_split_k_range(c: Ctx) -> Optional[str]:
    if c.spec.split_k < -1 or c.spec.split_k == 0:
        return f"split_k = {c.spec.split_k} is not allowed (allowed: -1 auto, 1, > 1)"
    return None


def dgrad_split_k_odd_cpg(c: Ctx) -> Optional[str]:
    return split_k_odd_cpg(c, c.spec.split_k > 1)


def dgrad_3d(c: Ctx) -> Optional[str]:
    if c.problem.is_3d:
        return "dgrad does not support 3-D problems"
    return None


def dgrad_kouter_explicit_layout(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.lds_k_outer and s.has_lds_layout:
        return "lds_k_outer fixes the B tile layout; lds_layout_pad and lds_layout_xor must be unset"
    return None


def dgrad_kouter_async(c: Ctx) -> Optional[str]:
    if c.spec.lds_k_outer and c.spec.async_dma:
        return "lds_k_outer cannot be combined with async_dma"
    return None


def dgrad_kouter_wavelet(c: Ctx) -> Optional[str]:
    if c.spec.lds_k_outer and c.spec.pipeline == "wavelet":
        return "lds_k_outer cannot be combined with pipeline wavelet"
    return None


def dgrad_async_unsupported(c: Ctx) -> Optional[str]:
    if c.spec.async_dma:
        return "dgrad has no direct global-to-LDS path (async_dma)"
    return None


def dgrad_unroll_unsupported(c: Ctx) -> Optional[str]:
    if c.spec.unroll_k:
        return "dgrad does not support unroll_k"
    return None


def dgrad_chiplet_unsupported(c: Ctx) -> Optional[str]:
    if c.spec.chiplet_swizzle:
        return "dgrad does not support chiplet_swizzle"
    return None


def dgrad_wavelet_unsupported(c: Ctx) -> Optional[str]:
    if c.spec.pipeline == "wavelet":
        return "pipeline wavelet is not supported"
    return None


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
    if s.vector_size_c is not None and s.vector_size_c > 1 and s.epilogue == "default":
        return (
            f"vector_size_c = {s.vector_size_c} needs epilogue cshuffle (the default epilogue stores one "
            f"element per lane, also with split_k = {s.split_k}, sH = {p.sH}, sW = {p.sW})"
        )
    return None


def dgrad_split_k_vector_a(c: Ctx) -> Optional[str]:
    s = c.spec
    if s.split_k > 1 and s.vector_size_a is not None and s.vector_size_a > 1:
        return (
            f"vector_size_a = {s.vector_size_a} has no effect with split_k = {s.split_k} "
            "(split-K loads dY one element at a time); it must be unset or 1"
        )
    return None


# ---- the tables: (code, layer, check) in table order ----

SPEC, ARCH, BUILD = "spec", "arch", "build"

WGRAD_RULES: tuple[tuple[str, str, Check], ...] = (
    ("WGRAD_UNKNOWN_OPTION", SPEC, fwd_wgrad_unknown_option),
    ("WGRAD_TILE_DIVISIBILITY", SPEC, tile_divisibility),
    ("WGRAD_BLOCK_SIZE", SPEC, block_size_spec),
    ("WGRAD_VEC_C_DEFAULT_EPILOGUE", ARCH, vec_c_default_epilogue),
    ("WGRAD_WAVE_SIZE_MISMATCH", ARCH, wave_size_mismatch),
    ("WGRAD_SPLIT_K_RANGE", SPEC, wgrad_split_k_range),
    ("WGRAD_TWO_STAGE_UNSUPPORTED", SPEC, wgrad_two_stage),
    ("WGRAD_GROUP_MERGE_UNSUPPORTED", SPEC, wgrad_group_merge),
    ("WGRAD_SPLIT_K_ODD_CPG", SPEC, wgrad_split_k_odd_cpg),
    ("WGRAD_SPLIT_K_NEEDS_CSHUFFLE", SPEC, wgrad_split_k_needs_cshuffle),
    ("WGRAD_ASYNC_REQUIRES_KOUTER", SPEC, wgrad_async_requires_kouter),
    ("WGRAD_SPLIT_K_RUNTIME_LOOP", SPEC, wgrad_split_k_runtime_loop),
    ("WGRAD_KOUTER_DTYPE", SPEC, kouter_dtype_ab),
    ("WGRAD_KOUTER_ATOM_EDGE", SPEC, kouter_atom_edge_mn),
    ("WGRAD_KOUTER_WAVE", SPEC, kouter_wave),
    ("WGRAD_KOUTER_WAVE32_ATOM", SPEC, wgrad_kouter_wave32_atom),
    ("WGRAD_KOUTER_EXPLICIT_PAD", SPEC, wgrad_kouter_explicit_pad),
    ("WGRAD_KOUTER_ARCH", ARCH, kouter_arch),
    ("WGRAD_ASYNC_LAYOUT", SPEC, async_layout),
    ("WGRAD_ASYNC_EXPLICIT_VECTOR", ARCH, async_explicit_vector),
    ("WGRAD_VECTOR_RANGE", ARCH, vector_range),
    ("WGRAD_VECTOR_DIVISIBILITY", ARCH, grad_vector_divisibility),
    ("WGRAD_VEC_C_RANGE", ARCH, vec_c_range),
    ("WGRAD_VEC_C_DIVISIBILITY", ARCH, vec_c_divisibility),
    ("WGRAD_VECTOR_POW2", ARCH, vector_pow2),
    ("WGRAD_BASIC_ASYNC", SPEC, basic_async),
    ("WGRAD_UNROLL_EXCLUSIVE", SPEC, unroll_exclusive),
    ("WGRAD_UNROLL_CAP", SPEC, unroll_cap),
    ("WGRAD_MMA_SHAPE", ARCH, mma_shape),
    ("WGRAD_GROUPED_POINTWISE", ARCH, grouped_pointwise),
    ("WGRAD_LDS_BUDGET", ARCH, lds_budget_check),
    ("WGRAD_WMMA_SUBSET", ARCH, fwd_wgrad_wmma_subset),
    ("WGRAD_ACC_CLAMP_ORDER", SPEC, acc_clamp_order),
    ("WGRAD_LDS_XOR_UNSUPPORTED", SPEC, lds_xor_unsupported),
    ("WGRAD_KOUTER_EXPLICIT_LAYOUT", SPEC, wgrad_kouter_explicit_layout),
    ("WGRAD_FIELD_UNUSED", SPEC, field_unused),
    ("CONV_INT32_RANGE", SPEC, int32_range),
    ("CONV_ASYNC_NO_DWORDS", BUILD, async_no_dwords),
    ("CONV_KERNEL_SIZE", BUILD, kernel_size),
)

DGRAD_RULES: tuple[tuple[str, str, Check], ...] = (
    ("DGRAD_UNKNOWN_OPTION", SPEC, dgrad_unknown_option),
    ("DGRAD_TILE_DIVISIBILITY", SPEC, tile_divisibility),
    ("DGRAD_BLOCK_SIZE", SPEC, block_size_spec),
    ("DGRAD_ACC_CLAMP_ORDER", SPEC, acc_clamp_order),
    ("DGRAD_SPLIT_K_RANGE", SPEC, dgrad_split_k_range),
    ("DGRAD_SPLIT_K_ODD_CPG", SPEC, dgrad_split_k_odd_cpg),
    ("DGRAD_3D_UNSUPPORTED", SPEC, dgrad_3d),
    ("DGRAD_KOUTER_DTYPE", SPEC, kouter_dtype_b),
    ("DGRAD_KOUTER_ATOM_EDGE", SPEC, kouter_atom_edge_n),
    ("DGRAD_KOUTER_WAVE", SPEC, kouter_wave),
    ("DGRAD_KOUTER_WAVE32_ATOM", SPEC, dgrad_kouter_wave32_atom),
    ("DGRAD_KOUTER_EXPLICIT_LAYOUT", SPEC, dgrad_kouter_explicit_layout),
    ("DGRAD_KOUTER_ASYNC", SPEC, dgrad_kouter_async),
    ("DGRAD_KOUTER_WAVELET", SPEC, dgrad_kouter_wavelet),
    ("DGRAD_ASYNC_LAYOUT", SPEC, async_layout),
    ("DGRAD_ASYNC_PAD", SPEC, async_pad),
    ("DGRAD_ASYNC_UNSUPPORTED", SPEC, dgrad_async_unsupported),
    ("DGRAD_UNROLL_UNSUPPORTED", SPEC, dgrad_unroll_unsupported),
    ("DGRAD_CHIPLET_UNSUPPORTED", SPEC, dgrad_chiplet_unsupported),
    ("DGRAD_WAVELET_UNSUPPORTED", SPEC, dgrad_wavelet_unsupported),
    ("DGRAD_SPLIT_K_CDNA_ONLY", ARCH, dgrad_split_k_cdna_only),
    ("DGRAD_DEPTHWISE_UNSUPPORTED", ARCH, dgrad_depthwise),
    ("DGRAD_VEC_C_DEFAULT_EPILOGUE", ARCH, dgrad_vec_c_default_epilogue),
    ("DGRAD_VEC_C_SCALAR_STORE", ARCH, dgrad_vec_c_scalar_store),
    ("DGRAD_WAVE_SIZE_MISMATCH", ARCH, wave_size_mismatch),
    ("DGRAD_MMA_SHAPE", ARCH, mma_shape),
    ("DGRAD_KOUTER_ARCH", ARCH, kouter_arch),
    ("DGRAD_VECTOR_RANGE", ARCH, vector_range),
    ("DGRAD_VECTOR_DIVISIBILITY", ARCH, grad_vector_divisibility),
    ("DGRAD_VEC_C_RANGE", ARCH, vec_c_range),
    ("DGRAD_VEC_C_DIVISIBILITY", ARCH, vec_c_divisibility),
    ("DGRAD_VECTOR_POW2", ARCH, vector_pow2),
    ("DGRAD_SPLIT_K_VECTOR_A", ARCH, dgrad_split_k_vector_a),
    ("DGRAD_LDS_BUDGET", ARCH, lds_budget_check),
    ("DGRAD_WMMA_SUBSET", ARCH, dgrad_wmma_subset),
    ("DGRAD_LDS_XOR_UNSUPPORTED", SPEC, lds_xor_unsupported),
    ("DGRAD_FIELD_UNUSED", SPEC, dgrad_field_unused),
    ("CONV_INT32_RANGE", SPEC, int32_range),
    ("CONV_KERNEL_SIZE", BUILD, kernel_size),
)

FWD_RULES: tuple[tuple[str, str, Check], ...] = (
    ("FWD_UNKNOWN_OPTION", SPEC, fwd_wgrad_unknown_option),
    ("FWD_TILE_DIVISIBILITY", SPEC, tile_divisibility),
    ("FWD_BLOCK_SIZE", SPEC, block_size_spec),
    ("FWD_VEC_C_DEFAULT_EPILOGUE", ARCH, vec_c_default_epilogue),
    ("FWD_WAVE_SIZE_MISMATCH", ARCH, wave_size_mismatch),
    ("FWD_ASYNC_LAYOUT", SPEC, async_layout),
    ("FWD_ASYNC_PAD", SPEC, async_pad),
    ("FWD_ASYNC_EXPLICIT_VECTOR", ARCH, async_explicit_vector),
    ("FWD_VECTOR_RANGE", ARCH, vector_range),
    ("FWD_VECTOR_DIVISIBILITY", ARCH, fwd_vector_divisibility),
    ("FWD_VEC_C_RANGE", ARCH, vec_c_range),
    ("FWD_VEC_C_DIVISIBILITY", ARCH, vec_c_divisibility),
    ("FWD_VECTOR_POW2", ARCH, vector_pow2),
    ("FWD_BASIC_ASYNC", SPEC, basic_async),
    ("FWD_UNROLL_EXCLUSIVE", SPEC, unroll_exclusive),
    ("FWD_UNROLL_CAP", SPEC, unroll_cap),
    ("FWD_MMA_SHAPE", ARCH, mma_shape),
    ("FWD_LDS_BUDGET", ARCH, lds_budget_check),
    ("FWD_WMMA_SUBSET", ARCH, fwd_wgrad_wmma_subset),
    ("FWD_ACC_CLAMP_ORDER", SPEC, acc_clamp_order),
    ("FWD_LDS_XOR_UNSUPPORTED", SPEC, lds_xor_unsupported),
    ("FWD_FIELD_UNUSED", SPEC, field_unused),
    ("CONV_INT32_RANGE", SPEC, int32_range),
    ("CONV_ASYNC_NO_DWORDS", BUILD, async_no_dwords),
    ("CONV_ASYNC_ARCH_DWORDS", BUILD, async_arch_dwords),
    ("CONV_KERNEL_SIZE", BUILD, kernel_size),
)

RULES = {"wgrad": WGRAD_RULES, "dgrad": DGRAD_RULES, "fwd": FWD_RULES}


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
