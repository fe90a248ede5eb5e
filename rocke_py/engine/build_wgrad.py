"""Backward weight: A = dY (NHWK), B = X (NHWC, im2col with m := k_wg), D = dW (K[Z]YXC),
reduction over N*[Do*]Ho*Wo, split-K over blockIdx.z
(docs/reference/conv-semantics.md §2.2, §10.1).

Twin of rocke_c/src/build_wgrad.c."""

from __future__ import annotations

from . import build_common as bc
from .build_common import Kc, Operands
from .ir import Value

NAMES = ("dY", "X", "dW")


def add_params(kc: Kc) -> None:
    s, p = kc.spec, kc.problem
    bc.add_tensor_params(kc, NAMES, atomic_d=s.atomic_split_k)
    if s.split_k == 0:
        kc.params["ks"] = kc.b.param("ks", "i32")
        if p.groups > 1:
            kc.params["ks_count"] = kc.b.param("ks_count", "i32")


def block_decode(kc: Kc) -> None:
    """Tiles from x/y; z is the group (split_k = 1) or group*split_k + slice."""
    b, s, p = kc.b, kc.spec, kc.problem
    bc.grid_tiles(kc)
    bz = b.block_id(2)
    if s.split_k == 1:
        if p.groups > 1:
            kc.group = bz
        kc.k_lo = bc.c(kc, 0)
        kc.k_hi = bc.c(kc, kc.plan.gemm[2])
        return
    if s.split_k > 1:
        ks = bc.c(kc, kc.plan.ks)
        count = bc.c(kc, s.split_k)
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
    valid = bc.both_below(kc, mn, p.kpg, k, kc.plan.gemm[2])
    return bc.row_offset(kc, k, p.K, p.kpg, mn), valid


def desc_b(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    """X at (n_wg = mn, k_wg = k): the forward A descriptor with m := k_wg, k := n_wg."""
    p = kc.problem
    _, wg_n, wg_k = kc.plan.gemm
    if p.is_pointwise:
        valid = bc.both_below(kc, mn, wg_n, k, wg_k)
        return bc.row_offset(kc, k, p.C, p.cpg, mn), valid
    return bc.input_offset(kc, k, mn, wg_k, wg_n)


def desc_d(kc: Kc, m: Value, n: Value) -> tuple[Value, Value]:
    """dW at (k_out = m, n_wg = n), packed per group: row (group*kpg + k_out) of wg_N."""
    p = kc.problem
    wg_m, wg_n, _ = kc.plan.gemm
    valid = bc.both_below(kc, m, wg_m, n, wg_n)
    return bc.group_row_offset(kc, m, p.kpg, wg_n, n), valid


def operands(kc: Kc) -> Operands:
    """Both tiles loaded along mn, M-outer or (lds_k_outer) K-outer."""
    return bc.make_operands(kc, "row", "row", desc_a, desc_b)
