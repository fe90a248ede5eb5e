"""Mode `spec`: the normalised spec after defaults and deductions, one `key = value` per line
in a fixed order, with what follows from it (GEMM view, vector sizes, LDS, kernel name), all
read from the plan.

Twin of rocke_c/src/print_spec.c; docs/engine-contract.md §7."""

from __future__ import annotations

from typing import Union

from .plan import Plan
from .problem import PROBLEM_KEYS, SUB_GEMM_FIELDS, ConvProblem
from .schema import TILE_KEYS
from .spec import ConvSpec

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

    def put_all(self, keys: tuple[str, ...], record: object) -> None:
        """One line per key, its value the record's attribute of that name."""
        for key in keys:
            self.put(key, getattr(record, key))

    def text(self) -> str:
        return "".join(self.out)


def print_problem(lines: Lines, p: ConvProblem, short: str) -> None:
    lines.put_all(PROBLEM_KEYS, p)
    lines.put("Ho", p.Ho)
    lines.put("Wo", p.Wo)
    lines.put("Do", p.Do if p.is_3d else None)
    lines.put("cpg", p.cpg)
    lines.put("kpg", p.kpg)
    lines.put("is_3d", p.is_3d)
    lines.put("is_pointwise", p.is_pointwise)
    lines.put("short", short)


def print_fields(lines: Lines, s: ConvSpec, tag: str) -> None:
    lines.put_all(("name", "dtype_a", "dtype_b", "dtype_d"), s)
    lines.put("dtype_acc", "fp32")
    lines.put_all(TILE_KEYS, s)
    lines.put("block_size", s.block_size)
    lines.put_all(("pipeline", "epilogue", "async_dma", "unroll_k", "lds_k_pad"), s)
    lines.put("lds_layout", f"pad{s.lds_layout_pad}_xor{s.lds_layout_xor}" if s.has_lds_layout else None)
    if s.family != "fwd":
        lines.put_all(("lds_k_outer", "lds_k_outer_requested"), s)
    lines.put_all(("vector_size_a", "vector_size_b", "vector_size_c", "chiplet_swizzle", "chiplet_wgm"), s)
    lines.put_all(("chiplet_num_xcds", "chiplet_chunk_size", "waves_per_eu", "bias", "scale", "relu"), s)
    lines.put_all(("clamp_min", "clamp_max"), s)
    lines.put("acc_epilogue", tag or "identity")
    if s.family != "fwd":
        lines.put_all(("split_k", "split_k_requested"), s)
    if s.family == "wgrad":
        lines.put_all(("two_stage", "force_deterministic", "group_merge"), s)
    if s.family == "dgrad":
        lines.put_all(("num_load_waves", "cshuffle_no_alias"), s)


def print_derived(lines: Lines, plan: Plan) -> None:
    s = plan.spec
    for key, value in zip(("gemm_m", "gemm_n", "gemm_k"), plan.gemm):
        lines.put(key, value)
    for key, value in zip(("default_vec_a", "default_vec_b", "default_vec_c"), plan.default_vectors):
        lines.put(key, value)
    if s.family == "wgrad":
        lines.put("k_padded", plan.k_padded)
        lines.put("ks", "runtime" if plan.ks is None else plan.ks)
    lines.put("a_frag_len", plan.frag_lens[0])
    lines.put("b_frag_len", plan.frag_lens[1])
    lines.put("lds_pad", plan.lds_pad)
    lines.put("lds_a_shape", f"{plan.lds_a.rows}x{plan.lds_a.cols}")
    lines.put("lds_b_shape", f"{plan.lds_b.rows}x{plan.lds_b.cols}")
    lines.put("lds_double_buffer", s.double_buffer)
    lines.put("lds_bytes", plan.lds_bytes)
    lines.put("lds_capacity", plan.target.lds_capacity)
    if plan.async_dwords is not None:
        lines.put("async_dwords_a", plan.async_dwords[0])
        lines.put("async_dwords_b", plan.async_dwords[1])
    if s.family == "dgrad":
        lines.put("num_sub_gemms", len(plan.sub_gemms))
        for index, record in enumerate(plan.sub_gemms):
            fields = " ".join(f"{k}={v}" for k, v in zip(SUB_GEMM_FIELDS, record))
            lines.put(f"sub_gemm.{index}", fields)


def print_spec(plan: Plan) -> str:
    s = plan.spec
    lines = Lines()
    lines.out.append("rocke.spec v1\n")
    lines.put("family", s.family)
    lines.put("arch", s.arch)
    print_problem(lines, plan.problem, plan.short)
    print_fields(lines, s, plan.acc_tag)
    print_derived(lines, plan)
    lines.put("kernel_name", plan.kernel_name)
    return lines.text()
