"""Forward convolution: A = X (NHWC, im2col), B = W (KYXC), D = Y (NHWK)
(docs/reference/conv-semantics.md §11).

Twin of rocke_c/src/build_fwd.c."""

from __future__ import annotations

from .build_common import (
    Kc,
    Operands,
    TileOperand,
    add_opt,
    add_tensor_params,
    all_of,
    below,
    c,
    grid_tiles,
    group_base,
    input_offset,
    load_vectors,
    m_outer_tile,
    mul_c,
)
from .ir import Value
from .problem import fwd_gemm

NAMES = ("X", "W", "Y")


def add_params(kc: Kc) -> None:
    add_tensor_params(kc, NAMES, atomic_d=False)


def block_decode(kc: Kc) -> None:
    p = kc.problem
    gemm_m, gemm_n, gemm_k = fwd_gemm(p)
    grid_tiles(kc, gemm_m, gemm_n)
    if p.groups > 1:
        kc.group = kc.b.block_id(2)
    kc.k_lo = c(kc, 0)
    kc.k_hi = c(kc, gemm_k)


def desc_a(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    return input_offset(kc, mn, k)


def desc_b(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    """W at (k_out = mn, k = (y, x, c)): row k_out of the group's filters."""
    p = kc.problem
    gemm_k = fwd_gemm(p)[2]
    ok_n = below(kc, mn, p.kpg)
    ok_k = below(kc, k, gemm_k)
    valid = kc.b.and_(ok_n, ok_k)
    k_out = add_opt(kc, mn, group_base(kc, p.kpg))
    row = mul_c(kc, k_out, gemm_k)
    off = kc.b.add(row, k)
    return off, valid


def desc_d(kc: Kc, m: Value, n: Value) -> tuple[Value, Value]:
    """Y (NHWK) at (m = (n, ho, wo), n = k_out)."""
    p = kc.problem
    gemm_m = fwd_gemm(p)[0]
    valid = all_of(kc, [below(kc, m, gemm_m), below(kc, n, p.kpg)])
    row = mul_c(kc, m, p.K)
    grouped = add_opt(kc, row, group_base(kc, p.kpg))
    off = kc.b.add(grouped, n)
    return off, valid


def operands(kc: Kc) -> Operands:
    s = kc.spec
    vec_a, vec_b, _ = load_vectors(kc)
    ta: TileOperand = m_outer_tile(kc, "a", s.dtype_a, s.tile_m, vec_a, "col")
    tb: TileOperand = m_outer_tile(kc, "b", s.dtype_b, s.tile_n, vec_b, "col")
    return Operands(ta, tb, desc_a, desc_b, kc.m0, kc.n0)
