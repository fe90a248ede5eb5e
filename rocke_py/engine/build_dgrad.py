"""Backward data: one kernel over the tilde sub-GEMMs of
docs/reference/conv-semantics.md §2.4–§2.5. Each CTA finds its record by a binary search of
block_start; A = dY, B = W, D = dX through the record.

Twin of rocke_c/src/build_dgrad.c."""

from __future__ import annotations

from math import ceil, log2

from .build_common import (
    OOB_OFFSET,
    Kc,
    Operands,
    add_c,
    add_opt,
    add_tensor_params,
    all_of,
    below,
    below_value,
    c,
    div_c,
    group_base,
    k_outer_tile,
    load_vectors,
    m_outer_tile,
    mod_c,
    mul_c,
)
from .ir import Value, ptr
from .problem import SUB_GEMM_FIELDS, dgrad_sub_gemms
from .result import EngineFailure

NAMES = ("dY", "W", "dX")
RECORD_BYTES = 4 * len(SUB_GEMM_FIELDS)
#: The record fields the kernel reads, in record order.
USED_FIELDS = (
    "block_start",
    "num_n_tiles",
    "gemm_m",
    "gemm_k",
    "h_slice",
    "w_slice",
    "h_begin",
    "w_begin",
    "x_dot_slice",
    "a_h_coeff",
    "a_w_coeff",
    "b_y_stride",
    "b_y_offset",
    "b_x_stride",
    "b_x_offset",
    "d_h_stride",
    "d_h_offset",
    "d_w_stride",
    "d_w_offset",
    "gemm_k_padded",
)


def num_records(kc: Kc) -> int:
    s = kc.spec
    records = dgrad_sub_gemms(kc.problem, s.tile_m, s.tile_n, s.tile_k, s.split_k)
    if not isinstance(records, tuple):
        raise EngineFailure("build: the sub-GEMM records were checked in mode spec's order")
    return len(records)


def add_params(kc: Kc) -> None:
    add_tensor_params(kc, NAMES, atomic_d=kc.spec.split_k > 1)
    kc.params["sub_gemm_buf"] = kc.b.param("sub_gemm_buf", ptr("i32"), {"noalias": True, "readonly": True})
    kc.params["num_sub_gemms"] = kc.b.param("num_sub_gemms", "i32")


def search_record(kc: Kc, rsrc: Value, flat: Value, n: int) -> Value:
    """The last record whose block_start <= flat: ceil(log2(max(n, 2))) + 1 unrolled probes."""
    b = kc.b
    probes = ceil(log2(max(n, 2))) + 1
    idx = c(kc, 0)
    for probe in range(probes):
        step = 1 << (probes - 1 - probe)
        cand = add_c(kc, idx, step)
        inside = b.cmp("slt", cand, kc.params["num_sub_gemms"])
        at = mul_c(kc, cand, RECORD_BYTES)
        oob = c(kc, OOB_OFFSET)
        boff = b.select(inside, at, oob)
        start = b.buffer_load(rsrc, boff, "i32", 1)
        reached = b.cmp("sle", start, flat)
        take = b.and_(inside, reached)
        idx = b.select(take, cand, idx)
    return b.readfirstlane(idx)


def load_record(kc: Kc, rsrc: Value, idx: Value) -> None:
    b = kc.b
    base = mul_c(kc, idx, RECORD_BYTES)
    for name in USED_FIELDS:
        off = add_c(kc, base, 4 * SUB_GEMM_FIELDS.index(name))
        raw = b.buffer_load(rsrc, off, "i32", 1)
        kc.record[name] = b.readfirstlane(raw)


def block_decode(kc: Kc) -> None:
    """x: flat tile over all records; y: group; z: K slice."""
    b, s, p = kc.b, kc.spec, kc.problem
    flat = b.block_id(0)
    if p.groups > 1:
        kc.group = b.block_id(1)
    nbytes = mul_c(kc, kc.params["num_sub_gemms"], RECORD_BYTES)
    rsrc = b.make_buffer_rsrc(kc.params["sub_gemm_buf"], nbytes)
    idx = search_record(kc, rsrc, flat, num_records(kc))
    load_record(kc, rsrc, idx)
    r = kc.record
    local = b.sub(flat, r["block_start"])
    m_tile = b.div(local, r["num_n_tiles"])
    n_tile = b.mod(local, r["num_n_tiles"])
    kc.m0 = mul_c(kc, m_tile, s.tile_m)
    kc.n0 = mul_c(kc, n_tile, s.tile_n)
    if s.split_k > 1:
        slice_ = b.block_id(2)
        k_slice = div_c(kc, r["gemm_k_padded"], s.split_k)
        lo = b.mul(slice_, k_slice)
        hi = b.add(lo, k_slice)
        kc.k_lo = b.readfirstlane(lo)
        kc.k_hi = b.readfirstlane(hi)
    else:
        kc.k_lo = c(kc, 0)
        kc.k_hi = r["gemm_k"]


def split_m(kc: Kc, m: Value) -> tuple[Value, Value, Value]:
    """m -> (n, htl, wtl) over the record's h_slice x w_slice."""
    b, r = kc.b, kc.record
    hw = b.mul(r["h_slice"], r["w_slice"])
    n = b.div(m, hw)
    rest = b.mod(m, hw)
    htl = b.div(rest, r["w_slice"])
    wtl = b.mod(rest, r["w_slice"])
    return n, htl, wtl


def split_k(kc: Kc, k: Value) -> tuple[Value, Value, Value]:
    """k_sub -> (k_out, ydot, xdot), k_out innermost (conv-semantics §2.3)."""
    b, p, r = kc.b, kc.problem, kc.record
    k_out = mod_c(kc, k, p.kpg)
    yx = div_c(kc, k, p.kpg)
    ydot = b.div(yx, r["x_dot_slice"])
    xdot = b.mod(yx, r["x_dot_slice"])
    return k_out, ydot, xdot


def desc_a(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    """dY (NHWK) at (m, k_sub): ho = htl + h_begin + ydot*a_h_coeff, likewise wo."""
    b, p, r = kc.b, kc.problem, kc.record
    k_out, ydot, xdot = split_k(kc, k)
    n, htl, wtl = split_m(kc, mn)
    h0 = b.add(htl, r["h_begin"])
    hy = b.mul(ydot, r["a_h_coeff"])
    ho = b.add(h0, hy)
    w0 = b.add(wtl, r["w_begin"])
    wx = b.mul(xdot, r["a_w_coeff"])
    wo = b.add(w0, wx)
    valid = all_of(
        kc,
        [below(kc, ho, p.Ho), below(kc, wo, p.Wo), below_value(kc, mn, r["gemm_m"]), below_value(kc, k, r["gemm_k"])],
    )
    nh = mul_c(kc, n, p.Ho)
    row = b.add(nh, ho)
    rw = mul_c(kc, row, p.Wo)
    pixel = b.add(rw, wo)
    base = mul_c(kc, pixel, p.K)
    grouped = add_opt(kc, base, group_base(kc, p.kpg))
    off = b.add(grouped, k_out)
    return off, valid


def desc_b(kc: Kc, mn: Value, k: Value) -> tuple[Value, Value]:
    """W (KYXC) at (c = mn, k_sub): y = ydot*b_y_stride + b_y_offset, likewise x."""
    b, p, r = kc.b, kc.problem, kc.record
    k_out, ydot, xdot = split_k(kc, k)
    y0 = b.mul(ydot, r["b_y_stride"])
    y = b.add(y0, r["b_y_offset"])
    x0 = b.mul(xdot, r["b_x_stride"])
    x = b.add(x0, r["b_x_offset"])
    valid = all_of(kc, [below(kc, y, p.Y), below(kc, x, p.X), below(kc, mn, p.cpg), below_value(kc, k, r["gemm_k"])])
    k_abs = add_opt(kc, k_out, group_base(kc, p.kpg))
    ky = mul_c(kc, k_abs, p.Y)
    row = b.add(ky, y)
    rx = mul_c(kc, row, p.X)
    tap = b.add(rx, x)
    base = mul_c(kc, tap, p.cpg)
    off = b.add(base, mn)
    return off, valid


def desc_d(kc: Kc, m: Value, n: Value) -> tuple[Value, Value]:
    """dX (NHWC) at (m, c = n): hi = htl*d_h_stride + d_h_offset, likewise wi."""
    b, p, r = kc.b, kc.problem, kc.record
    img, htl, wtl = split_m(kc, m)
    h0 = b.mul(htl, r["d_h_stride"])
    hi = b.add(h0, r["d_h_offset"])
    w0 = b.mul(wtl, r["d_w_stride"])
    wi = b.add(w0, r["d_w_offset"])
    valid = all_of(kc, [below(kc, hi, p.Hi), below(kc, wi, p.Wi), below_value(kc, m, r["gemm_m"]), below(kc, n, p.cpg)])
    nh = mul_c(kc, img, p.Hi)
    row = b.add(nh, hi)
    rw = mul_c(kc, row, p.Wi)
    pixel = b.add(rw, wi)
    base = mul_c(kc, pixel, p.C)
    grouped = add_opt(kc, base, group_base(kc, p.cpg))
    off = b.add(grouped, n)
    return off, valid


def operands(kc: Kc) -> Operands:
    s = kc.spec
    vec_a, vec_b, _ = load_vectors(kc)
    ta = m_outer_tile(kc, "a", s.dtype_a, s.tile_m, vec_a, "col")
    if s.lds_k_outer:
        tb = k_outer_tile(kc, "b", s.dtype_b, s.tile_n, vec_b)
    else:
        tb = m_outer_tile(kc, "b", s.dtype_b, s.tile_n, vec_b, "row" if vec_b > 1 else "col")
    return Operands(ta, tb, desc_a, desc_b, kc.m0, kc.n0)
