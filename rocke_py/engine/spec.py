"""The conv spec: defaults, data types, deductions, and what follows from a spec
(vector sizes, LDS layout and budget, async chunking, kernel name).

Twin of rocke_c/src/spec.c
(docs/reference/conv-semantics.md §1.3, §1.4, §3, §5, §6, §8, §9, §10)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Optional

from .arch import LDS_K_OUTER_ARCH_WAVE, Target, frag_len
from .problem import ConvProblem, ceildiv, dgrad_gemm, fwd_gemm, roundup, wgrad_gemm
from .result import Rejected

SIXTEEN_BIT = ("fp16", "bf16")
KOUTER_PAD = 8
MAX_UNROLLED_K_ITERS = 128


@dataclass(frozen=True)
class ConvSpec:
    """A spec with every field set. No defaults here: build_spec below is the one table of them,
    as rk_spec_build_spec is in C. Its derived values are computed once per spec (as in
    ConvProblem)."""

    family: str
    arch: str
    name: str
    dtype_a: str
    dtype_b: str
    dtype_d: str
    tile_m: int
    tile_n: int
    tile_k: int
    warp_m: int
    warp_n: int
    warp_tile_m: int
    warp_tile_n: int
    warp_tile_k: int
    wave_size: int
    pipeline: str
    epilogue: str
    async_dma: bool
    unroll_k: bool
    lds_k_pad: Optional[int]
    lds_layout_pad: Optional[int]  # lds_layout is set iff this is not None
    lds_layout_xor: int
    vector_size_a: Optional[int]
    vector_size_b: Optional[int]
    vector_size_c: Optional[int]
    chiplet_swizzle: bool
    chiplet_wgm: int
    chiplet_num_xcds: int
    chiplet_chunk_size: int
    waves_per_eu: Optional[int]
    bias: int
    scale: int
    relu: bool
    clamp_min: Optional[int]
    clamp_max: Optional[int]
    lds_k_outer: bool
    lds_k_outer_requested: str  # "true", "false" or "auto", as the config said
    split_k: int
    split_k_requested: int
    two_stage: bool
    force_deterministic: bool
    group_merge: int
    num_load_waves: int
    cshuffle_no_alias: bool

    @cached_property
    def block_size(self) -> int:
        return self.warp_m * self.warp_n * self.wave_size

    @cached_property
    def has_lds_layout(self) -> bool:
        return self.lds_layout_pad is not None

    @cached_property
    def atomic_split_k(self) -> bool:
        return self.split_k == 0 or self.split_k > 1

    @cached_property
    def double_buffer(self) -> bool:
        return self.async_dma or (self.unroll_k and self.pipeline != "compv4")


# ---- data types (conv-semantics §1.3) ----


def normalise_dtype(name: str) -> str:
    return "fp16" if name == "f16" else name


def echo_word(value: str) -> bool:
    """A user string is echoed in a message only when it is 1-16 ASCII letters, digits or '_'."""
    return 1 <= len(value) <= 16 and all(c.isascii() and (c.isalnum() or c == "_") for c in value)


def check_dtypes(values: dict) -> Optional[Rejected]:
    for key in ("dtype_a", "dtype_b", "dtype_d"):
        value = values.get(key, "fp16")
        if value not in ("fp16", "f16", "bf16", "fp32"):
            what = f"{key} = '{value}'" if echo_word(value) else key
            return Rejected("CONV_DTYPE_UNSUPPORTED", f"{what} is not fp16, f16, bf16 or fp32")
    return None


# ---- defaults (conv-semantics §3.1, §11) ----


def build_spec(family: str, arch: str, values: dict) -> ConvSpec:
    """values: the present [spec] keys, schema-checked for this family."""
    outer = values.get("lds_k_outer", False)
    requested = "auto" if outer == "auto" else ("true" if outer else "false")
    layout_set = "lds_layout_pad" in values or "lds_layout_xor" in values
    return ConvSpec(
        family=family,
        arch=arch,
        name=values.get("name", f"conv_igemm_{family}"),
        dtype_a=normalise_dtype(values.get("dtype_a", "fp16")),
        dtype_b=normalise_dtype(values.get("dtype_b", "fp16")),
        dtype_d=normalise_dtype(values.get("dtype_d", "fp16")),
        tile_m=values.get("tile_m", 64),
        tile_n=values.get("tile_n", 64),
        tile_k=values.get("tile_k", 128 if family == "fwd" else 64),
        warp_m=values.get("warp_m", 2),
        warp_n=values.get("warp_n", 2),
        warp_tile_m=values.get("warp_tile_m", 32),
        warp_tile_n=values.get("warp_tile_n", 32),
        warp_tile_k=values.get("warp_tile_k", 16),
        wave_size=values.get("wave_size", 64),
        pipeline=values.get("pipeline", "mem"),
        epilogue=values.get("epilogue", "default"),
        async_dma=values.get("async_dma", False),
        unroll_k=values.get("unroll_k", False),
        lds_k_pad=values.get("lds_k_pad"),
        lds_layout_pad=values.get("lds_layout_pad", 0) if layout_set else None,
        lds_layout_xor=values.get("lds_layout_xor", 0),
        vector_size_a=values.get("vector_size_a"),
        vector_size_b=values.get("vector_size_b"),
        vector_size_c=values.get("vector_size_c"),
        chiplet_swizzle=values.get("chiplet_swizzle", False),
        chiplet_wgm=values.get("chiplet_wgm", 8),
        chiplet_num_xcds=values.get("chiplet_num_xcds", 8),
        chiplet_chunk_size=values.get("chiplet_chunk_size", 64),
        waves_per_eu=values.get("waves_per_eu"),
        bias=values.get("bias", 0),
        scale=values.get("scale", 1),
        relu=values.get("relu", False),
        clamp_min=values.get("clamp_min"),
        clamp_max=values.get("clamp_max"),
        lds_k_outer=outer is True,
        lds_k_outer_requested=requested,
        split_k=values.get("split_k", 1),
        split_k_requested=values.get("split_k", 1),
        two_stage=values.get("two_stage", False),
        force_deterministic=values.get("force_deterministic", False),
        group_merge=values.get("group_merge", 1),
        num_load_waves=values.get("num_load_waves", 4),
        cshuffle_no_alias=values.get("cshuffle_no_alias", False),
    )


# ---- GEMM of the spec's direction ----


def spec_gemm(spec: ConvSpec, p: ConvProblem) -> tuple[int, int, int]:
    if spec.family == "wgrad":
        return wgrad_gemm(p)
    if spec.family == "dgrad":
        return dgrad_gemm(p)
    return fwd_gemm(p)


# ---- deductions (conv-semantics §4.1 step 2, §5, §10) ----


def auto_split_k(spec: ConvSpec, p: ConvProblem, target: Target) -> int:
    """The CK formula of conv-semantics §10.1; wgrad only (dgrad's auto resolves to 1)."""
    wg_m, wg_n, wg_k = wgrad_gemm(p)
    base_grid = ceildiv(wg_m, spec.tile_m) * ceildiv(wg_n, spec.tile_n)
    return max(1, min(2 * target.num_cus // base_grid, wg_k))


def default_lds_k_outer_wgrad(
    arch: str, dtype_a: str, dtype_b: str, warp_tile_m: int, warp_tile_n: int, wave_size: int = 64
) -> bool:
    if LDS_K_OUTER_ARCH_WAVE.get(arch) != wave_size:
        return False
    if dtype_a not in SIXTEEN_BIT or dtype_b not in SIXTEEN_BIT:
        return False
    if wave_size == 32:
        return warp_tile_m == 16 and warp_tile_n == 16
    return warp_tile_m in (16, 32) and warp_tile_n in (16, 32)


def default_lds_k_outer_dgrad(
    arch: str, dtype_b: str, warp_tile_n: int, cpg: int, wave_size: int = 64, pipeline: str = "mem"
) -> bool:
    if LDS_K_OUTER_ARCH_WAVE.get(arch) != wave_size:
        return False
    if pipeline == "wavelet" or dtype_b not in SIXTEEN_BIT:
        return False
    if wave_size == 32:
        edge_ok = warp_tile_n == 16
    else:
        edge_ok = warp_tile_n in (16, 32)
    return edge_ok and cpg % 2 == 0


def deduce(spec: ConvSpec, p: ConvProblem, target: Target) -> ConvSpec:
    if spec.family == "fwd":
        return spec
    split_k = spec.split_k
    if split_k == -1:
        split_k = auto_split_k(spec, p, target) if spec.family == "wgrad" else 1
    outer = spec.lds_k_outer
    if spec.lds_k_outer_requested == "auto":
        if spec.family == "wgrad":
            outer = default_lds_k_outer_wgrad(
                spec.arch, spec.dtype_a, spec.dtype_b, spec.warp_tile_m, spec.warp_tile_n, spec.wave_size
            )
        else:
            outer = default_lds_k_outer_dgrad(
                spec.arch, spec.dtype_b, spec.warp_tile_n, p.cpg, spec.wave_size, spec.pipeline
            )
    two_stage = spec.two_stage or (spec.force_deterministic and split_k > 1)
    return replace(spec, split_k=split_k, lds_k_outer=outer, two_stage=two_stage)


# ---- vector sizes (conv-semantics §3.3, §11) ----


def widest_vector(n: int, dtype: str) -> int:
    for width in (4, 2, 1) if dtype == "fp32" else (8, 4, 2, 1):
        if n % width == 0:
            return width
    return 1


def default_vector_sizes(spec: ConvSpec, p: ConvProblem) -> tuple[int, int, int]:
    if spec.family == "wgrad":
        vec_c = widest_vector(p.cpg, spec.dtype_d) if spec.split_k == 1 else 1
        return widest_vector(p.kpg, spec.dtype_a), widest_vector(p.cpg, spec.dtype_a), vec_c
    if spec.family == "dgrad":
        return (
            widest_vector(p.kpg, spec.dtype_a),
            widest_vector(p.cpg, spec.dtype_a),
            widest_vector(p.cpg, spec.dtype_a),
        )
    return (widest_vector(p.cpg, spec.dtype_a), widest_vector(p.cpg, spec.dtype_a), widest_vector(p.kpg, spec.dtype_a))


def load_widths(s: ConvSpec, p: ConvProblem) -> tuple[int, int, int]:
    """The global load widths of A and B and the cshuffle store width (caps applied)."""
    vec_a, vec_b, vec_c = default_vector_sizes(s, p)
    if s.family == "wgrad":
        vec_c = widest_vector(p.cpg, s.dtype_d)  # cshuffle stores with split_k = 1 widths
    else:
        vec_c = min(vec_c, 16 // elem_bytes(s.dtype_d))  # one D store: at most 16 bytes
    if s.vector_size_a is not None:
        vec_a = min(vec_a, s.vector_size_a)
    if s.vector_size_b is not None:
        vec_b = min(vec_b, s.vector_size_b)
    if s.vector_size_c is not None:
        vec_c = min(vec_c, s.vector_size_c)
    if s.family == "dgrad" and s.split_k > 1:
        vec_a = 1
    return vec_a, vec_b, vec_c


def vector_cap(spec: ConvSpec) -> int:
    """The widest vector_size_a/_b (conv-semantics §4.3 WGRAD_VECTOR_RANGE): the dtype_a ladder's top."""
    return 4 if spec.dtype_a == "fp32" else 8


def vec_c_cap(spec: ConvSpec) -> int:
    """The widest vector_size_c: the top of the ladder the cshuffle store width comes from (wgrad:
    dtype_d's; fwd, dgrad: dtype_a's, and at most 16 bytes of dtype_d; docs/kernels.md §5)."""
    if spec.family == "wgrad":
        return 4 if spec.dtype_d == "fp32" else 8
    return min(vector_cap(spec), 16 // elem_bytes(spec.dtype_d))


def vec_c_run(spec: ConvSpec, p: ConvProblem) -> tuple[str, int]:
    """The stride-1 run of D a store chunk must stay inside: fwd kpg (NHWK), wgrad and dgrad cpg."""
    return ("kpg", p.kpg) if spec.family == "fwd" else ("cpg", p.cpg)


def wg_k_padded(spec: ConvSpec, p: ConvProblem, split_k: int) -> int:
    assert split_k > 0
    return roundup(wgrad_gemm(p)[2], spec.tile_k * split_k)


def unrolled_k_iters(spec: ConvSpec, p: ConvProblem) -> int:
    """K iterations of an unrolled loop (unroll_k, basic, async): capped by MAX_UNROLLED_K_ITERS."""
    if spec.family == "fwd":
        return ceildiv(fwd_gemm(p)[2], spec.tile_k)
    s = max(spec.split_k, 1)
    return ceildiv(wg_k_padded(spec, p, s) // s, spec.tile_k)


# ---- LDS layout and budget (conv-semantics §3.1, §7.2, §9.2) ----


def effective_lds_pad(spec: ConvSpec) -> int:
    if spec.has_lds_layout:
        return spec.lds_layout_pad
    if spec.lds_k_pad is not None:
        return spec.lds_k_pad
    if spec.async_dma:
        return 0
    return 8 if spec.tile_k >= 16 else 0


def m_outer_shape(spec: ConvSpec, tile_mn: int) -> tuple[int, int]:
    return tile_mn, spec.tile_k + effective_lds_pad(spec)


def k_outer_shape(spec: ConvSpec, tile_mn: int) -> tuple[int, int]:
    pad = 0 if (spec.family == "wgrad" and spec.async_dma) else KOUTER_PAD
    return spec.tile_k, tile_mn + pad


def lds_k_outer_sides(spec: ConvSpec) -> tuple[bool, bool]:
    """Whether the A and the B tile are K-outer: wgrad both, dgrad B, under lds_k_outer."""
    return spec.lds_k_outer and spec.family == "wgrad", spec.lds_k_outer and spec.family != "fwd"


def lds_shapes(spec: ConvSpec) -> tuple[tuple[int, int], tuple[int, int]]:
    """(rows, cols) of the A and B tiles."""
    a_outer, b_outer = lds_k_outer_sides(spec)
    a = k_outer_shape(spec, spec.tile_m) if a_outer else m_outer_shape(spec, spec.tile_m)
    b = k_outer_shape(spec, spec.tile_n) if b_outer else m_outer_shape(spec, spec.tile_n)
    return a, b


def lds_budget(spec: ConvSpec) -> int:
    (a_rows, a_cols), (b_rows, b_cols) = lds_shapes(spec)
    eb = 4 if spec.dtype_a == "fp32" else 2
    ab = (a_rows * a_cols + b_rows * b_cols) * eb
    if spec.double_buffer:
        ab *= 2
    cst = 0
    if spec.epilogue == "cshuffle":
        cst = spec.tile_m * spec.tile_n * (4 if spec.dtype_d == "fp32" else 2)
    if spec.family == "dgrad" and not spec.cshuffle_no_alias:
        return max(ab, cst)
    return ab + cst


def frag_lens(spec: ConvSpec, target: Target) -> tuple[int, int]:
    return (
        frag_len(target, spec.warp_tile_m, spec.warp_tile_k, spec.wave_size),
        frag_len(target, spec.warp_tile_n, spec.warp_tile_k, spec.wave_size),
    )


# ---- async chunking (conv-semantics §8) ----


@dataclass(frozen=True)
class AsyncTile:
    operand: str  # "A" or "B"
    rows: int
    cols: int
    elem_bytes: int
    contig_cols: int


def elem_bytes(dtype: str) -> int:
    return 4 if dtype == "fp32" else 2


def async_tiles(spec: ConvSpec, p: ConvProblem) -> tuple[AsyncTile, AsyncTile]:
    if spec.family == "wgrad":
        return (
            AsyncTile("A", spec.tile_k, spec.tile_m, elem_bytes(spec.dtype_a), p.kpg),
            AsyncTile("B", spec.tile_k, spec.tile_n, elem_bytes(spec.dtype_b), p.cpg),
        )
    return (
        AsyncTile("A", spec.tile_m, spec.tile_k, elem_bytes(spec.dtype_a), p.cpg),
        AsyncTile("B", spec.tile_n, spec.tile_k, elem_bytes(spec.dtype_b), p.cpg),
    )


def choose_dwords(
    rows: int, cols: int, block_size: int, elem_bytes_: int, max_dwords: int, contig_cols: Optional[int]
) -> Optional[int]:
    for dwords in (4, 3, 1):
        if dwords > max_dwords:
            continue
        elems = dwords * 4 // elem_bytes_
        if cols % elems != 0:
            continue
        if contig_cols is not None and (elems > contig_cols or contig_cols % elems != 0):
            continue
        chunks = rows * cols // elems
        if chunks < block_size or chunks % block_size != 0:
            continue
        return dwords
    return None


def tile_dwords(spec: ConvSpec, tile: AsyncTile) -> Optional[int]:
    return choose_dwords(tile.rows, tile.cols, spec.block_size, tile.elem_bytes, 4, tile.contig_cols)


# ---- names (conv-semantics §1.4, §6) ----


def format_g(value: int) -> str:
    return format(float(value), "g")


def acc_tag(spec: ConvSpec) -> str:
    parts = []
    if spec.bias != 0:
        parts.append(f"bias{format_g(spec.bias)}")
    if spec.scale != 1:
        parts.append(f"scale{format_g(spec.scale)}")
    if spec.relu:
        parts.append("relu")
    if spec.clamp_min is not None or spec.clamp_max is not None:
        lo = "-inf" if spec.clamp_min is None else format_g(spec.clamp_min)
        hi = "inf" if spec.clamp_max is None else format_g(spec.clamp_max)
        parts.append(f"clamp{lo}to{hi}")
    return "epi_" + "_".join(parts) if parts else ""


def kernel_name_join(prefix: str, parts: list[str], flags: list[tuple[str, bool]]) -> str:
    name = "_".join([prefix] + [part for part in parts if part])
    for flag, on in flags:
        if on:
            name += "_" + flag
    return name.replace("/", "_")


def kernel_name(spec: ConvSpec, short: str, tag: str) -> str:
    """short: the problem's short(); tag: acc_tag(spec)."""
    parts = [
        short,
        f"t{spec.tile_m}x{spec.tile_n}x{spec.tile_k}",
        f"w{spec.warp_m}x{spec.warp_n}",
        f"a{spec.warp_tile_m}x{spec.warp_tile_n}x{spec.warp_tile_k}",
        f"{spec.pipeline}_{spec.epilogue}",
        tag,
    ]
    pad_flag = (f"pad{spec.lds_k_pad}", spec.lds_k_pad is not None)
    if spec.family == "fwd":
        flags = [("async", spec.async_dma), pad_flag]
    else:
        spk = [(f"spk{spec.split_k}", spec.split_k > 1), ("spkauto", spec.split_k == -1)]
        flags = [("async", spec.async_dma), ("kouter", spec.lds_k_outer)]
        if spec.family == "wgrad":
            flags += [pad_flag] + spk + [("spkrt", spec.split_k == 0), ("twostage", spec.two_stage)]
        else:
            flags += spk
    return kernel_name_join(spec.name, parts, flags)
