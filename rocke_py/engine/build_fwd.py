"""Forward convolution: A = X (NHWC, im2col), B = W (KYXC), D = Y (NHWK)
(docs/reference/conv-semantics.md §11).

Twin of rocke_c/src/build_fwd.c."""

from __future__ import annotations

from . import build_common as bc
from .build_common import Kc, Operands
from .ir import Value

NAMES = ("X", "W", "Y")


def add_params(kc: Kc) -> None:
    bc.add_tensor_params(kc, NAMES, atomic_d=False)


def block_decode(kc: Kc) -> None:
    bc.grid_tiles(kc)
    if kc.problem.groups > 1:
        kc.group = kc.b.block_id(2)
    kc.k_lo = bc.c(kc, 0)
    kc.k_hi = bc.c(kc, kc.plan.gemm[2])


def desc_a(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    gemm_m, _, gemm_k = kc.plan.gemm
    return bc.input_offset(kc, mn, k, gemm_m, gemm_k)


def desc_b(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    """W at (k_out = mn, k = (y, x, c)): row k_out of the group's filters."""
    p, gemm_k = kc.problem, kc.plan.gemm[2]
    valid = bc.both_below(kc, mn, p.kpg, k, gemm_k)
    return bc.group_row_offset(kc, mn, p.kpg, gemm_k, k), valid


def desc_d(kc: Kc, m: Value, n: Value) -> tuple[Value, Value]:
    """Y (NHWK) at (m = (n, ho, wo), n = k_out)."""
    p = kc.problem
    valid = bc.both_below(kc, m, kc.plan.gemm[0], n, p.kpg)
    return bc.row_offset(kc, m, p.K, p.kpg, n), valid


def operands(kc: Kc) -> Operands:
    """Both tiles M-outer, loaded along k."""
    return bc.make_operands(kc, "col", "col", desc_a, desc_b)
