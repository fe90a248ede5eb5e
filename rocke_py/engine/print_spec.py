"""Mode `spec`: the normalised spec after defaults and deductions, one `key = value` per line
in a fixed order, with what follows from it (GEMM view, vector sizes, LDS, kernel name).

Twin of rocke_c/src/print_spec.c; docs/engine-contract.md §7."""

from __future__ import annotations

from typing import Optional, Union

from .arch import Target
from .problem import SUB_GEMM_FIELDS, ConvProblem, dgrad_sub_gemms
from .result import Rejected
from .spec import (
    ConvSpec,
    acc_tag,
    async_tiles,
    default_vector_sizes,
    effective_lds_pad,
    frag_lens,
    kernel_name,
    lds_budget,
    lds_shapes,
    spec_gemm,
    tile_dwords,
    wg_k_padded,
)

Value = Union[int, bool, str, None]


def fmt(value: Value) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Lines:
    """A growing list of `key = value` lines (joined once at the end)."""

    def __init__(self) -> None:
        self.out: list[str] = []

    def put(self, key: str, value: Value) -> None:
        self.out.append(f"{key} = {fmt(value)}\n")

    def text(self) -> str:
        return "".join(self.out)


def print_problem(lines: Lines, p: ConvProblem) -> None:
    for key in (
        "N",
        "Hi",
        "Wi",
        "C",
        "K",
        "Y",
        "X",
        "sH",
        "sW",
        "pH",
        "pW",
        "dH",
        "dW",
        "groups",
        "Di",
        "Z",
        "sD",
        "pD",
        "dD",
    ):
        lines.put(key, getattr(p, key))
    lines.put("Ho", p.Ho)
    lines.put("Wo", p.Wo)
    lines.put("Do", p.Do if p.is_3d else None)
    lines.put("cpg", p.cpg)
    lines.put("kpg", p.kpg)
    lines.put("is_3d", p.is_3d)
    lines.put("is_pointwise", p.is_pointwise)
    lines.put("short", p.short())


def print_fields(lines: Lines, s: ConvSpec) -> None:
    for key in ("name", "dtype_a", "dtype_b", "dtype_d"):
        lines.put(key, getattr(s, key))
    lines.put("dtype_acc", "fp32")
    for key in (
        "tile_m",
        "tile_n",
        "tile_k",
        "warp_m",
        "warp_n",
        "warp_tile_m",
        "warp_tile_n",
        "warp_tile_k",
        "wave_size",
    ):
        lines.put(key, getattr(s, key))
    lines.put("block_size", s.block_size)
    for key in ("pipeline", "epilogue", "async_dma", "unroll_k", "lds_k_pad"):
        lines.put(key, getattr(s, key))
    lines.put("lds_layout", f"pad{s.lds_layout_pad}_xor{s.lds_layout_xor}" if s.has_lds_layout else None)
    if s.family != "fwd":
        lines.put("lds_k_outer", s.lds_k_outer)
        lines.put("lds_k_outer_requested", s.lds_k_outer_requested)
    for key in (
        "vector_size_a",
        "vector_size_b",
        "vector_size_c",
        "chiplet_swizzle",
        "chiplet_wgm",
        "chiplet_num_xcds",
        "chiplet_chunk_size",
        "waves_per_eu",
        "bias",
        "scale",
        "relu",
        "clamp_min",
        "clamp_max",
    ):
        lines.put(key, getattr(s, key))
    lines.put("acc_epilogue", acc_tag(s) or "identity")
    if s.family != "fwd":
        lines.put("split_k", s.split_k)
        lines.put("split_k_requested", s.split_k_requested)
    if s.family == "wgrad":
        for key in ("two_stage", "force_deterministic", "group_merge"):
            lines.put(key, getattr(s, key))
    if s.family == "dgrad":
        lines.put("num_load_waves", s.num_load_waves)
        lines.put("cshuffle_no_alias", s.cshuffle_no_alias)


def print_derived(lines: Lines, s: ConvSpec, p: ConvProblem, t: Target) -> Optional[Rejected]:
    gemm_m, gemm_n, gemm_k = spec_gemm(s, p)
    lines.put("gemm_m", gemm_m)
    lines.put("gemm_n", gemm_n)
    lines.put("gemm_k", gemm_k)
    vec_a, vec_b, vec_c = default_vector_sizes(s, p)
    lines.put("default_vec_a", vec_a)
    lines.put("default_vec_b", vec_b)
    lines.put("default_vec_c", vec_c)
    if s.family == "wgrad":
        padded = wg_k_padded(s, p, max(s.split_k, 1))
        lines.put("k_padded", padded)
        lines.put("ks", padded // s.split_k if s.split_k > 0 else "runtime")
    a_len, b_len = frag_lens(s, t)
    lines.put("a_frag_len", a_len)
    lines.put("b_frag_len", b_len)
    (a_rows, a_cols), (b_rows, b_cols) = lds_shapes(s)
    lines.put("lds_pad", effective_lds_pad(s))
    lines.put("lds_a_shape", f"{a_rows}x{a_cols}")
    lines.put("lds_b_shape", f"{b_rows}x{b_cols}")
    lines.put("lds_double_buffer", s.double_buffer)
    lines.put("lds_bytes", lds_budget(s))
    lines.put("lds_capacity", t.lds_capacity)
    if s.async_dma:
        tile_a, tile_b = async_tiles(s, p)
        lines.put("async_dwords_a", tile_dwords(s, tile_a))
        lines.put("async_dwords_b", tile_dwords(s, tile_b))
    if s.family == "dgrad":
        records = dgrad_sub_gemms(p, s.tile_m, s.tile_n, s.tile_k, s.split_k)
        if isinstance(records, Rejected):
            return records
        lines.put("num_sub_gemms", len(records))
        for index, record in enumerate(records):
            fields = " ".join(f"{k}={v}" for k, v in zip(SUB_GEMM_FIELDS, record))
            lines.put(f"sub_gemm.{index}", fields)
    return None


def print_spec(s: ConvSpec, p: ConvProblem, t: Target) -> Union[str, Rejected]:
    lines = Lines()
    lines.out.append("rocke.spec v1\n")
    lines.put("family", s.family)
    lines.put("arch", s.arch)
    print_problem(lines, p)
    print_fields(lines, s)
    bad = print_derived(lines, s, p, t)
    if bad:
        return bad
    lines.put("kernel_name", kernel_name(s, p))
    return lines.text()
