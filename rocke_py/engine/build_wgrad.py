"""Backward weight: A = dY (NHWK), B = X (NHWC, im2col with m := k_wg), D = dW (K[Z]YXC),
reduction over N*[Do*]Ho*Wo, split-K over blockIdx.z
(docs/reference/conv-semantics.md §2.2, §10.1).

Twin of rocke_c/src/build_wgrad.c."""

from __future__ import annotations

from .build_common import (
    Kc,
    Operands,
    add_opt,
    add_tensor_params,
    all_of,
    below,
    c,
    grid_tiles,
    group_base,
    input_offset,
    k_outer_tile,
    load_vectors,
    m_outer_tile,
    mul_c,
)
from .ir import Value
from .problem import wgrad_gemm
from .spec import wg_k_padded

NAMES = ("dY", "X", "dW")


def add_params(kc: Kc) -> None:
    s, p = kc.spec, kc.problem
    add_tensor_params(kc, NAMES, atomic_d=s.atomic_split_k)
    if s.split_k == 0:
        kc.params["ks"] = kc.b.param("ks", "i32")
        if p.groups > 1:
            kc.params["ks_count"] = kc.b.param("ks_count", "i32")


def block_decode(kc: Kc) -> None:
    """Tiles from x/y; z is the group (split_k = 1) or group*split_k + slice."""
    b, s, p = kc.b, kc.spec, kc.problem
    wg_m, wg_n, wg_k = wgrad_gemm(p)
    grid_tiles(kc, wg_m, wg_n)
    bz = b.block_id(2)
    if s.split_k == 1:
        if p.groups > 1:
            kc.group = bz
        kc.k_lo = c(kc, 0)
        kc.k_hi = c(kc, wg_k)
        return
    if s.split_k > 1:
        ks = c(kc, wg_k_padded(s, p, s.split_k) // s.split_k)
        count = c(kc, s.split_k)
    else:
        ks = kc.params["ks"]
        count = kc.params["ks_count"] if p.groups > 1 else None
    if p.groups > 1 and count is not None:
        kc.group = b.div(bz, count)
        slice_ = b.mod(bz, count)
    else:
        slice_ = bz
    lo = b.mul(slice_, ks)
    hi = b.add(lo, ks)
    kc.k_lo = b.readfirstlane(lo)
    kc.k_hi = b.readfirstlane(hi)


def desc_a(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    """dY (NHWK) at (k_out = mn, k_wg = k): k_wg runs over the contiguous (n, [do,] ho, wo)."""
    p = kc.problem
    wg_k = wgrad_gemm(p)[2]
    valid = all_of(kc, [below(kc, mn, p.kpg), below(kc, k, wg_k)])
    row = mul_c(kc, k, p.K)
    grouped = add_opt(kc, row, group_base(kc, p.kpg))
    off = kc.b.add(grouped, mn)
    return off, valid


def desc_b(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    """X at (n_wg = mn, k_wg = k): the forward A descriptor with m := k_wg, k := n_wg."""
    p = kc.problem
    if p.is_pointwise:
        wg_n, wg_k = wgrad_gemm(p)[1:]
        valid = all_of(kc, [below(kc, mn, wg_n), below(kc, k, wg_k)])
        row = mul_c(kc, k, p.C)
        grouped = add_opt(kc, row, group_base(kc, p.cpg))
        off = kc.b.add(grouped, mn)
        return off, valid
    return input_offset(kc, k, mn)


def desc_d(kc: Kc, m: Value, n: Value) -> tuple[Value, Value]:
    """dW at (k_out = m, n_wg = n), packed per group: row (group*kpg + k_out) of wg_N."""
    p = kc.problem
    wg_m, wg_n = wgrad_gemm(p)[:2]
    valid = all_of(kc, [below(kc, m, wg_m), below(kc, n, wg_n)])
    k_out = add_opt(kc, m, group_base(kc, p.kpg))
    row = mul_c(kc, k_out, wg_n)
    off = kc.b.add(row, n)
    return off, valid


def operands(kc: Kc) -> Operands:
    s = kc.spec
    vec_a, vec_b, _ = load_vectors(kc)
    if s.lds_k_outer:
        ta = k_outer_tile(kc, "a", s.dtype_a, s.tile_m, vec_a)
        tb = k_outer_tile(kc, "b", s.dtype_b, s.tile_n, vec_b)
    else:
        ta = m_outer_tile(kc, "a", s.dtype_a, s.tile_m, vec_a, "row")
        tb = m_outer_tile(kc, "b", s.dtype_b, s.tile_n, vec_b, "row")
    return Operands(ta, tb, desc_a, desc_b, kc.m0, kc.n0)
