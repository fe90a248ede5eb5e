"""Stage plan: every fact the later stages read, derived once from a validated spec.

Twin of rocke_c/src/plan.c (docs/engine-contract.md §1). It runs after validation; mode
`spec`'s print and the builders read the plan and never go back to spec.py or problem.py for
a derived size, so data flows forward: spec -> plan -> text or kernel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from .arch import Target
from .limits import MAX_KERNEL_OPS, kernel_ops_bound
from .problem import ConvProblem, dgrad_sub_gemms
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
    lds_k_outer_sides,
    lds_shapes,
    load_widths,
    spec_gemm,
    tile_dwords,
    unrolled_k_iters,
    wg_k_padded,
)


@dataclass(frozen=True)
class LdsTile:
    """One operand's LDS tile: (rows, cols), stored T[k][mn] when k_outer, else T[mn][k]."""

    rows: int
    cols: int
    k_outer: bool


@dataclass(frozen=True)
class Plan:
    spec: ConvSpec
    problem: ConvProblem
    target: Target
    short: str  # problem.short()
    acc_tag: str  # the accumulator epilogue's name part ("" for the identity)
    kernel_name: str
    gemm: tuple[int, int, int]  # (M, N, K) of the direction's GEMM
    default_vectors: tuple[int, int, int]  # the reference's default widths of A, B and C
    vectors: tuple[int, int, int]  # the load widths of A and B, the cshuffle store width (caps applied)
    k_padded: Optional[int]  # wgrad: the K extent rounded up to tile_k*split_k
    ks: Optional[int]  # wgrad: one slice's K width; None when it is a runtime argument (split_k = 0)
    frag_lens: tuple[int, int]
    lds_pad: int
    lds_a: LdsTile
    lds_b: LdsTile
    lds_bytes: int
    async_dwords: Optional[tuple[Optional[int], Optional[int]]]  # async_dma: each tile's dwords
    sub_gemms: tuple[tuple[int, ...], ...]  # dgrad: the kept tilde records; () otherwise
    k_iters: int  # the K steps an unrolled loop runs (unroll_k, basic, async_dma)
    op_limit: int  # the builder's op limit: the kernel's op bound, at most MAX_KERNEL_OPS


def wgrad_slices(spec: ConvSpec, problem: ConvProblem) -> tuple[Optional[int], Optional[int]]:
    """(k_padded, ks) of a wgrad spec; (None, None) for the other families."""
    if spec.family != "wgrad":
        return None, None
    padded = wg_k_padded(spec, problem, max(spec.split_k, 1))
    return padded, (padded // spec.split_k if spec.split_k > 0 else None)


def make_plan(spec: ConvSpec, problem: ConvProblem, target: Target) -> Union[Plan, Rejected]:
    """The plan of a validated spec; a dgrad record outside int32 is its one rejection."""
    sub_gemms: tuple[tuple[int, ...], ...] = ()
    if spec.family == "dgrad":
        records = dgrad_sub_gemms(problem, spec.tile_m, spec.tile_n, spec.tile_k, spec.split_k)
        if isinstance(records, Rejected):
            return records
        sub_gemms = records
    short = problem.short()
    tag = acc_tag(spec)
    (a_rows, a_cols), (b_rows, b_cols) = lds_shapes(spec)
    a_outer, b_outer = lds_k_outer_sides(spec)
    async_dwords = None
    if spec.async_dma:
        tile_a, tile_b = async_tiles(spec, problem)
        async_dwords = (tile_dwords(spec, tile_a), tile_dwords(spec, tile_b))
    k_padded, ks = wgrad_slices(spec, problem)
    return Plan(
        spec=spec,
        problem=problem,
        target=target,
        short=short,
        acc_tag=tag,
        kernel_name=kernel_name(spec, short, tag),
        gemm=spec_gemm(spec, problem),
        default_vectors=default_vector_sizes(spec, problem),
        vectors=load_widths(spec, problem),
        k_padded=k_padded,
        ks=ks,
        frag_lens=frag_lens(spec, target),
        lds_pad=effective_lds_pad(spec),
        lds_a=LdsTile(a_rows, a_cols, a_outer),
        lds_b=LdsTile(b_rows, b_cols, b_outer),
        lds_bytes=lds_budget(spec),
        async_dwords=async_dwords,
        sub_gemms=sub_gemms,
        k_iters=unrolled_k_iters(spec, problem),
        op_limit=min(kernel_ops_bound(spec, problem, target).total, MAX_KERNEL_OPS),
    )
